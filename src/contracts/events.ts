import { z } from "zod";
import { CallRecord } from "./audit.js";
import { Concern, ConcernResolution, StagePhase, StageRecord } from "./concern.js";

const base = {
  at: z.string(),
  issue_id: z.string().nullable(),
};

/** A model call: hashes and sizes, never content unless `log_content: true`. */
export const ModelCallEvent = z.object({
  type: z.literal("ModelCall"),
  ...base,
  run_id: z.string().optional(),
  ...CallRecord.shape,
  request_hash: z.string(),
  prompt_chars: z.number(),
  reply_hash: z.string().optional(),
  reply_chars: z.number().optional(),
  prompt_file: z.string().optional(),
  prompt_file_hash: z.string().optional(),
  wiki_entries: z.array(z.string()).optional(),
  fallback_reason: z.string().optional(),
  attempts: z.number().int().optional(),
  finish_reason: z.string().optional(),
  stage: z.string().optional(),
  round: z.number().int().optional(),
  content: z.object({ request: z.unknown(), reply: z.string().optional() }).optional(),
});

export const AdversarialStageStarted = z.object({
  type: z.literal("AdversarialStageStarted"),
  ...base,
  stage: z.string(),
  phase: StagePhase,
  cycle: z.number().int(),
});

export const AdversarialStageCompleted = z.object({
  type: z.literal("AdversarialStageCompleted"),
  ...base,
  stage: z.string(),
  phase: StagePhase,
  cycle: z.number().int(),
  stage_run: StageRecord,
});

export const AdversarialRetryExhausted = z.object({
  type: z.literal("AdversarialRetryExhausted"),
  ...base,
  stage: z.string(),
  phase: StagePhase,
  rounds: z.number().int(),
  unresolved: z.array(z.string()),
});

export const OscillationDetected = z.object({
  type: z.literal("OscillationDetected"),
  ...base,
  stage: z.string(),
  phase: StagePhase,
  round: z.number().int(),
  fingerprints: z.array(z.string()),
});

export const ComplexityGateRouted = z.object({
  type: z.literal("ComplexityGateRouted"),
  ...base,
  route: z.enum(["trivial", "load_bearing"]),
  reason: z.string(),
  source: z.enum(["label", "heuristic", "model", "fallback"]),
  cycle: z.number().int(),
});

export const ShippedWithKnownGap = z.object({
  type: z.literal("ShippedWithKnownGap"),
  ...base,
  pr: z.number().int(),
  concerns: z.array(Concern),
  wiki_entries: z.array(z.string()),
});

export const ConcernForwarded = z.object({
  type: z.literal("ConcernForwarded"),
  ...base,
  concern: Concern,
  reason: z.enum(["advisory", "exhausted", "oscillation", "budget", "crashed", "carried", "review"]),
});

/**
 * A concern blocked a round of its stage (docs/issue.md): the producer is re-run with it attached.
 * Not folded into the pending concerns — a blocking concern resolved inside the stage never becomes
 * pending — but on the record, so every concern that blocks has its events and keeps its id.
 */
export const ConcernBlocked = z.object({
  type: z.literal("ConcernBlocked"),
  ...base,
  stage: z.string(),
  round: z.number().int(),
  concern: Concern,
});

/** A factory worker could not plan an issue this time (docs/factory.md); it is retried on a later poll with backoff. */
export const IssuePlanFailed = z.object({
  type: z.literal("IssuePlanFailed"),
  ...base,
  cycle: z.number().int(),
  attempt: z.number().int(),
  error: z.string(),
  retry_at: z.string().nullable(),
  /** The ceiling of the issue's life it reached (budget.max_calls_per_issue, …) and its value then: not retried until it is raised. */
  ceiling: z.object({ setting: z.string(), max: z.number() }).optional(),
});

/** What one run of a command (the agent, the tests) left: exit code, time, and a bounded, redacted tail of its output. */
export const CommandRun = z.object({
  exit_code: z.number().int().nullable(),
  /** The signal that ended it, when one did (a timeout kills its process group). */
  signal: z.string().nullable(),
  timed_out: z.boolean(),
  duration_ms: z.number(),
  /** The last lines of its output (stdout and stderr), at most 8 KiB, secrets redacted. */
  output_tail: z.string(),
  /** Bytes of output it wrote in all. */
  output_bytes: z.number().int(),
});
export type CommandRun = z.infer<typeof CommandRun>;

/** How an attempt ended: committed and tested, the agent timed out or failed, it wrote outside its worktree, it changed nothing. */
export const AttemptOutcome = z.enum(["tested", "untested", "agent_failed", "timed_out", "escaped", "no_changes"]);
export type AttemptOutcome = z.infer<typeof AttemptOutcome>;

/** Started an attempt of the coding agent (docs/implement.md): a run killed during it resumes at this attempt. */
export const ImplementAttemptStarted = z.object({
  type: z.literal("ImplementAttemptStarted"),
  ...base,
  run: z.number().int(),
  attempt: z.number().int(),
  branch: z.string(),
});

/**
 * A command of an attempt started (docs/implement.md#resuming): the coding agent or the test command,
 * with what finds its process group again — so a dissent killed while it ran has it stopped by the
 * next one before the attempt runs again.
 */
export const ImplementProcessStarted = z.object({
  type: z.literal("ImplementProcessStarted"),
  ...base,
  run: z.number().int(),
  attempt: z.number().int(),
  command: z.enum(["agent", "test"]),
  sandbox: z.enum(["bubblewrap", "none"]),
  /** Its process group (its leader's pid), in the pid space `space` (a machine's boot and PID namespace). */
  pgid: z.number().int(),
  space: z.string(),
  /** The leader's start time (clock ticks after boot): a pid used again later is not taken for it. */
  started: z.number(),
  /** The value of DISSENT_AGENT_RUN in its environment: finds what it left outside its group. */
  mark: z.string(),
});

