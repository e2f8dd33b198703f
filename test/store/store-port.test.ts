/**
 * The store port, one suite for both adapters (issue #12): the embedded SQLite file and a real
 * PostgreSQL database. The event log (`append`, `events`, `transaction`, `follow`) and the snapshot
 * `state(id)`, which always equals the fold of the issue's events (issue #3); leases; stage commits;
 * the cycle's call counter; the reply cache; issues and the wiki. Clocks are injected where the
 * store reads one; PostgreSQL leases read the database's clock, so the suite ages the rows instead.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AdversarialState } from "../../src/contracts/concern.js";
import type { NewEvent } from "../../src/contracts/events.js";
import type { PlanRow, StageCommit, Store, StoredEvent } from "../../src/store/port.js";
import { foldState } from "../../src/store/state.js";
import { tickingClock } from "../support/sqlite-home.js";
import { BACKENDS, type Backend } from "../support/store-backends.js";
import { addressed, arbEvent, completed, concern, forwarded, ISSUES, label, modelCall, resolution, stageRun, started, unstamped } from "./fixtures.js";

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

const plan = (issue: string, over: Partial<PlanRow> = {}): PlanRow => ({
  issue_id: issue,
  cycle: 1,
  status: "planning",
  route: null,
  route_reason: null,
  calls: 0,
  cost_usd: 0,
  concern_seq: 0,
  ...over,
});

/** The events of a finished stage, as the stage runner commits them. */
function stageEvents(issue: string, stage: string, cycle: number, note = "x"): NewEvent[] {
  return [started(issue, stage), forwarded(issue, concern(`PLAN-TESTER-${note}`)), completed(issue, stageRun(stage, { cycle }))];
}

