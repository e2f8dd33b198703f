import type { PlanRow, PlansPort, StageCommit } from "../port.js";
import { artifactFromRow, countFromRow, planFromRow, planToRow } from "../rows.js";
import type { SqliteConn } from "./connection.js";
import type { SqliteEvents } from "./events.js";

/** Planning cycles on SQLite, with the in-transaction writes `transaction` hands out. */
export interface SqlitePlans extends PlansPort {
  planRaw(issueId: string): PlanRow | undefined;
  savePlanRaw(row: PlanRow): void;
  putArtifactRaw(issueId: string, cycle: number, name: string, content: string): void;
}

/** Planning cycles, their artifacts and the stage commit (ADR-010 §2). */
export function sqlitePlans(conn: SqliteConn, events: SqliteEvents): SqlitePlans {
  const { db } = conn;
  const q = {
    plan: db.prepare<[string]>("SELECT issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq, updated_at FROM plans WHERE issue_id = ?"),
    plans: db.prepare<[]>("SELECT issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq, updated_at FROM plans"),
    savePlan: db.prepare(
      `INSERT INTO plans (issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq, updated_at)
       VALUES (@issue_id, @cycle, @status, @route, @route_reason, @calls, @cost_usd, @concern_seq, @updated_at)
       ON CONFLICT(issue_id) DO UPDATE SET cycle = @cycle, status = @status, route = @route, route_reason = @route_reason,
         calls = @calls, cost_usd = @cost_usd, concern_seq = MAX(concern_seq, @concern_seq), updated_at = @updated_at`,
    ),
    seq: db.prepare("UPDATE plans SET concern_seq = MAX(concern_seq, ?) WHERE issue_id = ?"),
    artifact: db.prepare<[string, number, string]>("SELECT content FROM artifacts WHERE issue_id = ? AND cycle = ? AND name = ?"),
    putArtifact: db.prepare("INSERT OR REPLACE INTO artifacts (issue_id, cycle, name, content) VALUES (?, ?, ?, ?)"),
    stageDone: db.prepare<[string, string, number]>(
      "SELECT COUNT(*) AS n FROM events WHERE issue_id = ? AND type = 'AdversarialStageCompleted' AND json_extract(body, '$.stage') = ? AND json_extract(body, '$.cycle') = ?",
    ),
  };
  const planRaw = (id: string) => {
    const row = q.plan.get(id);
    return row === undefined ? undefined : planFromRow(row);
  };
  const savePlanRaw = (row: PlanRow) => {
    conn.writeGuard();
    q.savePlan.run(planToRow(row, conn.clock().toISOString()));
  };
  const putArtifactRaw = (issueId: string, cycle: number, name: string, content: string) => {
    conn.writeGuard();
    q.putArtifact.run(issueId, cycle, name, conn.redact(content));
  };
  const commitStage = (c: StageCommit) =>
    conn.write(() => {
      conn.writeGuard();
      // Exactly one AdversarialStageCompleted per finished stage (docs/factory.md), whatever happened to the committer.
      if (countFromRow("events", q.stageDone.get(c.issueId, c.stage, c.cycle)) > 0) return false;
      if (c.artifact) putArtifactRaw(c.issueId, c.cycle, c.artifact.name, c.artifact.content);
      for (const r of c.records ?? []) putArtifactRaw(c.issueId, c.cycle, r.name, r.content);
      events.appendRaw(c.events);
      q.seq.run(c.concernSeq, c.issueId);
      return true;
    });
  return {
    planRaw,
    savePlanRaw,
    putArtifactRaw,
    plan: (id) => conn.read(() => planRaw(id)),
    savePlan: (row) => conn.write(() => savePlanRaw(row)),
    plans: () => conn.read(() => q.plans.all().map(planFromRow)),
    putArtifact: (id, cycle, name, content) => conn.write(() => putArtifactRaw(id, cycle, name, content)),
    artifact: (id, cycle, name) =>
      conn.read(() => {
        const row = q.artifact.get(id, cycle, name);
        return row === undefined ? undefined : artifactFromRow(row);
      }),
    commitStage,
  };
}
