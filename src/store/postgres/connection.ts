import type { Pool } from "pg";
import { StoreError } from "../../errors.js";
import { checkout } from "../pg-client.js";
import { isConnectError, isDbError, isReadTimeout, storeError } from "./errors.js";

/** Runs one statement on a connection (a pooled client inside a transaction, or the pool). */
export type Query = (text: string, values?: unknown[]) => Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;

/** What every PostgreSQL sub-port is built on: the pool, its transactions, the clock and the redactor. */
export interface PgConn {
  readonly pool: Pool;
  /** The connection URL (a secret: never shown). */
  readonly url: string;
  /** The database as messages name it: host:port/database. */
  readonly where: string;
  readonly clock: () => Date;
  readonly redact: (text: string) => string;
  /** Maps a driver failure (or a malformed row) to its one-line StoreError. */
  guard<T>(fn: () => Promise<T>): Promise<T>;
  /** One statement on the pool, outside any transaction. */
  readonly poolQuery: Query;
  /** Runs `fn` in a transaction on a client of its own (checked out with its error listener, src/store/pg-client.ts). */
  transaction<T>(fn: (q: Query) => Promise<T>): Promise<T>;
  /** Stop functions of the live `follow`s, stopped on close. */
  readonly followers: Set<() => void>;
}

/** What a connection needs besides the pool. */
export interface PgConnOptions {
  clock?: () => Date;
  redact?: (text: string) => string;
  /** The statement bound the pool was opened with, for the message of one past it. */
  statementTimeoutMs?: number;
}

/** Wraps a migrated pool as the connection the sub-ports share. */
export function pgConn(pool: Pool, url: string, where: string, opts: PgConnOptions): PgConn {
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      if (StoreError.isInstance(e) || !(isDbError(e) || isConnectError(e))) throw e;
      throw storeError(e, where, opts.statementTimeoutMs);
    }
  };
  const transaction = <T>(fn: (q: Query) => Promise<T>): Promise<T> =>
    guard(async () => {
      const held = await checkout(pool);
      const client = held.client;
      const q: Query = (text, values) => client.query(text, values) as ReturnType<Query>;
      let broken: Error | undefined;
      try {
        await client.query("BEGIN");
        const result = await fn(q);
        await client.query("COMMIT");
        return result;
      } catch (e) {
        // A server that stopped answering gets no ROLLBACK (it would wait as long again): the connection
        // is dropped instead, which ends the transaction on the server.
        if (isReadTimeout(e)) broken = e as Error;
        else await client.query("ROLLBACK").catch(() => undefined); // the connection may be gone: the error that matters is `e`
        throw e;
      } finally {
        held.release(broken);
      }
    });
  return {
    pool,
    url,
    where,
    clock: opts.clock ?? (() => new Date()),
    redact: opts.redact ?? ((t: string) => t),
    guard,
    poolQuery: (text, values) => pool.query(text, values) as ReturnType<Query>,
    transaction,
    followers: new Set(),
  };
}
