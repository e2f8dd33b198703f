import { readWiki } from "./carryover/wiki.js";
import { toStageRun } from "./contracts/concern.js";
import { stateOf, TRANSIENT_LABELS } from "./contracts/labels.js";
import { implementationOf } from "./read-models/implementation.js";
import { concernLineage } from "./read-models/lineage.js";
import { cycleSteps } from "./read-models/steps.js";
import { currentCycleUsage, cycleTimelines } from "./read-models/timeline.js";
import type {
  AuditRun,
  AuditRunPage,
  Estimator,
  IssueDetail,
  IssueListStatus,
  IssuePage,
  IssueStatus,
  IssueSummary,
  RoundDetail,
  StageRoundsPage,
  WikiEntryView,
  WikiUse,
} from "./read-models/types.js";
import { roundsArtifact } from "./pipeline/round-record.js";
import { usageOf } from "./read-models/usage.js";
import type { Store } from "./store/port.js";
import type { TrackedIssue, Tracker } from "./trackers/port.js";

/**
 * Read models: what the CLI prints and the dashboard serves, computed in one place from the store
 * and the tracker (every figure is the store's).
 */
export type * from "./read-models/types.js";
export { EventIndex } from "./read-models/event-index.js";

const isRunning = (labels: readonly string[]) => TRANSIENT_LABELS.some((l) => labels.includes(l));

/** A ready plan stays `ready` in the store while it is implemented: the label says how far it went (docs/issue.md). */
function listStatus(status: IssueStatus, labels: readonly string[]): IssueListStatus {
  if (status !== "ready") return status;
  const state = stateOf(labels);
  return state === "dissent-implementing" ? "implementing" : state === "dissent-review" ? "in_review" : status;
}

/**
 * `issue list` and the board: one row per issue of the tracker. `unpriced` says whether an issue's
 * current cycle had a network call of unknown price (then its dollars are null, never 0); without
 * it the dollars are those of the priced calls.
 */
export async function listIssues(store: Store, tracker: Tracker, unpriced?: (issueId: string) => boolean): Promise<IssueSummary[]> {
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
      state: stateOf(i.labels),
      status: listStatus(plan?.status ?? "new", i.labels),
      route: plan?.route ?? null,
      cycle: plan?.cycle ?? 0,
      pending_concerns: state.pending_concerns.length,
      current_stage: plan?.status === "planning" ? state.current_stage : null,
      running: isRunning(i.labels),
      calls: plan?.calls ?? 0,
      cost_usd: unpriced?.(i.id) ? null : (plan?.cost_usd ?? 0),
      updated_at: plan?.updated_at ?? null,
    });
  }
  return out;
}

/** `issue show --json` (docs/issue.md) and the head of the dashboard's issue page. */
export async function showIssue(store: Store, tracker: Tracker, id: string): Promise<IssueDetail> {
  return (await readIssue(store, tracker, id)).detail;
}

async function readIssue(store: Store, tracker: Tracker, id: string, estimate?: Estimator) {
  const issue: TrackedIssue = await tracker.get(id);
  const [row, state, events] = await Promise.all([store.plan(issue.id), store.state(issue.id), store.events({ issueId: issue.id })]);
  const cycle = row?.cycle ?? 0;
  const art = (name: string) => (row ? store.artifact(issue.id, cycle, name) : Promise.resolve(undefined));
  const [plan, brief, shape, criteria, prBody] = await Promise.all([art("plan"), art("brief"), art("shape"), art("acceptance_criteria"), art("pull_request")]);
  const cycles = cycleTimelines(events, isRunning(issue.labels), estimate);
  // The cycle's dollars are null, never 0, when one of its network calls had no known price (docs/serve.md).
  const current = currentCycleUsage(cycles, cycle);
  const lifetime = usageOf(cycles.flatMap((c) => [...c.calls, ...c.stages.flatMap((st) => st.rounds.flatMap((r) => r.calls))]));
  const detail: IssueDetail = {
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
    calls_cycle: row?.calls ?? 0,
    calls_total: lifetime.calls,
    cost_usd: current.unpriced_calls > 0 ? null : (row?.cost_usd ?? 0),
    cost_usd_total: lifetime.cost_usd,
    steps: cycleSteps(cycles.find((c) => c.cycle === cycle)),
    input_tokens: current.input_tokens,
    output_tokens: current.output_tokens,
    cached_input_tokens: current.cached_input_tokens,
    cache_write_input_tokens: current.cache_write_input_tokens,
    ...(issue.url ? { url: issue.url } : {}),
    implementation: implementationOf(events, prBody),
  };
  return { issue, detail, state, events, cycles };
}

