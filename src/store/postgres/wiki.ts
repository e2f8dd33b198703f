import type { WikiPort } from "../port.js";
import { wikiFromRow } from "../rows.js";
import type { PgConn } from "./connection.js";
import { PG_SCHEMA as S } from "./schema.js";

/** The wiki as rows of the database (`wiki export` / `wiki import` move them to and from files). */
export function pgWiki(conn: PgConn): WikiPort {
  const { guard, poolQuery } = conn;
  return {
    where: "the database",
    // Ordered as the embedded store lists its files (`<id>.md`, byte order), so both list alike.
    list: () => guard(async () => (await poolQuery(`SELECT id, text FROM ${S}.wiki ORDER BY (id || '.md') COLLATE "C"`)).rows.map(wikiFromRow)),
    get: (id) =>
      guard(async () => {
        const r = await poolQuery(`SELECT id, text FROM ${S}.wiki WHERE id = $1`, [id]);
        return r.rows[0] ? wikiFromRow(r.rows[0]) : undefined;
      }),
    put: (entry) =>
      guard(async () => {
        await poolQuery(
          `INSERT INTO ${S}.wiki (id, text, updated_at) VALUES ($1, $2, now()) ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text, updated_at = now()`,
          [entry.id, conn.redact(entry.text)],
        );
      }),
  };
}
