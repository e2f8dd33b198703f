/**
 * The shapes the read models return: what the CLI prints and what `dissent serve` answers under
 * /api/ (docs/serve.md). Types only, no runtime code, so the browser bundle can import them too.
 */
import type { Concern, ConcernResolution, StageRecord, StageRun } from "../contracts/concern.js";
import type { DissentEvent } from "../contracts/events.js";
import type { StateLabel } from "../contracts/labels.js";
import type { ImplementationView } from "./implementation.js";
import type { WikiEntryFields } from "../contracts/wiki.js";

/** A planning status as the store keeps it (mirrors store/port PlanStatus, kept here free of Node types). */
export type IssueStatus = "new" | "planning" | "ready" | "needs_replan" | "hitl" | "budget" | "fixed";

/** What `issue list` and the board say an issue is doing: its planning status, or — once its plan is ready — `implementing` or `in_review` as its label says. */
export type IssueListStatus = IssueStatus | "implementing" | "in_review";

/** An event as served: with `seq`, its order in the store. */
export type ServedEvent = DissentEvent & { seq: number };

/** One model call, as the timeline, the runs and the costs show it. */
export interface CallRow {
  seq: number;
  at: string;
  issue_id: string | null;
  run_id?: string;
  role: string;
  provider: string;
  model: string;
  route: "primary" | "secondary";
  cached: boolean;
  latency_ms: number;
  input_tokens: number;
  output_tokens: number;
  /** Of `input_tokens`, those read from and written to the provider's prompt cache (docs/serve.md "Cost"). */
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  /** USD; null when the model's price is unknown (never 0 for unknown). */
  cost_usd: number | null;
  /** For a network call of unknown price: what its tokens would cost at a known price, and which (docs/serve.md "Cost"). */
  estimate?: PriceEstimate;
  error?: string;
  stage?: string;
  round?: number;
  wiki_entries?: string[];
}

/** Calls, tokens and dollars of a set of calls. `cost_usd` is null when any network call had no known price. */
export interface Usage {
  /** Calls sent over the network. */
  calls: number;
  /** Calls answered from the reply cache (free). */
  cached_calls: number;
  failed_calls: number;
  input_tokens: number;
  output_tokens: number;
  /** Of `input_tokens`, those the provider read from its prompt cache (billed at the cached rate; docs/serve.md "Cost"). */
  cached_input_tokens: number;
  /** Of `input_tokens`, those the provider wrote to its prompt cache (Anthropic reports them). */
  cache_write_input_tokens: number;
  /** Dollars of the priced network calls. */
  known_usd: number;
  /** Network calls whose model has no known price. */
  unpriced_calls: number;
  /** `known_usd`, or null when some network call had no known price. */
  cost_usd: number | null;
  /** Tokens of the calls answered from the reply cache, as they were when first made (not spent again). */
  reply_cache_input_tokens: number;
  reply_cache_output_tokens: number;
  /** Of the unpriced network calls, how many have an estimate, their estimated dollars, and the prices used (docs/serve.md "Cost"). */
  estimated_calls: number;
  estimated_usd: number;
  estimate_from: string[];
}

/** What a call of unknown price would cost at a known one: an estimate, and the price it used. */
export interface PriceEstimate {
  usd: number;
  /** The price used, in words: "openai:gpt-4o-mini at $0.15 / $0.60 per M tokens in / out". */
  from: string;
}

/** Estimates a network call of unknown price from its tokens (null when it cannot). */
export type Estimator = (call: {
  provider: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
}) => PriceEstimate | null;

/** One card of the board (and one row of `issue list`). */
export interface IssueSummary {
  id: string;
  title: string;
  labels: string[];
  /** The board column: the state label the issue carries. */
  state: StateLabel | "none";
  /** The plan's status; a ready plan being implemented (`dissent-implementing`) or under review (`dissent-review`) says so. */
  status: IssueListStatus;
  route: "trivial" | "load_bearing" | null;
  cycle: number;
  pending_concerns: number;
  /** The stage running now, if a plan is under way. */
  current_stage: string | null;
  /** True while a phase's transient `dissent-adv-*-running` label is on the issue. */
  running: boolean;
  /** Network calls and dollars of the current cycle; dollars are null when one of its calls had no known price. */
  calls: number;
  cost_usd: number | null;
  updated_at: string | null;
}

