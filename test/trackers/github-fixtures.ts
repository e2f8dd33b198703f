import type { TrackerConfig } from "../../src/contracts/config.js";
import { githubTracker, type GithubOptions } from "../../src/trackers/github.js";
import type { Tracker } from "../../src/trackers/port.js";
import type { GithubDouble } from "../support/github-double.js";

/** Waits shrunk so tests stay fast: a "second" of rate-limit wait is 1 ms, retries back off 1 ms, writes are not spaced. */
export const FAST: GithubOptions = { retryBaseMs: 1, rateLimitUnitMs: 1, writeIntervalMs: 0, requestTimeoutMs: 5_000 };

export function githubConfig(d: GithubDouble, over: Partial<Extract<TrackerConfig, { type: "github" }>> = {}): Extract<TrackerConfig, { type: "github" }> {
  return { type: "github", repo: `${d.owner}/${d.repo}`, token_env: "GITHUB_TOKEN", base_url: d.url, ...over };
}

/** A GitHub tracker on the double, with the double's token unless `env` says otherwise. */
export function trackerOn(
  d: GithubDouble,
  opts: { env?: Record<string, string>; config?: Partial<Extract<TrackerConfig, { type: "github" }>>; options?: GithubOptions } = {},
): Tracker {
  return githubTracker(githubConfig(d, opts.config), opts.env ?? { GITHUB_TOKEN: d.token }, "dissent.config.yaml", { ...FAST, ...opts.options });
}

/** The error a promise rejects with (the test fails if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Error) return e;
    throw new Error(`rejected with a non-Error: ${String(e)}`);
  }
  throw new Error("expected a rejection, but it resolved");
}
