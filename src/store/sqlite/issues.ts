import type { IssuesPort } from "../port.js";
import { countFromRow, issueFromRow, issueToRow } from "../rows.js";
import type { SqliteConn } from "./connection.js";

/** The local tracker's issues, numbered 1, 2, … in the file. */
export function sqliteIssues(conn: SqliteConn): IssuesPort {
  const { db } = conn;
  const q = {
    issue: db.prepare<[string]>("SELECT id, title, body, labels, created_at, updated_at FROM issues WHERE id = ?"),
    issues: db.prepare<[]>("SELECT id, title, body, labels, created_at, updated_at FROM issues ORDER BY number"),
  };
  return {
    create: ({ title, body, labels }) =>
      conn.write(() => {
        conn.writeGuard();
        const now = conn.clock().toISOString();
        const n = countFromRow("issues", db.prepare("SELECT COALESCE(MAX(number), 0) + 1 AS n FROM issues").get());
        const row = issueToRow({ id: String(n), title: conn.redact(title), body: conn.redact(body), labels: [...labels], created_at: now, updated_at: now }, n);
        db.prepare("INSERT INTO issues (id, number, title, body, labels, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
          row.id,
          row.number,
          row.title,
          row.body,
          row.labels,
          row.created_at,
          row.updated_at,
        );
        return issueFromRow(row);
      }),
    get: (id) =>
      conn.read(() => {
        const r = q.issue.get(id);
        return r === undefined ? undefined : issueFromRow(r);
      }),
    list: () => conn.read(() => q.issues.all().map(issueFromRow)),
    setLabels: (id, labels) =>
      conn.write(() => {
        conn.writeGuard();
        db.prepare("UPDATE issues SET labels = ?, updated_at = ? WHERE id = ?").run(JSON.stringify([...labels]), conn.clock().toISOString(), id);
      }),
  };
}
