import type { Octokit } from "@octokit/rest";
import { ReplyTooLarge, replyTooLarge } from "../../models/reply-cap.js";
import type { Page } from "./pages.js";

/** Timing of the GitHub client; production uses the defaults, tests shrink the waits. */
export interface GithubOptions {
  /** Retries after a 5xx or a network failure (plugin-retry); the nth waits n² × `retryBaseMs`. */
  retries?: number;
  retryBaseMs?: number;
  /** Milliseconds per second of a rate-limit wait (plugin-throttling's retryAfterBaseValue). */
  rateLimitUnitMs?: number;
  /** Rate-limit waits per request, at most. */
  rateLimitRetries?: number;
  /** The longest rate-limit wait accepted, in seconds; a later reset fails at once. */
  maxRateLimitWaitS?: number;
  /** Spacing between writes; unset keeps the throttling plugin's (GitHub's advice: 1 s, 3 s for notifying writes). */
  writeIntervalMs?: number;
  /** Bounds each HTTP request, from sending it to the last byte of its reply (a body that drips is cut too). */
  requestTimeoutMs?: number;
  /** The most bytes one reply may take as it arrives (`tracker.max_reply_bytes`); past it the request fails, unretried. */
  maxReplyBytes?: number;
  /** Octokit's warnings (deprecations, a failing limit handler); dropped when unset. */
  warn?: (message: string) => void;
  /** dissent's own warnings about GitHub (a listing stopped at the page cap). */
  say?: (message: string) => void;
  /** Aborts every request and wait (Ctrl-C, SIGTERM): pagination and retries stop with the run. */
  signal?: AbortSignal;
  /** Pages one listing reads at most (default MAX_PAGES). */
  maxPages?: number;
}

export const DEFAULT_OPTIONS = {
  retries: 2,
  retryBaseMs: 1000,
  rateLimitUnitMs: 1000,
  rateLimitRetries: 2,
  maxRateLimitWaitS: 60,
  requestTimeoutMs: 30_000,
  maxReplyBytes: 32 * 1024 * 1024,
} as const;

/** Octokit with the throttling and retry plugins. */
export type GithubClient = Octokit;

/** Statuses plugin-retry must leave alone: client errors, and 429, which plugin-throttling waits out per its headers. */
const DO_NOT_RETRY = [400, 401, 403, 404, 406, 410, 422, 429, 451];

/** Builds the client; Octokit and its plugins load only here, when the config names GitHub. */
export async function githubClient(baseUrl: string, token: string, opts: GithubOptions): Promise<GithubClient> {
  const [{ Octokit }, { throttling }, { retry }] = await Promise.all([
    import("@octokit/rest"),
    import("@octokit/plugin-throttling"),
    import("@octokit/plugin-retry"),
  ]);
  const o = { ...DEFAULT_OPTIONS, ...opts };
  // Waits are bounded twice: at most `rateLimitRetries` of them, none longer than `maxRateLimitWaitS`.
  const wait = (retryAfter: number, _options: unknown, _octokit: unknown, retryCount: number) =>
    retryCount < o.rateLimitRetries && retryAfter <= o.maxRateLimitWaitS;
  const spacing = o.writeIntervalMs === undefined ? {} : await writeGroups(o.writeIntervalMs);
  const warn = (...args: unknown[]) => opts.warn?.(args.map(String).join(" "));
  const quiet = () => undefined;
  // bounded first: its hook is the innermost, so a reply past the cap is not retried by the plugins around it.
  const MyOctokit = Octokit.plugin(notRetriedWhenTooLarge, throttling, retry);
  return new MyOctokit({
    auth: token,
    baseUrl,
    userAgent: "dissent",
    // Octokit would log to the console; every failure reaches the caller as a thrown error instead.
    log: { debug: quiet, info: quiet, warn, error: warn },
    request: { fetch: boundedFetch(o.requestTimeoutMs, o.maxReplyBytes) },
    throttle: { onRateLimit: wait, onSecondaryRateLimit: wait, retryAfterBaseValue: o.rateLimitUnitMs, ...spacing },
    retry: { retries: o.retries, retryAfterBaseValue: o.retryBaseMs, doNotRetry: DO_NOT_RETRY },
  });
}

/**
 * A fetch bounded per request (docs/limits.md "GitHub"): one timer, from sending the request to the
 * last byte of its reply, aborts it — a body that drips a byte a second is cut at the deadline — and
 * the reply is read here, counted as it arrives, and refused past `maxBytes` (a Content-Length
 * beyond it before a byte is read) with the connection dropped. Octokit gets the reply whole: it
 * would take a body that failed midway for an empty one. The caller's signal (the run's) aborts it
 * too. The timer holds the controller, so nothing is collected before it fires.
 */
export function boundedFetch(timeoutMs: number, maxBytes: number, base: typeof fetch = fetch) {
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException(`no whole answer within ${timeoutMs} ms`, "TimeoutError")), timeoutMs);
    const outer = init?.signal ?? undefined;
    const onAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) onAbort();
    else outer?.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await base(url, { ...init, signal: controller.signal });
      const body = await readWhole(res, maxBytes);
      const whole = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
      Object.defineProperty(whole, "url", { value: res.url });
      return whole;
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    }
  };
}

/** A reply's body, at most `limit` bytes as it arrives (after any decompression); null when it has none. */
async function readWhole(res: Response, limit: number): Promise<Uint8Array | null> {
  if (!res.body) return null;
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await res.body.cancel().catch(() => undefined);
    throw new ReplyTooLarge(limit);
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let seen = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += value.byteLength;
    if (seen > limit) {
      await reader.cancel().catch(() => undefined); // the connection is dropped: nothing more is read
      throw new ReplyTooLarge(limit);
    }
    chunks.push(value);
  }
  if ([101, 204, 205, 304].includes(res.status)) return null; // a null-body status: a Response cannot carry one
  return Buffer.concat(chunks);
}

/**
 * An Octokit plugin: a reply past the cap (Octokit wraps what fetch threw as a status-500
 * RequestError, which plugin-retry would retry) is thrown as itself, which no plugin retries: the
 * same request would get the same reply.
 */
const notRetriedWhenTooLarge: Parameters<typeof Octokit.plugin>[0] = (octokit) => {
  octokit.hook.wrap("request", async (request, options) => {
    try {
      return await request(options);
    } catch (e) {
      throw replyTooLarge(e) ?? e;
    }
  });
  return {};
};

/** The throttling plugin's write groups with another spacing (its own are fixed at 1 s and 3 s). */
async function writeGroups(minTime: number) {
  const { default: Bottleneck } = await import("bottleneck");
  return {
    write: new Bottleneck.Group({ id: "dissent-write", maxConcurrent: 1, minTime }),
    notifications: new Bottleneck.Group({ id: "dissent-notifications", maxConcurrent: 1, minTime }),
  };
}

/** One repository on one GitHub, as the adapter's parts share it. */
export interface GithubSession {
  owner: string;
  repo: string;
  /** Names the repository on its server ("base_url owner/name"), for per-process memos. */
  key: string;
  /** Runs one step against the API; any failure becomes one line naming the repo and the step; an abort ends it at once. */
  step<T>(action: string, fn: (gh: GithubClient) => Promise<T>): Promise<T>;
  /** Every page of a listing, as one step: bounded, aborted with the run, next links followed only on the API's origin (pages.ts). */
  pages<T>(action: string, first: (gh: GithubClient, request: { signal?: AbortSignal }) => Promise<Page<T>>): Promise<T[]>;
}
