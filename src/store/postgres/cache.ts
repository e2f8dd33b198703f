import type { CachePort } from "../port.js";
import { countFromRow, replyFromRow, replyToRow } from "../rows.js";
import type { PgConn } from "./connection.js";
import { PG_SCHEMA as S } from "./schema.js";

/** The reply cache shared by every worker of the database. */
export function pgCache(conn: PgConn): CachePort {
  const { guard, poolQuery } = conn;
  return {
    get: (key) =>
      guard(async () => {
        const r = await poolQuery(`SELECT reply FROM ${S}.cache WHERE key = $1`, [key]);
        return r.rows[0] ? replyFromRow(r.rows[0]) : undefined;
      }),
    put: (key, reply, meta) =>
      guard(async () => {
        const row = replyToRow(key, reply, meta, conn.clock().toISOString(), conn.redact);
        await poolQuery(
          `INSERT INTO ${S}.cache (key, provider, model, reply, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO UPDATE SET reply = EXCLUDED.reply, created_at = EXCLUDED.created_at`,
          [row.key, row.provider, row.model, row.reply, row.created_at],
        );
      }),
    clear: (olderThanDays) =>
      guard(async () => {
        if (olderThanDays === undefined) return (await poolQuery(`DELETE FROM ${S}.cache`)).rowCount ?? 0;
        const cutoff = new Date(conn.clock().getTime() - olderThanDays * 86_400_000).toISOString();
        return (await poolQuery(`DELETE FROM ${S}.cache WHERE created_at < $1`, [cutoff])).rowCount ?? 0;
      }),
    count: () => guard(async () => countFromRow("cache", (await poolQuery(`SELECT COUNT(*) AS n FROM ${S}.cache`)).rows[0])),
  };
}
