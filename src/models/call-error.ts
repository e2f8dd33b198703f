import { ProviderAuthError, ProviderError } from "../errors.js";
import type { CallRecord } from "../contracts/audit.js";
import { formatLimit } from "../files/format-limit.js";
import type { AttemptsFailed } from "./attempt.js";
import { DEFAULT_MAX_REPLY_BYTES } from "./reply-cap.js";
import type { RoleRoute, ModelTarget } from "./types.js";

/** The one line a failed target's attempts come to: what failed, how, and the setting or key to check. */
function describe(target: ModelTarget, f: AttemptsFailed): string {
  const what = `provider '${target.provider}' (${target.model})`;
  const tries = f.attempts > 1 ? ` after ${f.attempts} attempts` : "";
  const detail = f.failure.detail;
  switch (f.failure.kind) {
    case "auth":
      return `${what} refused the request (${f.failure.status ?? "auth"}): ${detail}${target.keyHint ? `; check ${target.keyHint}` : ""}`;
    case "timeout":
      // An in-process model's timeout says why it was not retried (docs/local-engine.md).
      return detail.startsWith("timed out after ") ? `${what} ${detail}` : `${what} timed out${tries}`;
    case "unreachable":
      return `could not reach ${what} at ${target.endpoint.replace(/^[^ ]+ /, "")}${tries}: ${detail}${target.unreachableHint ? `. ${target.unreachableHint}` : ""}`;
    case "empty_reply":
    case "truncated":
      return `${detail}${tries}`;
    case "reply_too_large":
      // Names the setting (docs/limits.md): the reply was read no further, not printed and not cached.
      return `${what} sent a reply larger than ${formatLimit(target.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES)}, the limit ${target.maxReplyBytesFrom ?? "max_reply_bytes"} sets: it was not read further nor cached; raise ${target.maxReplyBytesFrom ?? "max_reply_bytes"} if replies this large are expected`;
    default:
      return `${what} failed${tries}: ${detail}`;
  }
}

/** A target whose attempts all failed: the last one's error, and the records of every failed call so far. */
export interface TargetFailure {
  target: ModelTarget;
  error: AttemptsFailed;
  records: CallRecord[];
}

/**
 * The error a call ends with when no target answered (docs/errors.md): the last target's failure,
 * naming the primary's when the secondary failed after it; auth failures are ProviderAuthError.
 */
export function callError(route: RoleRoute, last: TargetFailure, fallbackReason: string | undefined): ProviderError {
  const { target, error } = last;
  let message = describe(target, error);
  if (target.route === "secondary" && fallbackReason)
    message += ` (the primary '${route.primary.provider}' (${route.primary.model}) failed first: ${fallbackReason})`;
  const failure = {
    provider: target.provider,
    model: target.model,
    kind: error.failure.kind,
    attempts: error.attempts,
    ...(error.failure.status !== undefined ? { status: error.failure.status } : {}),
    ...(error.failure.retryAfterMs !== undefined ? { retryAfterMs: error.failure.retryAfterMs } : {}),
  };
  return error.failure.kind === "auth"
    ? new ProviderAuthError(message, { ...failure, calls: last.records })
    : new ProviderError(message, { ...failure, calls: last.records });
}