/** One attempt of the coding agent (docs/implement.md): agent, commit, tests. */
export const ImplementAttempt = z.object({
  type: z.literal("ImplementAttempt"),
  ...base,
  /** The issue's implement run (each `issue implement` that starts afresh is a new one). */
  run: z.number().int(),
  attempt: z.number().int(),
  branch: z.string(),
  base_sha: z.string(),
  /** The branch head after the attempt (null when nothing could be committed). */
  commit: z.string().nullable(),
  outcome: AttemptOutcome,
  agent: CommandRun,
  diff: z.object({ files: z.number().int(), insertions: z.number().int(), deletions: z.number().int() }),
  test: CommandRun.nullable(),
  /** Paths outside the worktree the agent changed (outcome `escaped`). */
  escaped: z.array(z.string()).optional(),
  /** Values dissent holds as secrets found in the diff (redacted before anyone saw it; docs/implement.md#safety). */
  secrets: z.number().int().optional(),
});

/** The review's result went out (docs/implement.md): a GitHub pull request, or (local tracker, open_pr false) the store. */
export const PullRequestOpened = z.object({
  type: z.literal("PullRequestOpened"),
  ...base,
  run: z.number().int(),
  where: z.enum(["github", "store"]),
  branch: z.string(),
  number: z.number().int().nullable(),
  url: z.string().nullable(),
  draft: z.boolean(),
  /** True when an earlier pull request of the issue was updated in place. */
  updated: z.boolean(),
  body_chars: z.number().int(),
  /** A diff held a secret dissent keeps: the branch was not pushed (`withheld`), or pushed as one commit (`squashed`). */
  secrets: z.enum(["withheld", "squashed"]).optional(),
});

/**
 * `dissent pr review` reviewed a pull request's head (docs/github-action.md "Reviewing any pull
 * request"): the review and the `dissent` check it left (issue_id is `pr-<N>`).
 */
export const PullRequestReviewed = z.object({
  type: z.literal("PullRequestReviewed"),
  ...base,
  number: z.number().int(),
  head: z.string(),
  /** The issue whose plan was the contract, when dissent planned the issue the pull request closes; null: its own description was. */
  linked_issue: z.string().nullable(),
  /** The review posted; null when this head's review was posted before (a re-run posts nothing twice). */
  review: z.number().int().nullable(),
  event: z.enum(["COMMENT", "REQUEST_CHANGES"]).nullable(),
  conclusion: z.enum(["success", "neutral", "failure", "cancelled"]),
  findings: z.number().int(),
  blocking: z.number().int(),
  inline: z.number().int(),
  resolved: z.number().int(),
});

/**
 * `issue implement` ended with no pull request (docs/implement.md): `final` when the run is over (the
 * agent wrote outside its worktree: a person looks); otherwise a factory attempt that failed, retried
 * on a later poll with backoff (or, past a ceiling, not until its setting is raised) and resumed at its attempt.
 */
export const ImplementFailed = z.object({
  type: z.literal("ImplementFailed"),
  ...base,
  run: z.number().int(),
  /** The planning cycle whose plan was being implemented. */
  cycle: z.number().int(),
  /** A factory failure: the factory's attempt at this round. A final one (an escape): the agent attempt that escaped. */
  attempt: z.number().int(),
  error: z.string(),
  retry_at: z.string().nullable(),
  ceiling: z.object({ setting: z.string(), max: z.number() }).optional(),
  final: z.boolean(),
});

export const ConcernAddressed = z.object({
  type: z.literal("ConcernAddressed"),
  ...base,
  resolution: ConcernResolution,
});

export const LabelChanged = z.object({
  type: z.literal("LabelChanged"),
  ...base,
  added: z.array(z.string()),
  removed: z.array(z.string()),
  labels: z.array(z.string()),
});

/** A `/dissent` comment command was handled (docs/github-action.md): recorded so one comment is handled once. */
export const CommentCommandHandled = z.object({
  type: z.literal("CommentCommand"),
  ...base,
  comment_id: z.number().int(),
  user: z.string(),
  command: z.string(),
  outcome: z.enum(["done", "refused", "failed", "unknown"]),
  detail: z.string().optional(),
});

/** Every event dissent records, one discriminated union (docs/issue.md). */
export const DissentEvent = z.discriminatedUnion("type", [
  AdversarialStageStarted,
  AdversarialStageCompleted,
  AdversarialRetryExhausted,
  OscillationDetected,
  ComplexityGateRouted,
  ShippedWithKnownGap,
  ConcernForwarded,
  ConcernAddressed,
  LabelChanged,
  ModelCallEvent,
  IssuePlanFailed,
  ConcernBlocked,
  CommentCommandHandled,
  ImplementAttemptStarted,
  ImplementProcessStarted,
  ImplementAttempt,
  PullRequestOpened,
  PullRequestReviewed,
  ImplementFailed,
]);
export type DissentEvent = z.infer<typeof DissentEvent>;
export type EventType = DissentEvent["type"];
export type EventOf<T extends EventType> = Extract<DissentEvent, { type: T }>;
export type ModelCallEvent = EventOf<"ModelCall">;

/**
 * An event as a producer hands it to the bus: `at` is stamped on append — unless the event already
 * carries the time it happened (one buffered until its stage commits keeps the time it was emitted).
 */
export type NewEvent = DissentEvent extends infer E ? (E extends DissentEvent ? Omit<E, "at"> & { at?: string } : never) : never;