describe.each(BACKENDS)("the store port on %s", (name, make) => {
  let backend: Backend;
  beforeEach(() => {
    backend = make();
  });
  afterEach(async () => {
    await backend.cleanup();
  });
  const store = (opts: Parameters<Backend["open"]>[0] = { clock: tickingClock() }) => backend.open(opts);
  const runs = name === "postgres" ? 30 : 100;

  describe("append / events", () => {
    it("stamps `at` from its clock on append and returns the stored event with its seq", async () => {
      const s = await store();
      const [e, ...more] = await s.append([started("i1", "discover")]);
      expect(more).toEqual([]);
      expect(e).toEqual({ ...started("i1", "discover"), at: "2026-05-17T12:00:00.000Z", seq: expect.any(Number) });
      expect(await s.events()).toEqual([e]);
      expect(await s.lastSeq()).toBe(e?.seq);
    });

    it("keeps an event's keys in the contract's order: type, at, issue_id, then the rest as given", async () => {
      const s = await store();
      await s.append([forwarded("i1", concern("A"))]);
      const [e] = await s.events();
      expect(Object.keys(e ?? {})).toEqual(["type", "at", "issue_id", "concern", "reason", "seq"]);
      expect(Object.keys(e?.type === "ConcernForwarded" ? e.concern : {})).toEqual(Object.keys(concern("A")));
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

    it("pages by size (maxBytes): a page stops once its events hold that much stored JSON; the first event comes whatever its size", async () => {
      const s = await store();
      const big = (n: number, size: number): NewEvent => ({
        type: "IssuePlanFailed",
        issue_id: "i1",
        cycle: 1,
        attempt: n,
        error: "x".repeat(size),
        retry_at: null,
      });
      const all = await s.append([big(1, 10_000), big(2, 10_000), big(3, 10_000), big(4, 50_000), big(5, 10)]);
      const seqs = all.map((e) => e.seq);
      // ~10 KB each: a 25 KB page holds three (the third crosses the bound), never the whole log.
      expect((await s.events({ maxBytes: 25_000 })).map((e) => e.seq)).toEqual(seqs.slice(0, 3));
      expect((await s.events({ after: seqs[2], maxBytes: 1_000 })).map((e) => e.seq)).toEqual([seqs[3]]); // one event larger than the page
      expect((await s.events({ after: seqs[2], maxBytes: 1_000_000, limit: 1 })).map((e) => e.seq)).toEqual([seqs[3]]); // the count bound still holds
      expect((await s.events({ issueId: "i1", after: seqs[3], maxBytes: 1 })).map((e) => e.seq)).toEqual([seqs[4]]);
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
        { type: "IssuePlanFailed", issue_id: "i1", cycle: 2, attempt: 1, error: "provider local is down", retry_at: "2026-05-17T12:05:00.000Z" },
      ]);
      expect(await s.events({ issueId: "i1" })).toEqual([
        e,
        expect.objectContaining({ type: "IssuePlanFailed", attempt: 1, retry_at: "2026-05-17T12:05:00.000Z" }),
      ]);
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

  describe("transaction", () => {
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
      await s.savePlan(plan("i1", { concern_seq: 1 }));
      const planBefore = await s.plan("i1");
      await expect(
        s.transaction(async (tx) => {
          await tx.append([addressed("i1", resolution("A")), modelCall("i1", { cost_usd: 0.5 })]);
          await tx.savePlan({ ...(planBefore as PlanRow), status: "ready" });
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

  describe("state: the snapshot always equals the fold of the issue's events", () => {
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
      const s = await store();
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ events: fc.array(arbEvent, { minLength: 0, maxLength: 4 }), how: fc.constantFrom("append", "commit", "rollback" as const) }), {
            maxLength: 15,
          }),
          async (batches) => {
            await backend.reset(s);
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
          },
        ),
        { numRuns: runs },
      );
    });

    it("the snapshot built incrementally equals a fresh fold when a second process reopens the same storage (property)", async () => {
      const seed = await store();
      await fc.assert(
        fc.asyncProperty(fc.array(arbEvent, { maxLength: 20 }), fc.nat({ max: 20 }), async (events, cut) => {
          await backend.reset(seed);
          // A first process appends part of the events, a second (the same storage, opened afresh) the rest.
          const first = await backend.reopen(seed);
          await first.append(events.slice(0, cut));
          await first.close();
          const second = await backend.reopen(seed);
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
    });
  });

  describe("follow", () => {
    it("hands every committed event after `after` to the follower, in seq order, old and new alike", async () => {
      const s = await store();
      const [skip] = await s.append([label("i1", 0)]);
      const early = await s.append([label("i1", 1), label(null, 2)]);
      const seen: StoredEvent[] = [];
      let done: () => void = () => undefined;
      const all = new Promise<void>((resolve) => (done = resolve));
      const stop = s.follow(skip?.seq ?? 0, (e) => {
        seen.push(e);
        if (seen.length >= 4) done();
      });
      try {
        await expect(
          s.transaction(async (tx) => {
            await tx.append([label("i1", 99)]);
            throw new Error("rolled back");
          }),
        ).rejects.toThrow();
        const late = await s.append([label("i2", 3), label("i1", 4)]);
        await all;
        expect(seen).toEqual([...early, ...late]);
      } finally {
        stop();
      }
    });

    it("sees events committed by another process sharing the store, and nothing after stop()", async () => {
      const s = await store();
      const other = await backend.reopen(s);
      const seen: StoredEvent[] = [];
      let done: () => void = () => undefined;
      const two = new Promise<void>((resolve) => (done = resolve));
      const stop = s.follow(0, (e) => {
        seen.push(e);
        if (seen.length === 2) done();
      });
      const written = await other.append([label("i1", 1)]);
      written.push(...(await other.transaction((tx) => tx.append([label("i2", 2)]))));
      await two;
      stop();
      await other.append([label("i1", 3)]);
      await new Promise((r) => setTimeout(r, 300));
      expect(seen).toEqual(written);
    });
  });

  describe("lease: one planner per issue (docs/issue.md)", () => {
    const TTL = 60_000;
    const A = { id: "run-a", host: "alpha.example", pid: 1111 };
    const B = { id: "run-b", host: "beta.example", pid: 2222 };
    const C = { id: "run-c", host: "gamma.example", pid: 3333 };
    const holderOf = (h: typeof A) => ({ id: h.id, host: h.host, pid: h.pid, since: expect.any(String), renewed: expect.any(String) });

    it("A acquires; B is refused with the holder; after the TTL B takes over; A's renew then fails; release frees it", async () => {
      // Two processes on the same storage (on SQLite, with one clock the test moves).
      const a = await backend.open();
      const b = await backend.reopen(a);

      expect(await a.lease.acquire("7", A, TTL)).toEqual({ ok: true, tookOver: false });
      await backend.ageLeases(a, 1_000);
      const refused = await b.lease.acquire("7", B, TTL);
      expect(refused).toEqual({ ok: false, holder: holderOf(A) });
      const since = refused.ok ? "" : refused.holder.since;
      expect(refused.ok ? "" : refused.holder.renewed).toBe(since);

      // Another issue is free.
      expect(await b.lease.acquire("8", B, TTL)).toEqual({ ok: true, tookOver: false });

      // A renews: the lease stays A's while it keeps renewing within the TTL.
      await backend.ageLeases(a, TTL - 10_000);
      expect(await a.lease.renew("7", A.id)).toBe(true);
      await backend.ageLeases(a, TTL - 10_000);
      const still = await b.lease.acquire("7", B, TTL);
      expect(still).toEqual({ ok: false, holder: holderOf(A) });
      if (!still.ok) expect(Date.parse(still.holder.renewed)).toBeGreaterThan(Date.parse(still.holder.since));

      // A stops renewing: once the TTL has passed, B takes it over.
      await backend.ageLeases(a, TTL);
      expect(await b.lease.acquire("7", B, TTL)).toEqual({ ok: true, tookOver: true });
      expect(await a.lease.renew("7", A.id)).toBe(false);
      expect(await b.lease.renew("7", B.id)).toBe(true);
      expect(await a.lease.acquire("7", A, TTL)).toEqual({ ok: false, holder: holderOf(B) });

      // Releasing a lease that is not yours changes nothing.
      await a.lease.release("7", A.id);
      expect(await a.lease.acquire("7", C, TTL)).toMatchObject({ ok: false, holder: { host: B.host, pid: B.pid } });

      // The holder releases: the next planner gets it without a takeover.
      await b.lease.release("7", B.id);
      expect(await b.lease.renew("7", B.id)).toBe(false);
      expect(await a.lease.acquire("7", C, TTL)).toEqual({ ok: true, tookOver: false });
    });

    it("the holder acquiring again keeps its lease (no takeover); a holder known to be dead is taken over at once", async () => {
      const s = await backend.open();
      expect(await s.lease.acquire("1", A, TTL)).toEqual({ ok: true, tookOver: false });
      await backend.ageLeases(s, TTL * 3);
      expect(await s.lease.acquire("1", A, TTL)).toEqual({ ok: true, tookOver: false });
      expect(await s.lease.acquire("1", B, TTL)).toMatchObject({ ok: false, holder: { host: A.host, pid: A.pid } });
      expect(await s.lease.acquire("1", B, TTL, A.id)).toEqual({ ok: true, tookOver: true });
    });
  });

  describe("commitStage: a stage is committed once per (issue, cycle, stage)", () => {
    it("the second commit of the same stage returns false and writes nothing", async () => {
      const s = await store();
      await s.savePlan(plan("1"));
      const commit: StageCommit = {
        issueId: "1",
        cycle: 1,
        stage: "plan_council",
        artifact: { name: "plan", content: "the plan" },
        events: stageEvents("1", "plan_council", 1, "001"),
        concernSeq: 1,
      };
      expect(await s.commitStage(commit)).toBe(true);
      const events = await s.events();
      expect(events.map((e) => e.type)).toEqual(["AdversarialStageStarted", "ConcernForwarded", "AdversarialStageCompleted"]);
      expect(await s.artifact("1", 1, "plan")).toBe("the plan");
      expect((await s.plan("1"))?.concern_seq).toBe(1);
      const state = await s.state("1");

      // A committer that lost track (a retry after a crash) commits the same stage again, with other content.
      const again: StageCommit = {
        ...commit,
        artifact: { name: "plan", content: "another plan" },
        events: stageEvents("1", "plan_council", 1, "002"),
        concernSeq: 2,
      };
      expect(await s.commitStage(again)).toBe(false);
      expect(await s.events()).toEqual(events);
      expect(await s.artifact("1", 1, "plan")).toBe("the plan");
      expect((await s.plan("1"))?.concern_seq).toBe(1);
      expect(await s.state("1")).toEqual(state);
    });

    it("two processes committing the same stage at once: exactly one commit lands", async () => {
      const a = await store();
      const b = await backend.reopen(a);
      await a.savePlan(plan("1"));
      const commit = (s: Store, note: string) =>
        s.commitStage({ issueId: "1", cycle: 1, stage: "discover", events: stageEvents("1", "discover", 1, note), concernSeq: 1 });
      const results = await Promise.all([commit(a, "a"), commit(b, "b"), commit(a, "c"), commit(b, "d")]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await a.events({ types: ["AdversarialStageCompleted"] })).toHaveLength(1);
      await expectSnapshotIsFold(a, "1");
    });

    it("another stage, another cycle or another issue is a commit of its own", async () => {
      const s = await store();
      await s.savePlan(plan("1"));
      await s.savePlan(plan("2"));
      const base = { issueId: "1", cycle: 1, stage: "discover", events: stageEvents("1", "discover", 1, "001"), concernSeq: 1 };
      expect(await s.commitStage(base)).toBe(true);
      expect(await s.commitStage({ ...base, stage: "shape", events: stageEvents("1", "shape", 1, "002"), concernSeq: 2 })).toBe(true);
      expect(await s.commitStage({ ...base, cycle: 2, events: stageEvents("1", "discover", 2, "003"), concernSeq: 3 })).toBe(true);
      expect(await s.commitStage({ ...base, issueId: "2", events: stageEvents("2", "discover", 1, "004"), concernSeq: 1 })).toBe(true);
      expect(
        (await s.events({ types: ["AdversarialStageCompleted"] })).map((e) => [
          e.issue_id,
          e.type === "AdversarialStageCompleted" ? `${e.stage}/${e.cycle}` : "",
        ]),
      ).toEqual([
        ["1", "discover/1"],
        ["1", "shape/1"],
        ["1", "discover/2"],
        ["2", "discover/1"],
      ]);
      expect((await s.plan("1"))?.concern_seq).toBe(3);
      // The concern counter never goes back (ids are never reused).
      expect(await s.commitStage({ ...base, stage: "spec", events: stageEvents("1", "spec", 1, "005"), concernSeq: 1 })).toBe(true);
      expect((await s.plan("1"))?.concern_seq).toBe(3);
    });
  });

  describe("ModelCall events count towards the cycle's budget, in the same transaction", () => {
    it("a network call (cached: false) adds one call and its cost to the plan row; a cache hit adds nothing", async () => {
      const s = await store();
      await s.savePlan(plan("1", { calls: 2, cost_usd: 0.5 }));
      await s.savePlan(plan("2"));
      await s.append([modelCall("1", { cost_usd: 0.25 })]);
      expect(await s.plan("1")).toMatchObject({ calls: 3, cost_usd: 0.75 });
      await s.append([modelCall("1", { cached: true, cost_usd: 0.25 })]);
      expect(await s.plan("1")).toMatchObject({ calls: 3, cost_usd: 0.75 });
      // A model with no known price still counts as a call.
      await s.append([modelCall("1", { cost_usd: null }), modelCall("1")]);
      expect(await s.plan("1")).toMatchObject({ calls: 5, cost_usd: 0.75 });
      // Other issues' rows and issue-less calls (the gate, `run`) are untouched.
      await s.append([modelCall(null, { cost_usd: 1 }), label("1", 1)]);
      expect(await s.plan("1")).toMatchObject({ calls: 5, cost_usd: 0.75 });
      expect(await s.plan("2")).toMatchObject({ calls: 0, cost_usd: 0 });
    });

    it("inside a transaction the counter moves with the event, and rolls back with it", async () => {
      const s = await store();
      await s.savePlan(plan("1"));
      await expect(
        s.transaction(async (tx) => {
          await tx.append([modelCall("1", { cost_usd: 0.1 })]);
          expect(await tx.plan("1")).toMatchObject({ calls: 1, cost_usd: 0.1 });
          throw new Error("killed mid-stage");
        }),
      ).rejects.toThrow("killed mid-stage");
      expect(await s.plan("1")).toMatchObject({ calls: 0, cost_usd: 0 });
      expect(await s.events()).toEqual([]);

      await s.transaction(async (tx) => {
        await tx.append([modelCall("1", { cost_usd: 0.1 }), modelCall("1", { cost_usd: 0.2 })]);
      });
      const row = await s.plan("1");
      expect(row?.calls).toBe(2);
      expect(row?.cost_usd).toBeCloseTo(0.3, 10);
    });

    it("one append of several issues' calls and stage events: each issue's counter and snapshot move as if appended one by one, to the last bit", async () => {
      const s = await store();
      await s.savePlan(plan("1", { cost_usd: 0.1 }));
      await s.savePlan(plan("2"));
      const batch = [
        modelCall("1", { cost_usd: 0.2 }),
        started("2", "plan"),
        modelCall("2", { cost_usd: 0.7 }),
        modelCall("1", { cost_usd: 0.3 }),
        forwarded("2", concern("PLAN-TESTER-001")),
        modelCall("1", { cached: true, cost_usd: 5 }),
      ];
      const stored = await s.append(batch);
      expectIncreasingSeq(stored);
      expect(await s.events()).toEqual(stored);
      // (0.1 + 0.2) + 0.3 is 0.6000000000000001: the dollars are added in turn, never summed first (0.1 + 0.5 = 0.6).
      expect((await s.plan("1"))?.cost_usd).toBe(0.1 + 0.2 + 0.3);
      expect(await s.plan("1")).toMatchObject({ calls: 2 });
      expect(await s.plan("2")).toMatchObject({ calls: 1, cost_usd: 0.7 });
      expect((await expectSnapshotIsFold(s, "2")).pending_concerns.map((c) => c.id)).toEqual(["PLAN-TESTER-001"]);
    });

    it("the count survives closing and reopening the store (a killed run resumes with its budget spent)", async () => {
      const first = await store();
      await first.savePlan(plan("1"));
      await first.append([modelCall("1", { cost_usd: 0.5 }), modelCall("1", { cost_usd: 0.5 })]);
      const second = await backend.reopen(first);
      await first.close();
      expect(await second.plan("1")).toMatchObject({ calls: 2, cost_usd: 1 });
    });

    it("calls from two processes on one issue all count (the budget is the store's, not a worker's)", async () => {
      const a = await store();
      const b = await backend.reopen(a);
      await a.savePlan(plan("1"));
      await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).append([modelCall("1", { cost_usd: 0.01 })])));
      const row = await b.plan("1");
      expect(row?.calls).toBe(20);
      expect(row?.cost_usd).toBeCloseTo(0.2, 10);
    });
  });

  describe("cache", () => {
    const reply = (text: string) => ({ text, input_tokens: 1, output_tokens: 1, finish_reason: "stop" });
    const meta = { provider: "p", model: "m" };
    const DAY = 86_400_000;

    it("clear(olderThanDays) removes only older replies and returns how many it removed; clear() removes all", async () => {
      let t = Date.parse("2026-05-17T12:00:00.000Z");
      const s = await store({ clock: () => new Date(t) });
      await s.cache.put("old-1", reply("a"), meta);
      await s.cache.put("old-2", reply("b"), meta);
      t += 10 * DAY;
      await s.cache.put("mid", reply("c"), meta);
      t += 5 * DAY;
      await s.cache.put("new", reply("d"), meta);
      expect(await s.cache.count()).toBe(4);

      expect(await s.cache.clear(7)).toBe(2);
      expect(await s.cache.count()).toBe(2);
      expect(await s.cache.get("old-1")).toBeUndefined();
      expect(await s.cache.get("mid")).toEqual(reply("c"));
      expect(await s.cache.clear(7)).toBe(0);

      expect(await s.cache.clear()).toBe(2);
      expect(await s.cache.count()).toBe(0);
      expect(await s.cache.clear()).toBe(0);
    });

    it("put replaces the reply for a key; a second process reads it", async () => {
      const s = await store();
      await s.cache.put("k", reply("first"), meta);
      await s.cache.put("k", reply("second"), meta);
      expect(await s.cache.get("k")).toEqual(reply("second"));
      expect(await s.cache.count()).toBe(1);
      expect(await (await backend.reopen(s)).cache.get("k")).toEqual(reply("second"));
    });
  });

  describe("issues and the wiki", () => {
    it("issues get increasing ids from 1, labels are kept in order without duplicates, and setLabels replaces them", async () => {
      const s = await store();
      const one = await s.issues.create({ title: "First", body: "b1", labels: ["dissent-find", "bug", "bug"] });
      const two = await (await backend.reopen(s)).issues.create({ title: "Second", body: "", labels: [] });
      expect([one.id, two.id]).toEqual(["1", "2"]);
      expect(one.labels).toEqual(["dissent-find", "bug"]);
      await s.issues.setLabels("1", ["dissent-plan", "bug"]);
      expect(await s.issues.get("1")).toMatchObject({ id: "1", title: "First", body: "b1", labels: ["dissent-plan", "bug"] });
      expect(await s.issues.get("3")).toBeUndefined();
      expect((await s.issues.list()).map((i) => i.id)).toEqual(["1", "2"]);
    });

    it("wiki entries are put, replaced and listed in file-name order", async () => {
      const s = await store();
      await s.wiki.put({ id: "retry-b", text: "B" });
      await s.wiki.put({ id: "retry", text: "A" });
      await s.wiki.put({ id: "retry-b", text: "B2" });
      expect(await s.wiki.list()).toEqual([
        { id: "retry-b", text: "B2" },
        { id: "retry", text: "A" },
      ]);
      expect(await s.wiki.get("retry")).toEqual({ id: "retry", text: "A" });
      expect(await s.wiki.get("nope")).toBeUndefined();
    });
  });
});