/** The dashboard's issue page: the issue, its stage timeline per cycle, and every concern's lineage. */
export async function issuePage(
  store: Store,
  tracker: Tracker,
  id: string,
  givenTo: (entryId: string) => readonly WikiUse[],
  estimate?: Estimator,
): Promise<IssuePage> {
  const lastSeq = await store.lastSeq();
  const { issue, detail, state, events, cycles } = await readIssue(store, tracker, id, estimate);
  const wiki = await readWiki(store.wiki);
  const calls = cycles.flatMap((c) => [...c.calls, ...c.stages.flatMap((s) => s.rounds.flatMap((r) => r.calls))]);
  return {
    issue: detail,
    cycles,
    lineage: concernLineage(issue.id, events, state, wiki, givenTo),
    usage: usageOf(calls),
    last_seq: Math.max(lastSeq, events.at(-1)?.seq ?? 0),
  };
}

/** Wiki entries as served, each with the issues it was given to; `withBody` adds the markdown. */
export async function wikiEntries(store: Store, givenTo: (entryId: string) => readonly WikiUse[], withBody = false): Promise<WikiEntryView[]> {
  return (await readWiki(store.wiki)).map((e) => ({
    id: e.id,
    title: e.title,
    fingerprint: e.fingerprint,
    severity: e.severity,
    category: e.category,
    confidence: e.confidence,
    stale: e.stale,
    prs: e.prs,
    issues: e.issues,
    created: e.created,
    updated: e.updated,
    ...(withBody ? { body: e.body } : {}),
    given_to: [...givenTo(e.id)],
  }));
}

const isRoundDetail = (v: unknown): v is RoundDetail =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as RoundDetail).round === "number" &&
  typeof (v as RoundDetail).draft === "string" &&
  Array.isArray((v as RoundDetail).critics);

/**
 * A stage's rounds as it recorded them when it finished (docs/serve.md "What was said"): each
 * round's draft, what each critic said, the verifier's verdicts and what blocked. A stage still
 * running, interrupted, or planned before rounds were kept has none (`absent` says which).
 */
export async function stageRounds(store: Store, issueId: string, cycle: number, stage: string): Promise<StageRoundsPage> {
  const head = { issue_id: issueId, cycle, stage };
  const text = await store.artifact(issueId, cycle, roundsArtifact(stage));
  if (text !== undefined) {
    try {
      const record = JSON.parse(text) as { v?: unknown; rounds?: unknown };
      if (record.v === 1 && Array.isArray(record.rounds)) return { ...head, rounds: record.rounds.filter(isRoundDetail) };
    } catch {
      // a record that does not read is shown as none, below
    }
  }
  const marks = await store.events({ issueId, types: ["AdversarialStageStarted", "AdversarialStageCompleted"] });
  const mine = marks.filter((e) => (e.type === "AdversarialStageStarted" || e.type === "AdversarialStageCompleted") && e.cycle === cycle && e.stage === stage);
  const running = mine.at(-1)?.type === "AdversarialStageStarted";
  return { ...head, rounds: [], absent: running ? "running" : "not_recorded" };
}

/** One run of `dissent run` with its calls and, when its calls carry text (`log_content: true`), what it said. */
export async function runPage(store: Store, run: AuditRun): Promise<AuditRunPage> {
  const events = await Promise.all(run.calls.map((c) => store.events({ after: c.seq - 1, limit: 1 })));
  const calls = events.flat().filter((e): e is Extract<typeof e, { type: "ModelCall" }> => e.type === "ModelCall" && e.run_id === run.run_id);
  const { runText } = await import("./read-models/run-text.js"); // the gate's parser, loaded only for this page
  return { ...run, text: runText(calls) };
}
