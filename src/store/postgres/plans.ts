import type { PlansPort, StageCommit, StoreTx } from "../port.js";
import { artifactFromRow, planFromRow, planToRow } from "../rows.js";
import type { PgConn, Query } from "./connection.js";
import { appendOn } from "./events.js";
import { APPEND_LOCK, PG_SCHEMA as S } from "./schema.js";

/** The columns of a `plans` row, in the order its INSERTs give them. */
export const PLAN_COLS = "issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq, updated_at";

/** The operations a transaction on `q` offers (the store's own, or one someone else opened: pg-boss's job). */
export function txOn(conn: PgConn, q: Query): StoreTx {
  return {
    append: (events) => appendOn(conn, q, events),
    async plan(issueId) {
      const r = await q(`SELECT ${PLAN_COLS} FROM ${S}.plans WHERE issue_id = $1`, [issueId]);
      return r.rows[0] ? planFromRow(r.rows[0]) : undefined;
    },
    async savePlan(plan) {
      const row = planToRow(plan, conn.clock().toISOString());
      await q(
        `INSERT INTO ${S}.plans (${PLAN_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (issue_id) DO UPDATE SET cycle = $2, status = $3, route = $4, route_reason = $5, calls = $6, cost_usd = $7,
             concern_seq = GREATEST(${S}.plans.concern_seq, $8), updated_at = $9`,
        [row.issue_id, row.cycle, row.status, row.route, row.route_reason, row.calls, row.cost_usd, row.concern_seq, row.updated_at],
      );
    },
    async putArtifact(issueId, cycle, name, content) {
      await q(
        `INSERT INTO ${S}.artifacts (issue_id, cycle, name, content) VALUES ($1, $2, $3, $4) ON CONFLICT (issue_id, cycle, name) DO UPDATE SET content = EXCLUDED.content`,
        [issueId, cycle, name, conn.redact(content)],
      );
    },
  };
}

/** Commits a stage once per (issue, cycle, stage) (ADR-010 §2). */
function commitStage(conn: PgConn, c: StageCommit): Promise<boolean> {
  return conn.transaction(async (q) => {
    // The append lock first, then the check: two workers committing the same stage serialise here,
    // and the second finds the first's AdversarialStageCompleted (exactly one per finished stage, docs/factory.md).
    await q("SELECT pg_advisory_xact_lock($1)", [APPEND_LOCK]);
    const done = await q(
      `SELECT 1 FROM ${S}.events WHERE issue_id = $1 AND type = 'AdversarialStageCompleted' AND body->>'stage' = $2 AND (body->>'cycle')::int = $3 LIMIT 1`,
      [c.issueId, c.stage, c.cycle],
    );
    if (done.rows.length) return false;
    const tx = txOn(conn, q);
    if (c.artifact) await tx.putArtifact(c.issueId, c.cycle, c.artifact.name, c.artifact.content);
    for (const r of c.records ?? []) await tx.putArtifact(c.issueId, c.cycle, r.name, r.content);
    await tx.append(c.events);
    await q(`UPDATE ${S}.plans SET concern_seq = GREATEST(concern_seq, $1) WHERE issue_id = $2`, [c.concernSeq, c.issueId]);
    return true;
  });
}

/** Planning cycles, their artifacts and the stage commit. */
export function pgPlans(conn: PgConn): PlansPort {
  const direct = txOn(conn, conn.poolQuery);
  return {
    plan: (id) => conn.guard(() => direct.plan(id)),
    savePlan: (row) => conn.guard(() => direct.savePlan(row)),
    putArtifact: (id, cycle, name, content) => conn.guard(() => direct.putArtifact(id, cycle, name, content)),
    plans: () => conn.guard(async () => (await conn.poolQuery(`SELECT ${PLAN_COLS} FROM ${S}.plans ORDER BY issue_id`)).rows.map(planFromRow)),
    artifact: (id, cycle, name) =>
      conn.guard(async () => {
        const r = await conn.poolQuery(`SELECT content FROM ${S}.artifacts WHERE issue_id = $1 AND cycle = $2 AND name = $3`, [id, cycle, name]);
        return r.rows[0] ? artifactFromRow(r.rows[0]) : undefined;
      }),
    commitStage: (c) => commitStage(conn, c),
  };
}
