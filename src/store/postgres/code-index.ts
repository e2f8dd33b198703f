import { CODE_INDEX_BYTES, CODE_INDEX_VALUE_BYTES, type CodeIndexCache } from "../port.js";
import { codeEntryFromRow, codeEntryToRow, countFromRow } from "../rows.js";
import type { PgConn } from "./connection.js";
import { PG_SCHEMA as S } from "./schema.js";

/** Rows per statement. */
const CHUNK = 1000;

/** The code index shared by every worker of the database. */
export function pgCodeIndex(conn: PgConn, maxBytes = CODE_INDEX_BYTES): CodeIndexCache {
  const { guard, poolQuery } = conn;
  const stats = { hits: 0, misses: 0, puts: 0 };
  return {
    stats,
    getMany: (keys) =>
      guard(async () => {
        const out = new Map<string, string>();
        const unique = [...new Set(keys)];
        for (let i = 0; i < unique.length; i += CHUNK) {
          const part = unique.slice(i, i + CHUNK);
          const r = await poolQuery(`SELECT key, value FROM ${S}.code_index WHERE key = ANY($1::text[])`, [part]);
          for (const raw of r.rows) {
            const e = codeEntryFromRow(raw);
            out.set(e.key, e.value);
          }
        }
        stats.hits += out.size;
        stats.misses += unique.length - out.size;
        if (out.size) {
          const found = [...out.keys()];
          const now = conn.clock().getTime();
          for (let i = 0; i < found.length; i += CHUNK)
            await poolQuery(`UPDATE ${S}.code_index SET used_at = $2 WHERE key = ANY($1::text[])`, [found.slice(i, i + CHUNK), now]);
        }
        return out;
      }),
    putMany: (entries) =>
      guard(async () => {
        if (entries.length === 0) return;
        const now = conn.clock().getTime();
        const rows = new Map<string, ReturnType<typeof codeEntryToRow>>();
        for (const e of entries) {
          const row = codeEntryToRow(e, now, conn.redact);
          if (row.bytes <= CODE_INDEX_VALUE_BYTES) rows.set(row.key, row); // one row per key: ON CONFLICT may not touch a row twice
        }
        const list = [...rows.values()];
        for (let i = 0; i < list.length; i += CHUNK) {
          const part = list.slice(i, i + CHUNK);
          await poolQuery(
            `INSERT INTO ${S}.code_index (key, value, bytes, used_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
             ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, bytes = EXCLUDED.bytes, used_at = EXCLUDED.used_at`,
            [part.map((r) => r.key), part.map((r) => r.value), part.map((r) => r.bytes), part.map((r) => r.used_at)],
          );
          stats.puts += part.length;
        }
        const held = countFromRow("code_index", (await poolQuery(`SELECT COALESCE(SUM(bytes), 0) AS n FROM ${S}.code_index`)).rows[0]);
        if (held > maxBytes)
          await poolQuery(
            `DELETE FROM ${S}.code_index WHERE key IN (SELECT key FROM (SELECT key, bytes, SUM(bytes) OVER (ORDER BY used_at, key) AS run FROM ${S}.code_index) t WHERE run - bytes < $1)`,
            [held - maxBytes],
          );
      }),
    size: () =>
      guard(async () => {
        const r = await poolQuery(`SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS b FROM ${S}.code_index`);
        const row = r.rows[0] ?? {};
        return { entries: countFromRow("code_index", { n: row.n }), bytes: countFromRow("code_index", { n: row.b }) };
      }),
  };
}
