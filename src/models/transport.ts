import { errorDetail } from "./server-error.js";
import { codeOf } from "../errors.js";
import { replyTooLarge } from "./reply-cap.js";

/** How a failed model call is treated: retried, falling back, aborting, or fatal. */
export type FailureKind =
  /** connection refused/reset, DNS, a body cut off mid-way: retry, then fall back to the secondary */
  | "unreachable"
  /** the attempt outlived call_timeout_ms: retry, then fall back */
  | "timeout"
  /** HTTP 5xx: retry, then fall back */
  | "server"
  /** HTTP 429 without a quota message: retry honouring Retry-After, no fallback */
  | "rate_limited"
  /** 401, 402, 403, insufficient quota: never retried, never soft-failed */
  | "auth"
  /** a reply with nothing in it once reasoning is removed (docs/configuration.md): retried, never cached */
  | "empty_reply"
  /** a reply the provider cut off (finish_reason length, or a stream that stopped unfinished): retried, never cached */
  | "truncated"
  /** a reply larger than max_reply_bytes, cut as it arrived (docs/limits.md): not retried (the same request gets the same reply), never cached */
  | "reply_too_large"
  /** anything else (other 4xx, malformed response): not retried */
  | "fatal";

export interface Classified {
  kind: FailureKind;
  status?: number;
  retryAfterMs?: number;
  detail: string;
}

interface ApiCallErrorLike {
  name: string;
  message: string;
  statusCode?: number;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
  isRetryable?: boolean;
  cause?: unknown;
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ETIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

function networkCode(e: unknown, depth = 0): string | undefined {
  if (!e || typeof e !== "object" || depth > 6) return undefined;
  const code = codeOf(e);
  if (typeof code === "string" && NETWORK_CODES.has(code)) return code;
  return networkCode((e as { cause?: unknown }).cause, depth + 1);
}

/** "terminated", "other side closed": undici's words for a body cut off mid-way. */
function cutOff(e: unknown, depth = 0): boolean {
  if (!e || typeof e !== "object" || depth > 6) return false;
  const m = (e as { message?: unknown }).message;
  if (typeof m === "string" && /^(terminated|other side closed|socket hang up)$/i.test(m.trim())) return true;
  return cutOff((e as { cause?: unknown }).cause, depth + 1);
}

/** Parses Retry-After (seconds or HTTP date) or retry-after-ms into milliseconds. */
export function retryAfterMs(headers: Record<string, string> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const get = (k: string) => headers[k] ?? headers[k.toLowerCase()] ?? Object.entries(headers).find(([h]) => h.toLowerCase() === k)?.[1];
  const ms = get("retry-after-ms");
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms);
  const ra = get("retry-after");
  if (ra === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra.trim())) return Number(ra) * 1000;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const QUOTA = /insufficient[_ ]quota|quota exceeded|exceeded your current quota|billing/i;

/** Sorts an error thrown by a provider call into a FailureKind. */
export function classify(e: unknown, timedOut: boolean): Classified {
  if (timedOut) return { kind: "timeout", detail: "timed out" };
  const tooLarge = replyTooLarge(e);
  if (tooLarge) return { kind: "reply_too_large", detail: tooLarge.message };
  const err = (e ?? {}) as ApiCallErrorLike;
  const status = typeof err.statusCode === "number" ? err.statusCode : undefined;
  // An HTTP error's detail is the server's own text, whatever shape its body has (docs/errors.md).
  const detail = status !== undefined && status >= 400 ? errorDetail(err.message ?? "", status, err.responseBody) : err.message || String(e);
  // The cause chain first: a connection reset mid-body arrives wrapped with the 200 it started as.
  // An HTTP error answer's own message is the server's text, which may say anything ("terminated"):
  // for one, only its causes can tell of a connection cut off.
  const cut = cutOff(status !== undefined && status >= 400 ? (e as { cause?: unknown }).cause : e);
  if (networkCode(e) || cut)
    return { kind: "unreachable", detail: networkCode(e) ? `${detail} (${networkCode(e)})` : detail, ...(status !== undefined ? { status } : {}) };
  if (status !== undefined && status >= 400) {
    const body = `${err.responseBody ?? ""} ${detail}`;
    if (status === 401 || status === 402 || status === 403) return { kind: "auth", status, detail };
    if (status === 429 && QUOTA.test(body)) return { kind: "auth", status, detail };
    if (status === 429) return { kind: "rate_limited", status, retryAfterMs: retryAfterMs(err.responseHeaders), detail };
    if (status === 408) return { kind: "timeout", status, detail };
    if (status >= 500) return { kind: "server", status, retryAfterMs: retryAfterMs(err.responseHeaders), detail };
    return { kind: "fatal", status, detail };
  }
  if (err.name === "AI_APICallError" && err.isRetryable) return { kind: "unreachable", detail };
  if (err.name === "TimeoutError") return { kind: "timeout", detail: "timed out" };
  return { kind: "fatal", ...(status !== undefined ? { status } : {}), detail };
}

/** Kinds worth another attempt of the same call. */
export const RETRYABLE: ReadonlySet<FailureKind> = new Set(["unreachable", "timeout", "server", "rate_limited", "empty_reply", "truncated"]);
/** Kinds that mean "the primary cannot be reached" and so try the secondary (docs/configuration.md). */
export const FALLBACK: ReadonlySet<FailureKind> = new Set(["unreachable", "timeout", "server"]);
