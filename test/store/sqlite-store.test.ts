/**
 * The SQLite adapter of the store port (src/store/sqlite.ts): leases, stage commits, the cycle's
 * call counter, the reply cache's age, and what a damaged file gives. Clocks are injected: no test
 * here waits on real time.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { exitCodeOf } from "../../src/cli/exit-codes.js";
import type { NewEvent } from "../../src/contracts/events.js";
import { ConfigError, StoreError } from "../../src/errors.js";
import type { PlanRow, StageCommit, Store } from "../../src/store/port.js";
import { memoryStore, openSqliteStore, storeFile } from "../../src/store/sqlite.js";
import { manualClock } from "../support/sqlite-home.js";
import { completed, concern, forwarded, label, modelCall, stageRun, started } from "./fixtures.js";

let dir: string;
const opened: Store[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "dissent-sqlite-store-"));
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function openHome(home: string, clock?: () => Date): Promise<Store> {
  const s = await openSqliteStore(home, clock ? { clock } : {});
  opened.push(s);
  return s;
}

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

describe("store.lease: one planner per issue (CONTRACT §4 r2)", () => {
  const TTL = 60_000;
  const A = { id: "run-a", host: "alpha.example", pid: 1111 };
  const B = { id: "run-b", host: "beta.example", pid: 2222 };
  const C = { id: "run-c", host: "gamma.example", pid: 3333 };

  it("A acquires; B is refused with the holder; after the TTL B takes over; A's renew then fails; release frees it", async () => {
    const clock = manualClock();
    const home = join(dir, "home");
    // Two processes on the same file, sharing one (injected) clock.
    const a = await openHome(home, clock.now);
    const b = await openHome(home, clock.now);
    const since = clock.now().toISOString();

    expect(await a.lease.acquire("7", A, TTL)).toEqual({ ok: true, tookOver: false });
    clock.advance(1_000);
    const refused = await b.lease.acquire("7", B, TTL);
    expect(refused).toEqual({ ok: false, holder: { id: A.id, host: A.host, pid: A.pid, since, renewed: since } });

    // Another issue is free.
    expect(await b.lease.acquire("8", B, TTL)).toEqual({ ok: true, tookOver: false });

    // A renews: the lease stays A's while it keeps renewing within the TTL.
    clock.advance(TTL - 10_000);
    expect(await a.lease.renew("7", A.id)).toBe(true);
    const renewedAt = clock.now().toISOString();
    clock.advance(TTL - 10_000);
    expect(await b.lease.acquire("7", B, TTL)).toEqual({ ok: false, holder: { id: A.id, host: A.host, pid: A.pid, since, renewed: renewedAt } });

    // A stops renewing: once the TTL has passed, B takes it over.
    clock.advance(TTL);
    expect(await b.lease.acquire("7", B, TTL)).toEqual({ ok: true, tookOver: true });
    expect(await a.lease.renew("7", A.id)).toBe(false);
    expect(await b.lease.renew("7", B.id)).toBe(true);
    const bSince = clock.now().toISOString();
    expect(await a.lease.acquire("7", A, TTL)).toEqual({ ok: false, holder: { id: B.id, host: B.host, pid: B.pid, since: bSince, renewed: bSince } });

    // Releasing a lease that is not yours changes nothing.
    await a.lease.release("7", A.id);
    expect(await a.lease.acquire("7", C, TTL)).toMatchObject({ ok: false, holder: { host: B.host, pid: B.pid } });

    // The holder releases: the next planner gets it without a takeover.
    await b.lease.release("7", B.id);
    expect(await b.lease.renew("7", B.id)).toBe(false);
    expect(await a.lease.acquire("7", C, TTL)).toEqual({ ok: true, tookOver: false });
  });

  it("the holder acquiring again keeps its lease (no takeover)", async () => {
    const clock = manualClock();
    const s = await memoryStore({ clock: clock.now });
    opened.push(s);
    expect(await s.lease.acquire("1", A, TTL)).toEqual({ ok: true, tookOver: false });
    clock.advance(TTL * 3);
    expect(await s.lease.acquire("1", A, TTL)).toEqual({ ok: true, tookOver: false });
    expect(await s.lease.acquire("1", B, TTL)).toMatchObject({ ok: false, holder: { host: A.host, pid: A.pid } });
  });
});

/** The events of a finished stage, as the stage runner commits them. */
function stageEvents(issue: string, stage: string, cycle: number, note = "x"): NewEvent[] {
  return [
    started(issue, stage),
    forwarded(issue, concern(`PLAN-TESTER-${note}`)),
    completed(issue, stageRun(stage, { cycle })),
  ];
}

