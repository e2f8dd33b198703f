/** dissent — bounded, auditable adversarial review of LLM work. The library's public face. */
export { runAudit, type RunAuditOptions } from "./gate/run-audit.js";
export { auditGate, MAX_AUDIT_PASSES, MAX_REVISION_PASSES, PassLimits, type GateInput, type GateResult } from "./gate/audit-gate.js";
export { groundConcerns } from "./gate/grounding.js";
export * from "./contracts/audit.js";
export * from "./contracts/concern.js";
export * from "./contracts/events.js";
export { ConfigFile, ProviderConfig, RouteConfig, TrackerConfig, type Config } from "./contracts/config.js";
export { parseStructured, jsonObjects, stripThink } from "./models/json.js";
export { memoryCache, type ReplyCache, type CachedReply } from "./models/cache.js";
export {
  DissentError,
  UsageError,
  ConfigError,
  AuditLimitExceeded,
  ReplayMiss,
  BudgetExceeded,
  ProviderAuthError,
  ProviderError,
  ReplyFormatError,
  RunError,
  Interrupted,
} from "./errors.js";
export { fingerprint, fingerprintTokens } from "./adversarial/fingerprint.js";
export { tally, type Vote, type Tally, type TallyContext } from "./adversarial/tally.js";
export {
  AdversarialRetryLoop,
  MAX_RETRIES,
  MAX_ALL_FAILED_ROUNDS,
  type StageSpec,
  type Producer,
  type Produced,
  type Critic,
  type RoundInput,
  type LoopContext,
  type LoopResult,
} from "./adversarial/retry-loop.js";
export { callBudget, type IssueBudget } from "./adversarial/budget.js";
export { planIssue, type PlanIssueDeps, type PlanResult, type KnownGaps } from "./pipeline/plan-issue.js";
export { STAGES, type PipelineStage } from "./pipeline/stages.js";
export { LABELS, TRANSITIONS, transition } from "./contracts/labels.js";
export { complexityGate, type GateDecision } from "./pipeline/complexity-gate.js";
export { foldState, reduce as reduceState } from "./store/state.js";
export type { Tracker, TrackedIssue, PlanReport } from "./trackers/port.js";
