import type { CachePort } from "../port.js";
import { countFromRow, replyFromRow, replyToRow } from "../rows.js";
import type { SqliteConn } from "./connection.js";

/** The reply cache in the store file (a read-only store reads it and keeps nothing new). */
export function sqliteCache(conn: SqliteConn): CachePort {
  const { db } = conn;
  const q = {
    cacheGet: db.prepare<[string]>("SELECT reply FROM cache WHERE key = ?"),
    cachePut: db.prepare("INSERT OR REPLACE INTO cache (key, provider, model, reply, created_at) VALUES (?, ?, ?, ?, ?)"),
  };
  return {
    get: (key) =>
      conn.read(() => {
        const row = q.cacheGet.get(key);
        return row === undefined ? undefined : replyFromRow(row);
      }),
    put: (key, reply, meta) => {
      if (conn.readOnly) return Promise.resolve();
      return conn.write(() => {
        const row = replyToRow(key, reply, meta, conn.clock().toISOString(), conn.redact);
        q.cachePut.run(row.key, row.provider, row.model, row.reply, row.created_at);
      });
    },
    clear: (olderThanDays) =>
      conn.write(() => {
        conn.writeGuard();
        if (olderThanDays === undefined) return db.prepare("DELETE FROM cache").run().changes;
        const cutoff = new Date(conn.clock().getTime() - olderThanDays * 86_400_000).toISOString();
        return db.prepare("DELETE FROM cache WHERE created_at < ?").run(cutoff).changes;
      }),
    count: () => conn.read(() => countFromRow("cache", db.prepare("SELECT COUNT(*) AS n FROM cache").get())),
  };
}
