import { toStageRun, type Concern, type ConcernResolution, type StageRun } from "./contracts/concern.js";
import type { PlanStatus, Store } from "./store/port.js";
import type { TrackedIssue, Tracker } from "./trackers/port.js";

/**
 * Read models: what the CLI prints and the dashboard serves, computed in one place from the store
 * and the tracker (every figure is the store's).
 */

/** One row of `issue list` and of the board. */
export interface IssueSummary {
  id: string;
  title: string;
  labels: string[];
  status: PlanStatus;
  route: "trivial" | "load_bearing" | null;
  cycle: number;
  pending_concerns: number;
  /** The stage running now, if a plan is under way. */
  current_stage: string | null;
  /** Network calls and dollars of the current cycle. */
  calls: number;
  cost_usd: number;
  updated_at: string | null;
}

export async function listIssues(store: Store, tracker: Tracker): Promise<IssueSummary[]> {
  const [issues, plans] = await Promise.all([tracker.list(), store.plans()]);
  const byId = new Map(plans.map((p) => [p.issue_id, p]));
  const out: IssueSummary[] = [];
  for (const i of issues) {
    const plan = byId.get(i.id);
    const state = await store.state(i.id);
    out.push({
      id: i.id,
      title: i.title,
      labels: i.labels,
      status: plan?.status ?? "new",
      route: plan?.route ?? null,
      cycle: plan?.cycle ?? 0,
      pending_concerns: state.pending_concerns.length,
      current_stage: plan?.status === "planning" ? state.current_stage : null,
      calls: plan?.calls ?? 0,
      cost_usd: plan?.cost_usd ?? 0,
      updated_at: plan?.updated_at ?? null,
    });
  }
  return out;
}

/** `issue show --json` (CONTRACT §4) and the dashboard's issue page. */
export interface IssueDetail {
  id: string;
  title: string;
  body: string;
  labels: string[];
  status: PlanStatus;
  route: "trivial" | "load_bearing" | null;
  route_reason: string | null;
  cycle: number;
  plan: string | null;
  brief: string | null;
  shape: string | null;
  acceptance_criteria: string[];
  pending_concerns: Concern[];
  addressed_concerns: ConcernResolution[];
  stages: StageRun[];
  calls: number;
  cost_usd: number;
  url?: string;
}

export async function showIssue(store: Store, tracker: Tracker, id: string): Promise<IssueDetail> {
  const issue: TrackedIssue = await tracker.get(id);
  const row = await store.plan(issue.id);
  const state = await store.state(issue.id);
  const cycle = row?.cycle ?? 0;
  const art = (name: string) => (row ? store.artifact(issue.id, cycle, name) : Promise.resolve(undefined));
  const [plan, brief, shape, criteria] = await Promise.all([art("plan"), art("brief"), art("shape"), art("acceptance_criteria")]);
  return {
    id: issue.id,
    title: issue.title,
    body: issue.body,
    labels: issue.labels,
    status: row?.status ?? "new",
    route: row?.route ?? null,
    route_reason: row?.route_reason ?? null,
    cycle,
    plan: plan ?? null,
    brief: brief ?? null,
    shape: shape ?? null,
    acceptance_criteria: criteria ? (JSON.parse(criteria) as string[]) : [],
    pending_concerns: state.pending_concerns,
    addressed_concerns: state.addressed_concerns,
    stages: state.stage_history.filter((s) => s.cycle === cycle).map(toStageRun),
    calls: row?.calls ?? 0,
    cost_usd: row?.cost_usd ?? 0,
    ...(issue.url ? { url: issue.url } : {}),
  };
}
