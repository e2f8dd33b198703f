/** The longest a failed issue waits for its next attempt. */
export const MAX_BACKOFF_MS = 3_600_000;

/**
 * When a failed attempt is tried again (docs/factory.md: "retried on a later poll with backoff"):
 * one poll interval after the first failure, doubling with each further one, at most an hour, and
 * never sooner than the provider asked (Retry-After).
 */
export function retryDelayMs(attempt: number, pollIntervalMs: number, retryAfterMs?: number): number {
  const exponential = pollIntervalMs * 2 ** Math.max(0, Math.min(attempt - 1, 30));
  return Math.min(MAX_BACKOFF_MS, Math.max(exponential, retryAfterMs ?? 0));
}
