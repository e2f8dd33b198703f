import type { LeaseHolder, LeasePort, LeaseResult } from "../port.js";
import { heldBy, leaseFromRow } from "../rows.js";
import type { SqliteConn } from "./connection.js";

/** The planning lease as a row (ADR-010 §6), timed by the store's clock. */
export function sqliteLease(conn: SqliteConn): LeasePort {
  const { db } = conn;
  const q = {
    lease: db.prepare<[string]>("SELECT holder_id, host, pid, acquired_at, renewed_at FROM leases WHERE issue_id = ?"),
    putLease: db.prepare(
      "INSERT INTO leases (issue_id, holder_id, host, pid, acquired_at, renewed_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(issue_id) DO UPDATE SET holder_id = excluded.holder_id, host = excluded.host, pid = excluded.pid, acquired_at = excluded.acquired_at, renewed_at = excluded.renewed_at",
    ),
    renew: db.prepare("UPDATE leases SET renewed_at = ? WHERE issue_id = ? AND holder_id = ?"),
    release: db.prepare("DELETE FROM leases WHERE issue_id = ? AND holder_id = ?"),
  };
  return {
    acquire: (issueId: string, holder: LeaseHolder, ttlMs: number, staleHolderId?: string) =>
      conn.write((): LeaseResult => {
        conn.writeGuard();
        const now = conn.clock().getTime();
        const found = q.lease.get(issueId);
        const row = found === undefined ? undefined : leaseFromRow(found);
        if (row && row.holder_id !== holder.id && row.holder_id !== staleHolderId && now - row.renewed_at < ttlMs) return heldBy(row);
        q.putLease.run(issueId, holder.id, holder.host, holder.pid, now, now);
        return { ok: true, tookOver: row !== undefined && row.holder_id !== holder.id };
      }),
    renew: (issueId, holderId) => conn.write(() => q.renew.run(conn.clock().getTime(), issueId, holderId).changes > 0),
    release: (issueId, holderId) => conn.write(() => void q.release.run(issueId, holderId)),
  };
}
