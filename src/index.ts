/**
 * dissent — bounded, auditable adversarial review of LLM work: the package entry (ADR-014).
 * The AI SDK middleware is `dissent/ai-sdk`; scripted models and a model server for tests are
 * `dissent/testing`. Everything else in the package is internal.
 */

// The audit gate over any AI SDK models (docs/library.md, §10).
export { challenge, runAudit, type ChallengeOptions, type LibraryCallOptions, type RunAuditOptions } from "./gate/run-audit.js";
export type { ChallengeInput, ChallengeResult } from "./gate/challenge.js";
export { MAX_AUDIT_PASSES, MAX_REVISION_PASSES, type GateResult } from "./gate/audit-gate.js";

// The CLI's wiring as a library (docs/library.md).
export { createDissent, type CacheMode, type CreateDissentOptions, type Dissent, type RunInput } from "./dissent.js";
export type { Config } from "./contracts/config.js";
export type { EventQuery, Store, StoredEvent } from "./store/port.js";
export type { PlanReport, TrackedIssue, Tracker } from "./trackers/port.js";
export type { PipelineProgress, PlanResult } from "./pipeline/plan-issue.js";
export type { MergeResult } from "./carryover/merge.js";
export type { IssueDetail, IssueSummary } from "./read-models/types.js";
export type { Redactor } from "./redact.js";
export type { ObservedCall } from "./models/types.js";

// The adversarial loop and the concern's identity (docs/issue.md, §5).
export {
  AdversarialRetryLoop,
  MAX_RETRIES,
  type Critic,
  type LoopContext,
  type LoopResult,
  type Produced,
  type Producer,
  type RoundInput,
  type StageSpec,
  type Verifier,
} from "./adversarial/retry-loop.js";
export { fingerprint } from "./adversarial/fingerprint.js";
export { severityText } from "./contracts/severity-text.js";

// The zod schemas of every JSON the contract names (validate, or derive JSON Schema from them).
export { AuditConcern, AuditInput, AuditMeta, AuditReply, CallRecord, RunOutput, ShownConcern } from "./contracts/audit.js";
export {
  Concern,
  ConcernResolution,
  Finding,
  FindingsReply,
  StageRun,
  VerifierReply,
  type ResolutionKind,
  type Severity,
} from "./contracts/concern.js";
export { DissentEvent, type NewEvent } from "./contracts/events.js";
export { ConfigFile } from "./contracts/config.js";
export { LABELS } from "./contracts/labels.js";

// A reply cache for the library's calls.
export { memoryCache, type CachedReply, type ReplyCache } from "./models/cache.js";

// Errors you can branch on: a stable `name`, data, and `isInstance` (docs/errors.md; exit codes are the CLI's).
export {
  AuditLimitExceeded,
  BudgetExceeded,
  ConfigError,
  DissentError,
  Interrupted,
  isFatal,
  LeaseHeld,
  ProviderAuthError,
  ProviderError,
  ReplayMiss,
  ReplyFormatError,
  RunError,
  StoreError,
  UsageError,
  type ProviderFailure,
} from "./errors.js";
