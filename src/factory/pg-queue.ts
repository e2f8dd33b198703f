import type PgBoss from "pg-boss";
import type { Pool, PoolClient } from "pg";
import { codeOf, StoreError } from "../errors.js";
import { checkout } from "../store/pg-client.js";
import type { PostgresStore, Query } from "../store/postgres.js";
import type { WorkQueue } from "./queue.js";
import { roundKey, type Round } from "./rounds.js";

/** pg-boss keeps its tables in a schema of its own, in the store's database (docs/factory.md: one service). */
export const BOSS_SCHEMA = "dissent_jobs";
/** The queue of planning rounds. */
export const PLAN_QUEUE = "dissent-plan";
/** The advisory lock a worker holds while it starts the queue. */
const START_LOCK = 7413;
/** How long an enqueue waits on a round another worker is running before it counts it as running. */
const ENQUEUE_LOCK_TIMEOUT = "1s";

export interface PgQueueOptions {
  store: PostgresStore;
  /** Rounds this process runs at once (one connection each, held while the round runs). */
  concurrency: number;
  /**
   * A worker's job connection that stays silent this long is closed by the server, and its round
   * goes back to the queue: how a machine that died is noticed. The worker speaks every `heartbeatMs`.
   */
  silenceMs: number;
  heartbeatMs: number;
  /** pg-boss's own errors (its maintenance, say): reported, never fatal. */
  onError: (e: unknown) => void;
  /**
   * The database went away (a connection of the queue's closed by the server, or refused): told once,
   * with the StoreError to stop the factory on — one line, exit 1; the round resumes on restart.
   */
  onLost?: (e: StoreError) => void;
}

