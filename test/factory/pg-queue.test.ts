/**
 * The factory's queue on PostgreSQL (src/factory/pg-queue.ts), against a real server: one job per
 * issue and cycle, each poll enqueues a round at most once (a queued or running round is not sent
 * again, and enqueueing never waits on a running one); a taken job is invisible to other workers
 * until it ends; a worker whose connection drops gives its job back at once; an outcome's events
 * and the job's state commit together, or not at all.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { pgBossQueue, BOSS_SCHEMA, PLAN_QUEUE } from "../../src/factory/pg-queue.js";
import type { WorkQueue } from "../../src/factory/queue.js";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres.js";
import { freshDatabase } from "../support/postgres.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function setup(workers = 2): Promise<{ store: PostgresStore; queues: WorkQueue[]; url: string }> {
  const url = await freshDatabase();
  const store = await openPostgresStore(url);
  closers.push(() => store.close());
  const queues: WorkQueue[] = [];
  for (let i = 0; i < workers; i++) {
    const q = await pgBossQueue({ store, concurrency: 2, silenceMs: 60_000, heartbeatMs: 10_000, onError: (e) => console.error(e) });
    closers.push(() => q.close());
    queues.push(q);
  }
  return { store, queues, url };
}

async function jobStates(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ key: string; state: string }>(
      `SELECT singleton_key AS key, state FROM ${BOSS_SCHEMA}.job WHERE name = $1 ORDER BY created_on, singleton_key`,
      [PLAN_QUEUE],
    );
    return r.rows.map((row) => `${row.key}:${row.state}`);
  } finally {
    await c.end();
  }
}

describe("the pg-boss work queue", () => {
  it("enqueues a round once however often and by however many workers it is polled; another cycle is another job", async () => {
    const { queues, url } = await setup();
    const [a, b] = queues as [WorkQueue, WorkQueue];
    expect(
      await a.enqueue([
        { issueId: "1", cycle: 1 },
        { issueId: "2", cycle: 1 },
      ]),
    ).toHaveLength(2);
    const again = await Promise.all([
      a.enqueue([{ issueId: "1", cycle: 1 }]),
      b.enqueue([
        { issueId: "1", cycle: 1 },
        { issueId: "2", cycle: 1 },
      ]),
    ]);
    expect(again.flat()).toEqual([]);
    expect(await b.enqueue([{ issueId: "1", cycle: 2 }])).toEqual([{ issueId: "1", cycle: 2 }]);
    expect(await jobStates(url)).toEqual(["1#1:created", "2#1:created", "1#2:created"]);
  });

  it("a taken job is invisible to other workers, is not enqueued again while it runs (without waiting on it), and can be enqueued once it ends", async () => {
    const { queues, url } = await setup();
    const [a, b] = queues as [WorkQueue, WorkQueue];
    await a.enqueue([{ issueId: "7", cycle: 1 }]);
    const job = await a.take();
    expect(job).toMatchObject({ issueId: "7", cycle: 1 });
    expect(await b.take()).toBeUndefined();
    const t0 = Date.now();
    expect(await b.enqueue([{ issueId: "7", cycle: 1 }])).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(900); // never waits out the running round
    await job?.finish();
    expect(await jobStates(url)).toEqual(["7#1:completed"]);
    expect(await b.enqueue([{ issueId: "7", cycle: 1 }])).toHaveLength(1);
  });

  it("a worker whose connection drops (kill -9) gives its job back at once", async () => {
    const { store, queues, url } = await setup(1);
    const [b] = queues as [WorkQueue];
    await b.enqueue([{ issueId: "3", cycle: 1 }]);
    // Another worker takes the job in its own transaction, then its process dies.
    const boss = new (await import("pg-boss")).default({ connectionString: url, schema: BOSS_SCHEMA, schedule: false, supervise: false });
    boss.on("error", () => undefined);
    await boss.start();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query("BEGIN");
    const [taken] = await boss.fetch(PLAN_QUEUE, { db: { executeSql: (t: string, v: unknown[]) => c.query(t, v) } });
    expect(taken).toBeDefined();
    expect(await b.take()).toBeUndefined();
    const pid = (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
    c.on("error", () => undefined);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    await admin.end();
    await boss.stop({ graceful: false });
    const again = await b.take();
    expect(again).toMatchObject({ issueId: "3", cycle: 1 });
    await again?.finish();
    expect(await store.events()).toEqual([]);
  });

  it("the outcome's events and the job's completion commit together, or neither does", async () => {
    const { store, queues, url } = await setup(1);
    const [q] = queues as [WorkQueue];
    await q.enqueue([{ issueId: "5", cycle: 1 }]);
    const job = await q.take();
    await expect(
      job?.finish(async (tx) => {
        await tx.append([{ type: "IssuePlanFailed", issue_id: "5", cycle: 1, attempt: 1, error: "provider down", retry_at: null }]);
        throw new Error("crash between the event and the job");
      }),
    ).rejects.toThrow("crash between");
    expect(await store.events()).toEqual([]);
    expect(await jobStates(url)).toEqual(["5#1:created"]);

    const retried = await q.take();
    await retried?.finish(async (tx) => tx.append([{ type: "IssuePlanFailed", issue_id: "5", cycle: 1, attempt: 1, error: "provider down", retry_at: null }]));
    expect((await store.events()).map((e) => e.type)).toEqual(["IssuePlanFailed"]);
    expect(await jobStates(url)).toEqual(["5#1:completed"]);
  });

  it("a round queued again for later is not taken before then, and is one job", async () => {
    const { queues, url } = await setup(1);
    const [q] = queues as [WorkQueue];
    await q.enqueue([{ issueId: "9", cycle: 2 }]);
    const job = await q.take();
    await job?.finish(undefined, new Date(Date.now() + 60_000));
    expect(await q.take()).toBeUndefined();
    expect(await q.enqueue([{ issueId: "9", cycle: 2 }])).toEqual([]);
    expect(await jobStates(url)).toEqual(["9#2:completed", "9#2:created"]);
  });
});
