import type { LeaseHolder, LeasePort, LeaseResult } from "../port.js";
import { columnsOf } from "../columns.js";
import { heldBy, leaseFromRow } from "../rows.js";
import type { PgConn, Query } from "./connection.js";
import { PG_SCHEMA as S } from "./schema.js";

/** Takes the lease inside the transaction on `q`, timed by the database's clock. */
async function acquireOn(q: Query, issueId: string, holder: LeaseHolder, ttlMs: number, staleHolderId?: string): Promise<LeaseResult> {
  // The database's clock, not the workers': machines disagree about the time.
  const now = columnsOf("clock_timestamp()", (await q("SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now")).rows[0]).int("now");
  // A placeholder row ('' holds nothing) so there is always a row to lock, free lease or not.
  await q(`INSERT INTO ${S}.leases (issue_id, holder_id, host, pid, acquired_at, renewed_at) VALUES ($1, '', '', 0, 0, 0) ON CONFLICT (issue_id) DO NOTHING`, [
    issueId,
  ]);
  const found = (await q(`SELECT holder_id, host, pid, acquired_at, renewed_at FROM ${S}.leases WHERE issue_id = $1 FOR UPDATE`, [issueId])).rows[0];
  const row = found === undefined ? undefined : leaseFromRow(found);
  if (row && row.holder_id !== "" && row.holder_id !== holder.id && row.holder_id !== staleHolderId && now - row.renewed_at < ttlMs) return heldBy(row);
  if (row?.holder_id === holder.id) {
    await q(`UPDATE ${S}.leases SET renewed_at = $2 WHERE issue_id = $1`, [issueId, now]);
    return { ok: true, tookOver: false };
  }
  await q(`UPDATE ${S}.leases SET holder_id = $2, host = $3, pid = $4, acquired_at = $5, renewed_at = $5 WHERE issue_id = $1`, [
    issueId,
    holder.id,
    holder.host,
    holder.pid,
    now,
  ]);
  return { ok: true, tookOver: row !== undefined && row.holder_id !== "" };
}

/** The planning lease as a row (ADR-010 §6), locked FOR UPDATE while it is decided. */
export function pgLease(conn: PgConn): LeasePort {
  return {
    acquire: (issueId, holder, ttlMs, staleHolderId) => conn.transaction((q) => acquireOn(q, issueId, holder, ttlMs, staleHolderId)),
    renew: (issueId, holderId) =>
      conn.guard(async () => {
        const r = await conn.poolQuery(
          `UPDATE ${S}.leases SET renewed_at = (extract(epoch from clock_timestamp()) * 1000)::bigint WHERE issue_id = $1 AND holder_id = $2`,
          [issueId, holderId],
        );
        return (r.rowCount ?? 0) > 0;
      }),
    release: (issueId, holderId) =>
      conn.guard(async () => {
        await conn.poolQuery(`DELETE FROM ${S}.leases WHERE issue_id = $1 AND holder_id = $2`, [issueId, holderId]);
      }),
  };
}
