/**
 * The event log of the store port (src/store/sqlite.ts): `append`, `events`, `transaction`, and the
 * snapshot `state(id)`, which must always equal the fold of the issue's events (issue #3).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { AdversarialState } from "../../src/contracts/concern.js";
import type { NewEvent } from "../../src/contracts/events.js";
import type { Store, StoredEvent } from "../../src/store/port.js";
import { memoryStore, openSqliteStore } from "../../src/store/sqlite.js";
import { foldState } from "../../src/store/state.js";
import { tickingClock } from "../support/sqlite-home.js";
import { addressed, arbEvent, concern, forwarded, ISSUES, label, modelCall, resolution, started, unstamped } from "./fixtures.js";

const open: Store[] = [];
async function store(opts: Parameters<typeof memoryStore>[0] = { clock: tickingClock() }): Promise<Store> {
  const s = await memoryStore(opts);
  open.push(s);
  return s;
}
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** The invariant of issue #3: the saved snapshot always equals the fold of the issue's events. */
async function expectSnapshotIsFold(s: Store, issueId: string): Promise<AdversarialState> {
  const saved = await s.state(issueId);
  expect(saved).toEqual(foldState(await s.events({ issueId })));
  return saved;
}

const labelOf = (e: StoredEvent) => (e.type === "LabelChanged" ? e.labels[0] : e.type);
const expectIncreasingSeq = (events: StoredEvent[]) => {
  for (let i = 1; i < events.length; i++) expect((events[i] as StoredEvent).seq).toBeGreaterThan((events[i - 1] as StoredEvent).seq);
};

describe("store.append / store.events", () => {
  it("stamps `at` from its clock on append and returns the stored event with its seq", async () => {
    const s = await store();
    const [e, ...more] = await s.append([started("i1", "discover")]);
    expect(more).toEqual([]);
    expect(e).toEqual({ ...started("i1", "discover"), at: "2026-05-17T12:00:00.000Z", seq: expect.any(Number) });
    expect(await s.events()).toEqual([e]);
    expect(await s.lastSeq()).toBe(e?.seq);
  });

  it("lists events oldest first, in append order with seq increasing, even when the clock runs backwards", async () => {
    const s = await store({ clock: tickingClock(Date.parse("2026-05-17T12:00:00.000Z"), -60_000) });
    const appended: StoredEvent[] = [];
    for (const e of [label("i1", 1), label("i2", 2), started("i1", "discover"), label(null, 3)]) appended.push(...(await s.append([e])));
    appended.push(...(await s.append([label("i1", 4), label("i2", 5)])));
    const listed = await s.events();
    expect(listed).toEqual(appended);
    expect(listed.map(labelOf)).toEqual(["l1", "l2", "AdversarialStageStarted", "l3", "l4", "l5"]);
    expectIncreasingSeq(listed);
    expect(Date.parse(listed[0]?.at ?? "")).toBeGreaterThan(Date.parse(listed[5]?.at ?? ""));
    expect(await s.lastSeq()).toBe(listed.at(-1)?.seq);
  });

  it("an empty store has no events and lastSeq 0", async () => {
    const s = await store();
    expect(await s.events()).toEqual([]);
    expect(await s.lastSeq()).toBe(0);
    expect(await s.append([])).toEqual([]);
  });

  it("filters by issue, keeping the order; an issue with no events lists none", async () => {
    const s = await store();
    const [a1] = await s.append([label("i1", 1)]);
    await s.append([label("i2", 2), label(null, 3)]);
    const [a2] = await s.append([started("i1", "discover")]);
    expect(await s.events({ issueId: "i1" })).toEqual([a1, a2]);
    expect((await s.events({ issueId: "i2" })).map((e) => e.issue_id)).toEqual(["i2"]);
    expect(await s.events({ issueId: "nope" })).toEqual([]);
    expect(await s.events()).toHaveLength(4);
  });

  it("pages by seq (after, limit) and filters by type", async () => {
    const s = await store();
    const all = await s.append([label("i1", 1), started("i1", "discover"), label("i1", 2), modelCall("i1"), label("i2", 3)]);
    const seqs = all.map((e) => e.seq);
    expect((await s.events({ after: seqs[1] })).map((e) => e.seq)).toEqual(seqs.slice(2));
    expect((await s.events({ after: seqs[0], limit: 2 })).map((e) => e.seq)).toEqual(seqs.slice(1, 3));
    expect((await s.events({ types: ["LabelChanged"] })).map(labelOf)).toEqual(["l1", "l2", "l3"]);
    expect((await s.events({ issueId: "i1", types: ["LabelChanged", "ModelCall"], after: seqs[0] })).map(labelOf)).toEqual(["l2", "ModelCall"]);
    expect(await s.events({ after: await s.lastSeq() })).toEqual([]);
  });

  it("round-trips every field of an event through the store", async () => {
    const s = await store();
    const [e] = await s.append([
      {
        type: "ModelCall",
        issue_id: "i1",
        role: "plan.tester",
        provider: "anthropic",
        model: "m",
        route: "primary",
        cached: false,
        latency_ms: 12.5,
        input_tokens: 100,
        output_tokens: 20,
        cost_usd: 0.0125,
        request_hash: "abc",
        prompt_chars: 400,
        stage: "plan",
        round: 2,
        wiki_entries: ["w1"],
      },
    ]);
    expect(await s.events({ issueId: "i1" })).toEqual([e]);
  });

  it("redacts every string of an event before it is stored", async () => {
    const s = await store({ clock: tickingClock(), redact: (t) => t.replaceAll("sk-secret", "[REDACTED]") });
    const [e] = await s.append([forwarded("i1", concern("A", { evidence: "key sk-secret leaked", concern: "uses sk-secret" }))]);
    const [stored] = await s.events();
    expect(stored).toEqual(e);
    expect(JSON.stringify(stored)).not.toContain("sk-secret");
    expect((await s.state("i1")).pending_concerns[0]?.evidence).toBe("key [REDACTED] leaked");
  });

  it("keeps one store's events to that store", async () => {
    const a = await store();
    const b = await store();
    await a.append([label("i1", 1)]);
    expect(await b.events()).toEqual([]);
    expect(await b.lastSeq()).toBe(0);
  });
});

