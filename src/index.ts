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
