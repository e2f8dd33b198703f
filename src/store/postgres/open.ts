import type { Pool } from "pg";
import { ConfigError, StoreError } from "../../errors.js";
import { addPart, OPT_IN_PARTS } from "../../opt-in.js";
import { checkout } from "../pg-client.js";
import { pgConn } from "./connection.js";
import { describeUrl, storeError } from "./errors.js";
import { migrate } from "./schema.js";
import { type PostgresStore, postgresStore } from "./store.js";

/** How the PostgreSQL store is opened. */
export interface PostgresOptions {
  redact?: (text: string) => string;
  clock?: () => Date;
  /** The dissent home (for messages only: with PostgreSQL everything lives in the database). */
  home?: string;
  /** Pool size per process. */
  max?: number;
  /** The code index's bound in bytes (default CODE_INDEX_BYTES; tests make it small). */
  codeIndexBytes?: number;
  /** The longest one statement may take (`store.statement_timeout_ms`, default STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs?: number;
  /** Stops the opening (Ctrl-C, SIGTERM): a server that never answers is not waited for, the pool is ended behind it. */
  signal?: AbortSignal;
}

/** `work`, or the signal's reason as soon as it fires (the work itself goes on, unawaited). */
function orStopped<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason as Error);
    signal.addEventListener("abort", stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

/** The default `store.statement_timeout_ms` (docs/limits.md): far above any statement of the store's, far below forever. */
export const STATEMENT_TIMEOUT_MS = 60_000;
/**
 * How much longer than the statement timeout the client waits for an answer: the server cancels a
 * slow statement itself (a lock, a long scan) and the connection stays usable; a server that does not
 * answer at all (stopped, a network that drops packets) is given up on here, and the connection dropped.
 */
export const QUERY_GRACE_MS = 5_000;

/** Opens (creating its schema if needed) the PostgreSQL store at `url`. */
export async function openPostgresStore(url: string, opts: PostgresOptions = {}): Promise<PostgresStore> {
  const where = describeUrl(url);
  let pg: typeof import("pg");
  try {
    pg = (await import("pg")).default as unknown as typeof import("pg");
  } catch (e) {
    throw new ConfigError(`store postgres needs the pg package, which a default install of dissent leaves out: ${addPart(OPT_IN_PARTS.postgres)}`, {
      cause: e,
    });
  }
  // keepAlive: a worker on a host that died is noticed by TCP, not only by its lease expiring.
  const statementMs = opts.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
  const pool: Pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    application_name: "dissent",
    // Every statement is bounded (issue 32): the server cancels one past statement_timeout (57014), and
    // the client gives up on a server that does not answer at all (query_timeout).
    statement_timeout: statementMs,
    query_timeout: statementMs + QUERY_GRACE_MS,
  });
  pool.on("error", () => undefined); // an idle client that dropped is replaced; the next query reports a real failure
  const opening = (async () => {
    const held = await checkout(pool);
    try {
      await migrate(held.client);
    } finally {
      held.release();
    }
  })();
  try {
    await orStopped(opening, opts.signal);
  } catch (e) {
    if (opts.signal?.aborted) {
      // The connection in progress ends with the pool, later: the stop is not held back by it.
      void opening.catch(() => undefined).finally(() => pool.end().catch(() => undefined));
      throw opts.signal.reason;
    }
    await pool.end().catch(() => undefined);
    if (StoreError.isInstance(e)) throw e;
    throw storeError(e, where, statementMs);
  }
  return postgresStore(pgConn(pool, url, where, { ...opts, statementTimeoutMs: statementMs }), opts.codeIndexBytes);
}
