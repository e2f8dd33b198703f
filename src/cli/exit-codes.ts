import { DissentError, Interrupted } from "../errors.js";

/** docs/errors.md: 0 done · 1 a run failed · 2 usage or configuration · 130 SIGINT · 143 SIGTERM. One table, by error name. */
const CODES: Record<string, number> = {
  UsageError: 2,
  ConfigError: 2,
  AuditLimitExceeded: 1,
  ReplayMiss: 1,
  BudgetExceeded: 1,
  ProviderAuthError: 1,
  ProviderError: 1,
  ReplyFormatError: 1,
  RunError: 1,
  LeaseHeld: 1,
  StoreError: 1,
  TrackerAuthError: 1,
  GitError: 1,
  AgentEscaped: 1,
};

/** The exit code for what a command threw. */
export function exitCodeOf(e: unknown): number {
  if (Interrupted.isInstance(e)) return e.signal === "SIGTERM" ? 143 : 130;
  if (DissentError.isInstance(e)) return CODES[e.name] ?? 1;
  return 1;
}
