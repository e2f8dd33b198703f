import { DissentError, messageOf, RunError, TrackerAuthError } from "../../errors.js";
import { redact } from "../../redact.js";
import { missingOptional } from "../../opt-in.js";
import { formatLimit } from "../../files/format-limit.js";
import { replyTooLarge } from "../../models/reply-cap.js";

/** Where a GitHub call went, for messages that name the repo and what to do. */
export interface GithubErrorContext {
  repo: string;
  tokenEnv: string;
  baseUrl: string;
  /** True when `tracker.base_url` was set (GitHub Enterprise, a proxy, a test double). */
  customBaseUrl: boolean;
  /** The bound on each request, for the message of one that timed out. */
  timeoutMs: number;
  /** Never shown; removed from anything GitHub or the network said. */
  token: string;
}

/** The shape of an Octokit RequestError, read without trusting it. */
interface HttpFailure {
  status: number;
  headers: Record<string, string | undefined>;
  message: string;
}

function httpFailure(e: unknown): HttpFailure | undefined {
  if (typeof e !== "object" || e === null || !("status" in e) || typeof e.status !== "number") return undefined;
  const response = "response" in e && typeof e.response === "object" && e.response !== null ? (e.response as { headers?: unknown; data?: unknown }) : undefined;
  if (!response) return undefined; // no response: the request never got an answer
  const headers = typeof response.headers === "object" && response.headers !== null ? (response.headers as Record<string, string | undefined>) : {};
  const data = response.data;
  const message =
    typeof data === "object" && data !== null && "message" in data && typeof data.message === "string" ? data.message : typeof data === "string" ? data : "";
  return { status: e.status, headers, message };
}

/** A request our per-request timeout aborted (fetch rejects with the signal's TimeoutError). */
function timedOut(e: unknown): boolean {
  const cause = e instanceof Error ? e.cause : undefined;
  return [e, cause].some((x) => x instanceof Error && x.name === "TimeoutError");
}

const clock = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString().slice(11, 19);

/** One line of what GitHub or the network said, safe to show: no token, no user:password in a URL. */
const said = (text: string, ctx: GithubErrorContext) =>
  redact(text, [ctx.token])
    .replace(/\/\/[^/\s@]+@/g, "//")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 200);

function rateLimitLine(f: HttpFailure, ctx: GithubErrorContext, action: string): string | undefined {
  const reset = Number(f.headers["x-ratelimit-reset"]);
  const retryAfter = Number(f.headers["retry-after"]);
  if (f.headers["x-ratelimit-remaining"] === "0") {
    const when = Number.isFinite(reset) && reset > 0 ? `; it resets at ${clock(reset)} UTC: wait until then` : ": wait for it to reset (within the hour)";
    return `GitHub's API rate limit for the token in ${ctx.tokenEnv} is used up (${f.status}) for ${ctx.repo} while ${action}${when} and run the command again`;
  }
  if (f.status === 429 || /secondary rate limit/i.test(f.message)) {
    const when = Number.isFinite(retryAfter) && retryAfter > 0 ? ` ${retryAfter} s` : " a few minutes";
    return `GitHub's secondary rate limit stopped requests (${f.status}) for ${ctx.repo} while ${action}: wait${when} and run the command again, one dissent at a time`;
  }
  return undefined;
}

/**
 * Turns whatever a GitHub call threw into ONE line naming the repo and what to do (docs/errors.md),
 * as a RunError (exit 1). The token never appears: messages are built here, and what GitHub or
 * the network said is redacted. Errors of our own pass through unchanged.
 */
export function githubError(e: unknown, ctx: GithubErrorContext, action: string): DissentError {
  if (DissentError.isInstance(e)) return e;
  const missing = missingOptional(e);
  if (missing) return missing;
  const big = replyTooLarge(e);
  if (big)
    return new RunError(
      `GitHub at ${ctx.baseUrl} sent a reply larger than ${formatLimit(big.limit)} for ${ctx.repo} while ${action}, the limit tracker.max_reply_bytes sets: it was not read further; raise tracker.max_reply_bytes if replies this large are expected${ctx.customBaseUrl ? `, or check the server at ${ctx.baseUrl}` : ""}`,
    );
  const f = httpFailure(e);
  if (!f) {
    const where = ctx.customBaseUrl ? ` and tracker.base_url (${ctx.baseUrl})` : "";
    if (timedOut(e)) {
      return new RunError(
        `GitHub at ${ctx.baseUrl} did not answer within ${ctx.timeoutMs < 1000 ? `${ctx.timeoutMs} ms` : `${Math.round(ctx.timeoutMs / 1000)} s`} (after retries) for ${ctx.repo} while ${action}: check the network connection${where}, then run the command again`,
      );
    }
    return new RunError(
      `cannot reach GitHub at ${ctx.baseUrl} for ${ctx.repo} while ${action} (${said(messageOf(e), ctx)}): check the network connection${where}, then run the command again`,
    );
  }
  const rateLimited = f.status === 403 || f.status === 429 ? rateLimitLine(f, ctx, action) : undefined;
  if (rateLimited) return new RunError(rateLimited);
  const detail = f.message ? ` (GitHub: ${said(f.message, ctx)})` : "";
  switch (f.status) {
    case 401:
      return new TrackerAuthError(
        `GitHub rejected the token in ${ctx.tokenEnv} (401) for ${ctx.repo} while ${action}: check the token; it may be mistyped, revoked or expired`,
      );
    case 403:
      return new RunError(
        `GitHub denied access (403) to ${ctx.repo} while ${action}${detail}: give the token in ${ctx.tokenEnv} read and write access to the repository's issues`,
      );
    case 404:
      return new RunError(
        `GitHub found nothing (404) while ${action} in ${ctx.repo}: check tracker.repo and the issue number, and that the token in ${ctx.tokenEnv} can see the repository`,
      );
    case 410:
      return new RunError(`GitHub says it is gone (410) while ${action} in ${ctx.repo}: issues may be disabled on the repository, or the issue was deleted`);
    default:
      if (f.status >= 500) {
        return new RunError(
          `GitHub kept failing (${f.status}, after retries) for ${ctx.repo} while ${action}: try again later${ctx.customBaseUrl ? `, or check the server at ${ctx.baseUrl}` : " (https://www.githubstatus.com)"}`,
        );
      }
      return new RunError(`GitHub refused the request (${f.status}) for ${ctx.repo} while ${action}${detail}`);
  }
}

/** The HTTP status of a GitHub failure, if it had one. */
export function statusOf(e: unknown): number | undefined {
  return httpFailure(e)?.status;
}
