import type { Octokit } from "@octokit/rest";
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
  /** Bounds each HTTP request. */
  requestTimeoutMs?: number;
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
} as const;

/** Octokit with the throttling and retry plugins. */
export type GithubClient = Octokit;

/** Statuses plugin-retry must leave alone: client errors, and 429, which plugin-throttling waits out per its headers. */
const DO_NOT_RETRY = [400, 401, 403, 404, 410, 422, 429, 451];

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
  const MyOctokit = Octokit.plugin(throttling, retry);
  return new MyOctokit({
    auth: token,
    baseUrl,
    userAgent: "dissent",
    // Octokit would log to the console; every failure reaches the caller as a thrown error instead.
    log: { debug: quiet, info: quiet, warn, error: warn },
    request: {
      // Each request is bounded in time, and aborted with the run when the caller's signal says so.
      fetch: (url: string | URL, init?: RequestInit) => {
        const timeout = AbortSignal.timeout(o.requestTimeoutMs);
        return fetch(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
      },
    },
    throttle: { onRateLimit: wait, onSecondaryRateLimit: wait, retryAfterBaseValue: o.rateLimitUnitMs, ...spacing },
    retry: { retries: o.retries, retryAfterBaseValue: o.retryBaseMs, doNotRetry: DO_NOT_RETRY },
  });
}

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