describe("store.commitStage: a stage is committed once per (issue, cycle, stage)", () => {
  it("the second commit of the same stage returns false and writes nothing", async () => {
    const s = await openHome(join(dir, "home"));
    await s.savePlan(plan("1"));
    const commit: StageCommit = { issueId: "1", cycle: 1, stage: "plan_council", artifact: { name: "plan", content: "the plan" }, events: stageEvents("1", "plan_council", 1, "001"), concernSeq: 1 };
    expect(await s.commitStage(commit)).toBe(true);
    const events = await s.events();
    expect(events.map((e) => e.type)).toEqual(["AdversarialStageStarted", "ConcernForwarded", "AdversarialStageCompleted"]);
    expect(await s.artifact("1", 1, "plan")).toBe("the plan");
    expect((await s.plan("1"))?.concern_seq).toBe(1);
    const state = await s.state("1");

    // A committer that lost track (a retry after a crash) commits the same stage again, with other content.
    const again: StageCommit = { ...commit, artifact: { name: "plan", content: "another plan" }, events: stageEvents("1", "plan_council", 1, "002"), concernSeq: 2 };
    expect(await s.commitStage(again)).toBe(false);
    expect(await s.events()).toEqual(events);
    expect(await s.artifact("1", 1, "plan")).toBe("the plan");
    expect((await s.plan("1"))?.concern_seq).toBe(1);
    expect(await s.state("1")).toEqual(state);
  });

  it("another stage, another cycle or another issue is a commit of its own", async () => {
    const s = await openHome(join(dir, "home"));
    await s.savePlan(plan("1"));
    await s.savePlan(plan("2"));
    const base = { issueId: "1", cycle: 1, stage: "discover", events: stageEvents("1", "discover", 1, "001"), concernSeq: 1 };
    expect(await s.commitStage(base)).toBe(true);
    expect(await s.commitStage({ ...base, stage: "shape", events: stageEvents("1", "shape", 1, "002"), concernSeq: 2 })).toBe(true);
    expect(await s.commitStage({ ...base, cycle: 2, events: stageEvents("1", "discover", 2, "003"), concernSeq: 3 })).toBe(true);
    expect(await s.commitStage({ ...base, issueId: "2", events: stageEvents("2", "discover", 1, "004"), concernSeq: 1 })).toBe(true);
    expect((await s.events({ types: ["AdversarialStageCompleted"] })).map((e) => [e.issue_id, e.type === "AdversarialStageCompleted" ? `${e.stage}/${e.cycle}` : ""])).toEqual([
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
    const s = await openHome(join(dir, "home"));
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
    const s = await openHome(join(dir, "home"));
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

  it("the count survives closing and reopening the store (a killed run resumes with its budget spent)", async () => {
    const home = join(dir, "home");
    const first = await openSqliteStore(home);
    await first.savePlan(plan("1"));
    await first.append([modelCall("1", { cost_usd: 0.5 }), modelCall("1", { cost_usd: 0.5 })]);
    await first.close();
    const second = await openHome(home);
    expect(await second.plan("1")).toMatchObject({ calls: 2, cost_usd: 1 });
  });
});

describe("store.cache", () => {
  const reply = (text: string) => ({ text, input_tokens: 1, output_tokens: 1, finish_reason: "stop" });
  const meta = { provider: "p", model: "m" };
  const DAY = 86_400_000;

  it("clear(olderThanDays) removes only older replies and returns how many it removed; clear() removes all", async () => {
    const clock = manualClock();
    const s = await openHome(join(dir, "home"), clock.now);
    await s.cache.put("old-1", reply("a"), meta);
    await s.cache.put("old-2", reply("b"), meta);
    clock.advance(10 * DAY);
    await s.cache.put("mid", reply("c"), meta);
    clock.advance(5 * DAY);
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

  it("put replaces the reply for a key", async () => {
    const s = await openHome(join(dir, "home"));
    await s.cache.put("k", reply("first"), meta);
    await s.cache.put("k", reply("second"), meta);
    expect(await s.cache.get("k")).toEqual(reply("second"));
    expect(await s.cache.count()).toBe(1);
  });
});

describe("a store file that cannot be used is a StoreError naming it", () => {
  async function failure(home: string): Promise<unknown> {
    return openSqliteStore(home).then(
      async (s) => {
        await s.close();
        return undefined;
      },
      (e: unknown) => e,
    );
  }

  it("a garbage dissent.db: StoreError naming the file, exit 1, no internal error", async () => {
    const home = join(dir, "home");
    mkdirSync(home);
    const file = storeFile(home);
    writeFileSync(file, "this is not a database, just some text someone saved here\n".repeat(200));
    const err = await failure(home);
    expect(StoreError.isInstance(err), String(err)).toBe(true);
    expect((err as Error).message).toContain(file);
    expect((err as Error).message).toMatch(/damaged|not a database/);
    expect((err as Error).message).not.toContain("\n");
    expect(exitCodeOf(err)).toBe(1);
  });

  it("a dissent.db that is a folder is a StoreError; a home that is a file is a ConfigError (DISSENT_HOME is configuration); both name it", async () => {
    const home = join(dir, "home");
    mkdirSync(join(home, "dissent.db"), { recursive: true });
    const folder = await failure(home);
    expect(StoreError.isInstance(folder), String(folder)).toBe(true);
    expect((folder as Error).message).toContain(storeFile(home));

    const fileHome = join(dir, "home-file");
    writeFileSync(fileHome, "not a folder");
    const notDir = await failure(fileHome);
    expect(ConfigError.isInstance(notDir), String(notDir)).toBe(true);
    expect((notDir as Error).message).toContain(fileHome);
  });
});
