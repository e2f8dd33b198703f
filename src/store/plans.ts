import type { Db } from "./db.js";

/**
 * Where an issue's planning stands. `planning` means a cycle is under way (or was interrupted:
 * the next `issue plan` resumes it); `budget` means a cycle ended with no plan (the next starts afresh).
 */
export type PlanStatus = "new" | "planning" | "ready" | "needs_replan" | "hitl" | "budget" | "fixed";

export interface PlanRow {
  issue_id: string;
  cycle: number;
  status: PlanStatus;
  route: "trivial" | "load_bearing" | null;
  route_reason: string | null;
  /** Network model calls spent in this cycle (the budget survives a kill and resume). */
  calls: number;
  concern_seq: number;
}

/** Planning runs, their artifacts and the per-issue concern counter. */
export interface PlanStore {
  get(issueId: string): PlanRow | undefined;
  /** Saves the row; the concern counter is only ever advanced by nextConcernSeq (ids are never reused). */
  save(row: PlanRow): void;
  artifact(issueId: string, cycle: number, name: string): string | undefined;
  putArtifact(issueId: string, cycle: number, name: string, content: string): void;
  /** Next number of the issue's `{PHASE}-{ROLE}-{NNN}` concern ids. */
  nextConcernSeq(issueId: string): number;
  /** Counts one network call against the cycle's budget, durably. */
  addCall(issueId: string): void;
}

export function planStore(db: Db): PlanStore {
  const get = db.prepare<[string], PlanRow>("SELECT issue_id, cycle, status, route, route_reason, calls, concern_seq FROM plans WHERE issue_id = ?");
  const save = db.prepare(
    `INSERT INTO plans (issue_id, cycle, status, route, route_reason, calls, concern_seq, updated_at)
     VALUES (@issue_id, @cycle, @status, @route, @route_reason, @calls, @concern_seq, @updated_at)
     ON CONFLICT(issue_id) DO UPDATE SET cycle = @cycle, status = @status, route = @route, route_reason = @route_reason,
       calls = @calls, updated_at = @updated_at`,
  );
  const art = db.prepare<[string, number, string], { content: string }>("SELECT content FROM artifacts WHERE issue_id = ? AND cycle = ? AND name = ?");
  const putArt = db.prepare("INSERT OR REPLACE INTO artifacts (issue_id, cycle, name, content) VALUES (?, ?, ?, ?)");
  const seq = db.prepare("UPDATE plans SET concern_seq = concern_seq + 1 WHERE issue_id = ?");
  const call = db.prepare("UPDATE plans SET calls = calls + 1 WHERE issue_id = ?");
  return {
    get: (id) => get.get(id),
    save: (row) => void save.run({ ...row, updated_at: new Date().toISOString() }),
    artifact: (id, cycle, name) => art.get(id, cycle, name)?.content,
    putArtifact: (id, cycle, name, content) => void putArt.run(id, cycle, name, content),
    nextConcernSeq(id) {
      seq.run(id);
      return get.get(id)?.concern_seq ?? 1;
    },
    addCall: (id) => void call.run(id),
  };
}
