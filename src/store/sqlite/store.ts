import { logAndPlans } from "../compose.js";
import type { Store, StoreTx } from "../port.js";
import { sqliteCache } from "./cache.js";
import { sqliteCodeIndex } from "./code-index.js";
import type { SqliteConn } from "./connection.js";
import { sqliteEvents } from "./events.js";
import { sqliteIssues } from "./issues.js";
import { sqliteLease } from "./lease.js";
import { sqlitePlans } from "./plans.js";
import { sqliteWiki } from "./wiki.js";

/** The embedded store: its sub-ports over one connection, and the transaction that spans awaits. */
export function sqliteStore(conn: SqliteConn, memory: boolean, codeIndexBytes?: number): Store {
  const events = sqliteEvents(conn);
  const plans = sqlitePlans(conn, events);
  const { guard, db } = conn;
  const txOps: StoreTx = {
    append: async (list) => guard(() => events.appendRaw(list)),
    plan: async (id) => guard(() => plans.planRaw(id)),
    savePlan: async (row) => guard(() => plans.savePlanRaw(row)),
    putArtifact: async (id, cycle, name, content) => guard(() => plans.putArtifactRaw(id, cycle, name, content)),
  };
  return {
    kind: "sqlite",
    location: conn.file,
    ...logAndPlans(events, plans),
    cache: sqliteCache(conn),
    lease: sqliteLease(conn),
    issues: sqliteIssues(conn),
    wiki: sqliteWiki(conn, memory),
    codeIndex: sqliteCodeIndex(conn, codeIndexBytes),
    // BEGIN IMMEDIATE takes the write lock up front: a transaction never fails half-way on SQLITE_BUSY.
    transaction: (fn) =>
      conn.exclusive(async () => {
        conn.writeGuard();
        guard(() => db.prepare("BEGIN IMMEDIATE").run());
        try {
          const result = await fn(txOps);
          guard(() => db.prepare("COMMIT").run());
          return result;
        } catch (e) {
          if (db.inTransaction) db.prepare("ROLLBACK").run();
          throw e;
        }
      }),
    close: conn.close,
  };
}
