import { BudgetExceeded, ConfigError, Interrupted, LeaseHeld, ProviderAuthError, StoreError, TrackerAuthError } from "../errors.js";

/**
 * What a failure means for the factory (docs/factory.md): an auth or configuration error, or a store it
 * cannot use, stops it; an interruption is the shutdown; another worker's lease means "not now"; an
 * issue past a ceiling of its life (calls, dollars, cycles: docs/issue.md) is not retried until the
 * setting is raised; anything else (a provider down, a tracker hiccup) is this failure,
 * recorded and retried later.
 */
export type Verdict = "fatal" | "interrupted" | "lease_held" | "ceiling" | "failed";

export function verdictOf(e: unknown): Verdict {
  if (Interrupted.isInstance(e)) return "interrupted";
  if (LeaseHeld.isInstance(e)) return "lease_held";
  if (BudgetExceeded.isInstance(e) && e.setting) return "ceiling";
  if (ConfigError.isInstance(e) || ProviderAuthError.isInstance(e) || TrackerAuthError.isInstance(e) || StoreError.isInstance(e)) return "fatal";
  return "failed";
}