/** `issue show --json` (docs/issue.md) and the head of the dashboard's issue page. */
export interface IssueDetail {
  id: string;
  title: string;
  body: string;
  labels: string[];
  status: IssueStatus;
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
  /** Network calls of the current cycle (`cycle`); the same as `calls_cycle`. */
  calls: number;
  /** Network calls of the current cycle, said so (docs/issue.md). */
  calls_cycle: number;
  /** Network calls of the issue's whole life, every cycle counted (what `budget.max_calls_per_issue` counts). */
  calls_total: number;
  /** Dollars of the current cycle's network calls; null when one of them had no known price. */
  cost_usd: number | null;
  /** Dollars of every cycle's network calls; null when one of them had no known price. */
  cost_usd_total: number | null;
  /** The current cycle's steps — gate, stages, planner, reviewer — each with its calls (`issue show`'s table). */
  steps: StepRow[];
  /** Tokens of the current cycle's network calls; of the input, those the provider's prompt cache read and wrote (docs/serve.md "Cost"). */
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  url?: string;
  /** The implement phase (docs/implement.md): branch, attempts, pull request or recorded review; null before it. */
  implementation: ImplementationView | null;
}

/**
 * One step of a planning cycle as `issue plan` and `issue show` print it (docs/issue.md "Output"):
 * the gate, a stage, a trivial issue's planner, the reviewer — or the cycle's total. `usage` is read
 * from the step's ModelCall events (network calls, failed and interrupted ones included; cached ones
 * apart, free); null where a field does not apply (a one-call step has no rounds).
 */
export interface StepRow {
  phase: string;
  stage: string;
  rounds: number | null;
  /** The StageRun's outcome, `interrupted` or `running` for a stage not finished, `failed`/`interrupted` for a call. */
  outcome: string | null;
  concerns_raised: number | null;
  concerns_forwarded: number | null;
  usage: Usage;
  duration_ms: number | null;
}

/** One round of a stage: the calls made in it (producer first, then the critics in council order). */
export interface RoundEntry {
  round: number;
  calls: CallRow[];
  usage: Usage;
}

/** One finding of a critic in a round, as the stage recorded it (docs/serve.md "What was said"). */
export interface RoundFinding {
  severity: Concern["severity"];
  category: string;
  concern: string;
  evidence: string;
  /** Whether its evidence is in the round's draft (a CRITICAL/HIGH that is not counts as MEDIUM). */
  grounded: boolean;
  known_gap?: string;
}

/** A lone HIGH put to the verifier in a round, and what came of it (docs/issue.md "How a HIGH becomes blocking"). */
export interface RoundSecondOpinion {
  concern_id: string;
  concern: string;
  raised_by: string;
  /** confirmed (it blocks), refuted, unquoted (a confirm that quoted nothing of the draft), failed, skipped. */
  outcome: "confirmed" | "refuted" | "unquoted" | "failed" | "skipped";
  by?: string;
  reason?: string;
  evidence?: string;
  /** Why it was skipped or how it failed. */
  why?: string;
}

/** One round as a stage recorded it: the draft its critics read, what each said, the verifier's verdicts, what blocked. */
export interface RoundDetail {
  round: number;
  /** The artifact as the critics read it (at most 256 KiB; `draft_truncated` when cut). */
  draft: string;
  draft_truncated?: boolean;
  critics: { role: string; findings: RoundFinding[]; failed?: string }[];
  second_opinions: RoundSecondOpinion[];
  blocking: { id: string; severity: Concern["severity"]; concern: string; raised_by: string }[];
}

/** The record a finished stage keeps of its rounds (the artifact `rounds:<stage>` of its cycle). */
export interface StageRounds {
  v: 1;
  stage: string;
  rounds: RoundDetail[];
}

/** `GET /api/issues/:id/stages/:cycle/:stage`: a stage's rounds, or why there are none to show. */
export interface StageRoundsPage {
  issue_id: string;
  cycle: number;
  stage: string;
  rounds: RoundDetail[];
  /** Set when nothing is recorded: the stage is still running, was interrupted, or was planned before rounds were kept. */
  absent?: "running" | "not_recorded";
}

/** One stage as the timeline shows it: running, finished, or interrupted (a killed run resumed later). */
export interface StageEntry {
  stage: string;
  phase: StageRecord["phase"];
  cycle: number;
  status: "running" | "finished" | "interrupted";
  started_at: string;
  started_seq: number;
  finished_at: string | null;
  /** The StageRun, once finished: rounds, outcome, calls, tokens, cost, duration. */
  run: StageRecord | null;
  rounds: RoundEntry[];
  usage: Usage;
  /** Set when the stage stopped on oscillation (the round) or exhaustion. */
  oscillation_round?: number;
  exhausted?: boolean;
}

/** One planning cycle of an issue: its route, the gate, the stages and the reviewer. */
export interface CycleTimeline {
  cycle: number;
  route: "trivial" | "load_bearing" | null;
  route_reason: string | null;
  route_source: string | null;
  started_at: string | null;
  /** Calls outside any stage: the ComplexityGate, a trivial issue's planner, the plan reviewer. */
  calls: CallRow[];
  stages: StageEntry[];
  usage: Usage;
}

