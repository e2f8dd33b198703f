import { logAndPlans } from "../compose.js";
import type { Store, StoreTx } from "../port.js";
import type { StoreSnapshot } from "../snapshot.js";
import { pgCache } from "./cache.js";
import { pgCodeIndex } from "./code-index.js";
import type { PgConn, Query } from "./connection.js";
import { pgEvents } from "./events.js";
import { pgIssues } from "./issues.js";
import { pgLease } from "./lease.js";
import { pgPlans, txOn } from "./plans.js";
import { contents, importSnapshot } from "./snapshot-import.js";
import { pgWiki } from "./wiki.js";

/** The PostgreSQL store, with what the factory's queue and `dissent migrate` need beyond the port. */
export interface PostgresStore extends Store {
  readonly kind: "postgres";
  /** The connection URL (a secret: never shown; `location` is the printable form). */
  readonly url: string;
  /** The store's operations inside a transaction someone else opened on `query`'s connection (pg-boss's job, say). */
  txOn(query: Query): StoreTx;
  /** What the store holds besides the reply cache, by table (a non-empty target refuses `dissent migrate`). */
  contents(): Promise<Record<string, number>>;
  /** Copies an embedded store's rows in one transaction, keeping ids and the events' `seq`; the cache merges. */
  importSnapshot(snapshot: StoreSnapshot): Promise<Record<string, number>>;
}

/** Is this store the PostgreSQL adapter? */
export function isPostgresStore(store: Store): store is PostgresStore {
  return store.kind === "postgres" && "txOn" in store;
}

/** The PostgreSQL store: its sub-ports over one pool. */
export function postgresStore(conn: PgConn, codeIndexBytes?: number): PostgresStore {
  const events = pgEvents(conn);
  const plans = pgPlans(conn);
  return {
    kind: "postgres",
    location: conn.where,
    url: conn.url,
    txOn: (q) => txOn(conn, q),
    ...logAndPlans(events, plans),
    transaction: (fn) => conn.transaction((q) => fn(txOn(conn, q))),
    cache: pgCache(conn),
    lease: pgLease(conn),
    issues: pgIssues(conn),
    wiki: pgWiki(conn),
    codeIndex: pgCodeIndex(conn, codeIndexBytes),
    contents: () => contents(conn),
    importSnapshot: (snap) => importSnapshot(conn, snap),
    async close() {
      for (const stop of [...conn.followers]) stop();
      await conn.pool.end().catch(() => undefined); // closing twice, or after the server went away, leaves nothing to do
    },
  };
}
