import { StoreError } from "../../errors.js";
import type { IssuesPort } from "../port.js";
import { issueFromRow } from "../rows.js";
import type { PgConn } from "./connection.js";
import { PG_SCHEMA as S } from "./schema.js";

/** The local tracker's issues, numbered by a sequence (workers on several machines never share a number). */
export function pgIssues(conn: PgConn): IssuesPort {
  const { guard, poolQuery, redact } = conn;
  return {
    create: ({ title, body, labels }) =>
      guard(async () => {
        const now = conn.clock().toISOString();
        const r = await poolQuery(
          `INSERT INTO ${S}.issues (id, number, title, body, labels, created_at, updated_at)
           SELECT n::text, n, $1, $2, $3, $4, $4 FROM nextval('${S}.issue_number') AS n RETURNING id, title, body, labels, created_at, updated_at`,
          [redact(title), redact(body), JSON.stringify([...new Set(labels)]), now],
        );
        const row = r.rows[0];
        if (!row) throw new StoreError(`the store at ${conn.where} created no issue row`);
        return issueFromRow(row);
      }),
    get: (id) =>
      guard(async () => {
        const r = await poolQuery(`SELECT id, title, body, labels, created_at, updated_at FROM ${S}.issues WHERE id = $1`, [id]);
        return r.rows[0] ? issueFromRow(r.rows[0]) : undefined;
      }),
    list: () =>
      guard(async () => (await poolQuery(`SELECT id, title, body, labels, created_at, updated_at FROM ${S}.issues ORDER BY number`)).rows.map(issueFromRow)),
    setLabels: (id, labels) =>
      guard(async () => {
        await poolQuery(`UPDATE ${S}.issues SET labels = $1, updated_at = $2 WHERE id = $3`, [JSON.stringify([...labels]), conn.clock().toISOString(), id]);
      }),
  };
}