/** A round a concern blocked: the producer was re-run with it attached. */
export interface ConcernBlock {
  seq: number;
  at: string;
  stage: string;
  round: number;
}

/** One step of a concern's way through the pipeline. */
export interface ConcernForward {
  seq: number;
  at: string;
  /** The phase that must address it. */
  to: Concern["must_address_by"];
  reason: string;
  severity: Concern["severity"];
}

/** A producer's claim, the reviewer's confirmation or a person's resolution of a concern. */
export interface ConcernStep {
  seq: number;
  at: string;
  kind: ConcernResolution["resolution_kind"];
  by: string;
  /** False for a producer's claim on a CRITICAL/HIGH concern (it stays pending until confirmed). */
  settled: boolean;
  note: string;
}

/** An issue a wiki entry was given to (its assumption surfacer was shown the entry). */
export interface WikiUse {
  issue_id: string;
  at: string;
  seq: number;
}

/** A concern from the critic that raised it to the later issues its wiki entry was given to (docs/serve.md). */
export interface ConcernLineage {
  id: string;
  fingerprint: string;
  concern: string;
  evidence: string;
  category: string;
  severity: Concern["severity"];
  raised_severity?: Concern["severity"];
  /** Why the severity differs from what the critic wrote (docs/issue.md). */
  severity_change?: Concern["severity_change"];
  /** The verifier's verdict on a lone HIGH. */
  second_opinion?: Concern["second_opinion"];
  known_gap?: string;
  also_raised_by?: string[];
  raised_by: string;
  stage: string;
  phase: Concern["phase"];
  raised_at: string;
  human_required: boolean;
  /** Rounds it blocked, oldest first. */
  blocked: ConcernBlock[];
  forwarded: ConcernForward[];
  resolutions: ConcernStep[];
  /** Where it stands now. */
  status: "pending" | "claimed" | "settled" | "shipped";
  shipped: { pr: number; at: string; seq: number } | null;
  wiki: { id: string; title: string; stale: boolean } | null;
  given_to: WikiUse[];
}

/** The dashboard's issue page. */
export interface IssuePage {
  issue: IssueDetail;
  /** Every planning cycle, oldest first (the current one last). */
  cycles: CycleTimeline[];
  lineage: ConcernLineage[];
  /** Every call of the issue, all cycles. */
  usage: Usage;
  /** The store's last `seq` when this was read. */
  last_seq: number;
}

/** One `dissent run` (an audit run when the challenger was called). */
export interface AuditRun {
  run_id: string;
  started_at: string;
  last_at: string;
  first_seq: number;
  audit: boolean;
  revised: boolean;
  challenger_failed: boolean;
  roles: string[];
  models: string[];
  calls: CallRow[];
  usage: Usage;
}

/** A concern of the challenger on a run's draft. */
export interface RunConcern {
  category: string;
  severity: string;
  concern: string;
  evidence: string;
  suggested_fix?: string;
}

/**
 * What a run said (docs/serve.md "What was said"): its prompt, the executor's draft, the challenger's
 * concerns (the grounded ones, those whose evidence is not in the draft, apart) and the final answer.
 * From the run's ModelCall events, which hold text only with `log_content: true`.
 */
export interface RunText {
  prompt: string | null;
  draft: string | null;
  verdict: "pass" | "needs_work" | null;
  concerns: RunConcern[];
  ungrounded: RunConcern[];
  /** Why the challenger's reply could not be read (then there are no concerns to show). */
  challenger_error?: string;
  revised: boolean;
  final: string | null;
}

/** One run with its calls, and what it said when its text was recorded. */
export interface AuditRunPage extends AuditRun {
  /** Null when the run's calls carry no text: `log_content` was off when it ran. */
  text: RunText | null;
  /** The log's last `seq` the server had folded when it answered (the page follows the stream from there). */
  last_seq?: number;
}

/** One row of a cost breakdown. */
export interface UsageRow extends Usage {
  key: string;
}

/** `GET /api/stats`: calls, tokens and dollars by role, model and day (UTC). */
export interface CostStats {
  totals: Usage;
  by_role: UsageRow[];
  by_model: UsageRow[];
  by_day: UsageRow[];
  /** Issues by dollars spent (all cycles), most first. */
  by_issue: UsageRow[];
  runs: number;
  last_seq: number;
}

/** A wiki entry as served (the markdown body only on the entry's own route). */
export interface WikiEntryView extends WikiEntryFields {
  body?: string;
  given_to: WikiUse[];
}

export type { AttemptView, ImplementationView } from "./implementation.js";
