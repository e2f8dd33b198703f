import { CODE_INDEX_BYTES, CODE_INDEX_VALUE_BYTES, type CodeIndexCache } from "../port.js";
import { codeEntryFromRow, codeEntryToRow, countFromRow } from "../rows.js";
import type BetterSqlite3 from "better-sqlite3";
import type { SqliteConn } from "./connection.js";

/** Keys per statement (SQLite binds at most 32,766 variables; far fewer keep statements small). */
const CHUNK = 500;

/** The code index in the store file (a read-only store reads it and keeps nothing new). */
export function sqliteCodeIndex(conn: SqliteConn, maxBytes = CODE_INDEX_BYTES): CodeIndexCache {
  const { db } = conn;
  const stats = { hits: 0, misses: 0, puts: 0 };
  const reads = new Map<number, BetterSqlite3.Statement<unknown[]>>();
  const touches = new Map<number, BetterSqlite3.Statement<unknown[]>>();
  const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");
  const readOf = (n: number) => {
    let s = reads.get(n);
    if (!s) reads.set(n, (s = db.prepare<unknown[]>(`SELECT key, value FROM code_index WHERE key IN (${marks(n)})`)));
    return s;
  };
  const touchOf = (n: number) => {
    let s = touches.get(n);
    if (!s) touches.set(n, (s = db.prepare<unknown[]>(`UPDATE code_index SET used_at = ? WHERE key IN (${marks(n)})`)));
    return s;
  };
  const put = db.prepare(
    "INSERT INTO code_index (key, value, bytes, used_at) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, bytes = excluded.bytes, used_at = excluded.used_at",
  );
  const total = db.prepare("SELECT COALESCE(SUM(bytes), 0) AS n FROM code_index");
  // The oldest-used entries whose bytes, added up in that order, cover the excess.
  const evict = db.prepare(
    "DELETE FROM code_index WHERE key IN (SELECT key FROM (SELECT key, bytes, SUM(bytes) OVER (ORDER BY used_at, key) AS run FROM code_index) WHERE run - bytes < ?)",
  );
  return {
    stats,
    getMany: (keys) =>
      conn.read(() => {
        const out = new Map<string, string>();
        const unique = [...new Set(keys)];
        for (let i = 0; i < unique.length; i += CHUNK) {
          const part = unique.slice(i, i + CHUNK);
          for (const raw of readOf(part.length).all(...part)) {
            const e = codeEntryFromRow(raw);
            out.set(e.key, e.value);
          }
        }
        stats.hits += out.size;
        stats.misses += unique.length - out.size;
        // What was read was used: it is the last to go when the index is full.
        if (!conn.readOnly && out.size) {
          const now = conn.clock().getTime();
          const found = [...out.keys()];
          db.transaction(() => {
            for (let i = 0; i < found.length; i += CHUNK) {
              const part = found.slice(i, i + CHUNK);
              touchOf(part.length).run(now, ...part);
            }
          }).immediate();
        }
        return out;
      }),
    putMany: (entries) => {
      if (conn.readOnly || entries.length === 0) return Promise.resolve();
      return conn.write(() => {
        const now = conn.clock().getTime();
        for (const e of entries) {
          const row = codeEntryToRow(e, now, conn.redact);
          if (row.bytes > CODE_INDEX_VALUE_BYTES) continue;
          put.run(row.key, row.value, row.bytes, row.used_at);
          stats.puts++;
        }
        const held = countFromRow("code_index", total.get());
        if (held > maxBytes) evict.run(held - maxBytes);
      });
    },
    size: () =>
      conn.read(() => ({
        entries: countFromRow("code_index", db.prepare("SELECT COUNT(*) AS n FROM code_index").get()),
        bytes: countFromRow("code_index", total.get()),
      })),
  };
}