/** Errors that mean the database itself is gone, not one statement that failed. */
export function isConnectionLoss(e: unknown): boolean {
  const code = String((e as { code?: unknown } | null)?.code ?? "");
  if (["57P01", "57P02", "57P03", "08000", "08003", "08006", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN"].includes(code))
    return true;
  return e instanceof Error && /Connection terminated|connection timeout|not queryable|terminating connection/i.test(e.message);
}

/** The queue's database failing is the store failing: one line naming it, and the factory stops (exit 1). */
function queueFailure(where: string, e: unknown, doing: string): StoreError {
  if (StoreError.isInstance(e)) return e;
  const detail = e instanceof Error ? e.message.split("\n")[0] : String(e);
  const code = String((e as { code?: unknown } | null)?.code ?? "");
  if (isConnectionLoss(e))
    return new StoreError(
      `lost PostgreSQL at ${where} while ${doing}${code ? ` (${code})` : ""}: ${detail}; restart the factory once it is back (the round resumes)`,
    );
  return new StoreError(`the factory's queue in ${where} failed while ${doing}: ${detail}`);
}

/** pg-boss's view of one connection: its multi-statement scripts pass through untouched. */
const bossDb = (q: Query): PgBoss.Db => ({ executeSql: (text: string, values: unknown[]) => q(text, values) });

/**
 * The factory's queue on PostgreSQL (ADR-011): pg-boss, one job per issue and cycle (its singleton
 * key, in a `short` queue: at most one queued job per key).
 *
 * A worker takes a job inside a transaction of its own and keeps it open while the round runs:
 * the job row stays locked, so no other worker can take it, and its `active` state is never
 * committed. When the worker's connection drops (`kill -9`, or a machine lost and its silent
 * connection closed by the server), PostgreSQL rolls the transaction back and the job is queued
 * again at once, for the next worker to take and resume. The outcome (IssuePlanFailed, or the round
 * queued again for later) and the job's completion commit together in that same transaction.
 *
 * Each poll enqueues a round at most once: a round already queued, or running (whose uncommitted
 * row still reads as queued), is not sent again; a send that would wait on a running round gives up
 * after a second and counts it as running.
 */
export async function pgBossQueue(o: PgQueueOptions): Promise<WorkQueue> {
  const [{ default: Boss }, { default: pg }] = await Promise.all([import("pg-boss"), import("pg")]);
  const boss = new Boss({ connectionString: o.store.url, schema: BOSS_SCHEMA, schedule: false, supervise: true, max: 2, application_name: "dissent-factory" });
  // The queue's database going away is the store's failure: one line and exit 1, never a stream of warnings (issue 20 item 1).
  let lostOnce = false;
  const lost = (e: unknown, doing: string) => {
    if (lostOnce) return;
    lostOnce = true;
    o.onLost?.(failed(e, doing));
  };
  boss.on("error", (e: unknown) => (isConnectionLoss(e) ? lost(e, "running its maintenance") : o.onError(e)));
  // Job connections are a pool of their own: a round holds one for its whole run, and must never
  // wait for one the rounds it runs beside are holding.
  const pool: Pool = new pg.Pool({
    connectionString: o.store.url,
    max: o.concurrency + 2,
    keepAlive: true,
    connectionTimeoutMillis: 10_000,
    idle_in_transaction_session_timeout: o.silenceMs,
    application_name: "dissent-factory-job",
  });
  pool.on("error", () => undefined); // a dropped idle connection is replaced; the next query reports a real failure
  const failed = (e: unknown, doing: string) => queueFailure(o.store.location, e, doing);
  try {
    // Workers starting at once on a new database would race to create pg-boss's schema and the
    // queue's partition (PostgreSQL reports a deadlock): one at a time, under an advisory lock.
    const held = await checkout(pool);
    try {
      await held.client.query("SELECT pg_advisory_lock($1)", [START_LOCK]);
      await boss.start();
      await boss.createQueue(PLAN_QUEUE, { name: PLAN_QUEUE, policy: "short", retryLimit: 0 });
    } finally {
      await held.client.query("SELECT pg_advisory_unlock($1)", [START_LOCK]).catch(() => undefined); // the session's end releases it anyway
      held.release();
    }
  } catch (e) {
    await pool.end().catch(() => undefined);
    await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
    throw new StoreError(
      `the factory's queue (pg-boss, schema ${BOSS_SCHEMA}) could not start in ${o.store.location}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`,
    );
  }

  const queryOn =
    (c: PoolClient): Query =>
    (text, values) =>
      c.query(text, values) as ReturnType<Query>;

  /** Keys with a job that reads as queued: queued, or running in some worker's open transaction. */
  const queuedKeys = async (): Promise<Set<string>> => {
    const r = await pool.query<{ key: string }>(`SELECT singleton_key AS key FROM ${BOSS_SCHEMA}.job WHERE name = $1 AND state IN ('created', 'retry')`, [
      PLAN_QUEUE,
    ]);
    return new Set(r.rows.map((row) => row.key));
  };

  const send = async (r: Round): Promise<boolean> => {
    const held = await checkout(pool);
    const c = held.client;
    try {
      await c.query("BEGIN");
      await c.query(`SET LOCAL lock_timeout = '${ENQUEUE_LOCK_TIMEOUT}'`);
      const data = { issueId: r.issueId, cycle: r.cycle, ...(r.kind ? { kind: r.kind } : {}) };
      const id = await boss.send(PLAN_QUEUE, data, { singletonKey: roundKey(r), retryLimit: 0, db: bossDb(queryOn(c)) });
      await c.query("COMMIT");
      return id !== null;
    } catch (e) {
      await c.query("ROLLBACK").catch(() => undefined); // the error that matters is `e`
      if (codeOf(e) === "55P03") return false; // another worker is running this round
      throw e;
    } finally {
      held.release();
    }
  };

  return {
    kind: "pg-boss",
    async enqueue(rounds) {
      try {
        const known = await queuedKeys();
        const added: Round[] = [];
        for (const r of rounds) if (!known.has(roundKey(r)) && (await send(r))) added.push(r);
        return added;
      } catch (e) {
        throw failed(e, "queueing rounds");
      }
    },
    async take() {
      // The job's connection stays checked out for the whole round: its loss (the server stopped) stops the factory.
      let jobOf = "taking a round";
      let heartbeat: NodeJS.Timeout | undefined;
      const held = await checkout(pool, (e) => {
        clearInterval(heartbeat);
        lost(e, jobOf);
      }).catch((e: unknown) => {
        throw failed(e, "taking a round");
      });
      const c = held.client;
      const q = queryOn(c);
      let job: PgBoss.Job<{ issueId?: unknown; cycle?: unknown; kind?: unknown }> | undefined;
      try {
        await c.query("BEGIN");
        [job] = await boss.fetch<{ issueId?: unknown; cycle?: unknown; kind?: unknown }>(PLAN_QUEUE, { batchSize: 1, db: bossDb(q) });
      } catch (e) {
        await c.query("ROLLBACK").catch(() => undefined); // the error that matters is `e`
        held.release();
        throw failed(e, "taking a round");
      }
      if (!job) {
        try {
          await c.query("ROLLBACK");
        } finally {
          held.release();
        }
        return undefined;
      }
      const jobId = job.id;
      const issueId = typeof job.data.issueId === "string" ? job.data.issueId : "";
      const cycle = typeof job.data.cycle === "number" ? job.data.cycle : 0;
      const kind = job.data.kind === "implement" ? ("implement" as const) : undefined;
      jobOf = `holding the round of issue ${issueId}`;
      // The server closes a connection silent for `silenceMs`: speak while the round runs. A heartbeat that fails is the connection lost.
      heartbeat = setInterval(() => void c.query("SELECT 1").catch((e: unknown) => lost(e, jobOf)), o.heartbeatMs);
      heartbeat.unref();
      let done = false;
      const end = async (how: "COMMIT" | "ROLLBACK") => {
        done = true;
        clearInterval(heartbeat);
        try {
          await c.query(how);
        } finally {
          held.release(); // a connection that failed is discarded
        }
      };
      return {
        issueId,
        cycle,
        ...(kind ? { kind } : {}),
        async finish(record, again) {
          if (done) return;
          try {
            if (record) await record(o.store.txOn(q));
            await boss.complete(PLAN_QUEUE, jobId, {}, { db: bossDb(q) });
            if (again)
              await boss.send(
                PLAN_QUEUE,
                { issueId, cycle, ...(kind ? { kind } : {}) },
                {
                  singletonKey: roundKey({ issueId, cycle, ...(kind ? { kind } : {}) }),
                  startAfter: again,
                  retryLimit: 0,
                  db: bossDb(q),
                },
              );
          } catch (e) {
            await end("ROLLBACK").catch(() => undefined); // the connection may be gone with the error
            throw failed(e, `ending the round of issue ${issueId}`);
          }
          await end("COMMIT").catch((e: unknown) => {
            throw failed(e, `ending the round of issue ${issueId}`);
          });
        },
        async abandon() {
          if (done) return;
          // A connection the server closed has rolled the job back already: nothing to say but give it back.
          if (held.lost()) {
            done = true;
            clearInterval(heartbeat);
            held.release();
            return;
          }
          await end("ROLLBACK").catch((e: unknown) => {
            throw failed(e, `giving back the round of issue ${issueId}`);
          });
        },
      };
    },
    nextDueInMs: () => undefined,
    async close() {
      await boss.stop({ graceful: false, wait: true, close: true }).catch((e: unknown) => o.onError(e));
      await pool.end().catch(() => undefined); // rounds still open roll back with their connections
    },
  };
}