describe("store.transaction", () => {
  it("events appended in it land together, or none of them when it throws", async () => {
    const s = await store();
    await s.transaction(async (tx) => {
      await tx.append([label("i1", 1)]);
      await tx.append([label("i1", 2)]);
    });
    expect(await s.events()).toHaveLength(2);
    await expect(
      s.transaction(async (tx) => {
        await tx.append([label("i1", 3)]);
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect((await s.events()).map(labelOf)).toEqual(["l1", "l2"]);
    expect(await s.transaction(async () => 42)).toBe(42);
    // The store is usable after a rollback.
    await s.append([label("i1", 4)]);
    const listed = await s.events();
    expect(listed.map(labelOf)).toEqual(["l1", "l2", "l4"]);
    expectIncreasingSeq(listed);
  });

  it("a rolled-back transaction leaves the snapshot, the plan row and the artifacts as they were", async () => {
    const s = await store();
    await s.append([forwarded("i1", concern("A"))]);
    await s.savePlan({ issue_id: "i1", cycle: 1, status: "planning", route: null, route_reason: null, calls: 0, cost_usd: 0, concern_seq: 1 });
    const planBefore = await s.plan("i1");
    await expect(
      s.transaction(async (tx) => {
        await tx.append([addressed("i1", resolution("A")), modelCall("i1", { cost_usd: 0.5 })]);
        await tx.savePlan({ ...(planBefore as NonNullable<typeof planBefore>), status: "ready" });
        await tx.putArtifact("i1", 1, "plan", "a plan");
        // Inside the transaction the writes are visible to it.
        expect((await tx.plan("i1"))?.status).toBe("ready");
        throw new Error("disk full");
      }),
    ).rejects.toThrow("disk full");
    const s1 = await expectSnapshotIsFold(s, "i1");
    expect(s1.pending_concerns.map((c) => c.id)).toEqual(["A"]);
    expect(s1.addressed_concerns).toEqual([]);
    expect(await s.plan("i1")).toEqual(planBefore);
    expect(await s.artifact("i1", 1, "plan")).toBeUndefined();
    expect((await s.events()).map((e) => e.type)).toEqual(["ConcernForwarded"]);
  });

  it("a transaction that commits moves the snapshot with its events", async () => {
    const s = await store();
    await s.append([forwarded("i1", concern("A")), forwarded("i1", concern("B"))]);
    await s.transaction(async (tx) => {
      await tx.append([addressed("i1", resolution("A"))]);
      await tx.putArtifact("i1", 1, "plan", "a plan");
    });
    const st = await expectSnapshotIsFold(s, "i1");
    expect(st.pending_concerns.map((c) => c.id)).toEqual(["B"]);
    expect(await s.artifact("i1", 1, "plan")).toBe("a plan");
  });
});

describe("store.state: the snapshot always equals the fold of the issue's events", () => {
  it("an issue with no events has the empty state", async () => {
    const s = await store();
    expect(await expectSnapshotIsFold(s, "nobody")).toEqual(foldState([]));
  });

  it("keeps issues apart: one issue's events never touch another's state; events without an issue touch none", async () => {
    const s = await store();
    await s.append([forwarded("i1", concern("A")), forwarded("i2", concern("A", { severity: "LOW" })), addressed("i2", resolution("A"))]);
    await s.append([{ type: "ShippedWithKnownGap", issue_id: "i3", pr: 7, concerns: [], wiki_entries: [] }]);
    await s.append([forwarded(null, concern("B")), { type: "ShippedWithKnownGap", issue_id: null, pr: 8, concerns: [], wiki_entries: [] }]);
    const s1 = await expectSnapshotIsFold(s, "i1");
    const s2 = await expectSnapshotIsFold(s, "i2");
    await expectSnapshotIsFold(s, "i3");
    expect(s1.pending_concerns).toEqual([concern("A")]);
    expect(s1.addressed_concerns).toEqual([]);
    expect(s2.pending_concerns).toEqual([]);
    expect(s2.addressed_concerns).toEqual([resolution("A")]);
  });

  it("after every append and every transaction, committed or rolled back, over random event sequences (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ events: fc.array(arbEvent, { minLength: 0, maxLength: 4 }), how: fc.constantFrom("append", "commit", "rollback" as const) }), { maxLength: 15 }),
        async (batches) => {
          const s = await memoryStore({ clock: tickingClock() });
          try {
            const committed: NewEvent[] = [];
            for (const { events, how } of batches) {
              if (how === "append") await s.append(events);
              else {
                const run = s.transaction(async (tx) => {
                  for (const e of events) await tx.append([e]);
                  if (how === "rollback") throw new Error("rolled back");
                });
                if (how === "rollback") await expect(run).rejects.toThrow("rolled back");
                else await run;
              }
              if (how !== "rollback") committed.push(...events);
              for (const issue of ISSUES) await expectSnapshotIsFold(s, issue);
            }
            // Listing is oldest first and complete: what was committed, in the order appended.
            const listed = await s.events();
            expectIncreasingSeq(listed);
            expect(listed.map(unstamped)).toEqual(committed);
            for (const issue of ISSUES) expect((await s.events({ issueId: issue })).map(unstamped)).toEqual(committed.filter((e) => e.issue_id === issue));
          } finally {
            await s.close();
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("the snapshot built incrementally equals a fresh fold when a second process reopens the same file (property)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dissent-event-log-"));
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(arbEvent, { maxLength: 20 }), fc.nat({ max: 20 }), async (events, cut) => {
          const home = join(dir, `home-${run++}`);
          // A first process appends part of the events, a second (the same file, opened afresh) the rest.
          const first = await openSqliteStore(home);
          await first.append(events.slice(0, cut));
          await first.close();
          const second = await openSqliteStore(home);
          try {
            await second.append(events.slice(cut));
            for (const issue of ISSUES) await expectSnapshotIsFold(second, issue);
            expect((await second.events()).map(unstamped)).toEqual(events);
          } finally {
            await second.close();
          }
        }),
        { numRuns: 25 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("store.follow", () => {
  it("hands every committed event after `after` to the follower, in seq order, old and new alike", async () => {
    const s = await store();
    const [skip] = await s.append([label("i1", 0)]);
    const early = await s.append([label("i1", 1), label(null, 2)]);
    const seen: StoredEvent[] = [];
    const expected = 4;
    let done: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (done = resolve));
    const stop = s.follow(skip?.seq ?? 0, (e) => {
      seen.push(e);
      if (seen.length >= expected) done();
    });
    try {
      await expect(s.transaction(async (tx) => {
        await tx.append([label("i1", 99)]);
        throw new Error("rolled back");
      })).rejects.toThrow();
      const late = await s.append([label("i2", 3), label("i1", 4)]);
      await all;
      expect(seen).toEqual([...early, ...late]);
    } finally {
      stop();
    }
  });
});
