import type { TrackerConfig } from "../contracts/config.js";
import { ConfigError, DissentError, Interrupted, RunError, UsageError } from "../errors.js";
import { readPages } from "./github/pages.js";
import { DEFAULT_OPTIONS, githubClient, type GithubClient, type GithubOptions, type GithubSession } from "./github/client.js";
import { MERGED_MARKER, PLAN_MARKER, REPLY_MARKER, mergedComment, planComment } from "./github/render.js";
import { commandPort, type CommandPort } from "./github/commands.js";
import { commentWriter } from "./github/comments.js";
import { githubError, type GithubErrorContext } from "./github/errors.js";
import { moveLabels } from "./github/labels.js";
import { treeReader } from "./github/tree.js";
import { pullRequestPort } from "./github/pulls.js";
import type { PullRequestPort } from "../github/pr-port.js";
import type { GitHubTreeReader } from "../code/types.js";
import type { MergedClosure, TrackedIssue, Tracker } from "./port.js";

export type { GithubOptions } from "./github/client.js";

/** The GitHub tracker, with what comment commands need (docs/github-action.md). */
export interface GithubTracker extends Tracker, CommandPort {
  readonly kind: "github";
  /** dissent's one reply comment on an issue (refusals, answers when there is no plan yet), updated in place. */
  reply(id: string, body: string): Promise<void>;
  /** The repository's branches, trees and blobs, for the repository map when there is no checkout (docs/issue.md). */
  treeReader(): GitHubTreeReader;
  /** The web address of dissent's plan comment on the issue, or null when it has none yet. */
  planUrl(id: string): Promise<string | null>;
  /**
   * The merged pull request that closed the issue (its last `closed` event names the commit; GitHub
   * lists the pull requests of that commit), or null when it is open or was closed another way.
   */
  mergedPullRequest(id: string): Promise<number | null>;
  /** The repository's pull requests, their reviews, check runs and commit statuses (docs/adr/037). */
  pullRequests(): PullRequestPort;
}

/** True for the GitHub tracker. */
export const isGithubTracker = (t: Tracker): t is GithubTracker => t.kind === "github" && "reply" in t;

type GithubConfig = Extract<TrackerConfig, { type: "github" }>;

/** An issue closed by a merged pull request while in one of these states is carried over (docs/factory.md). */
const MERGEABLE = ["dissent-ready", "dissent-hitl", "dissent-plan", "dissent-implementing", "dissent-review"];

/** True for the labels of an issue whose merge is carried over: in a state above, and not recorded as merged yet. */
export const isMergeable = (labels: readonly string[]): boolean => !labels.includes("dissent-fixed") && labels.some((l) => MERGEABLE.includes(l));

/** The API's address in a GitHub Actions run (`https://api.github.com`, or GitHub Enterprise Server's `https://host/api/v3`). */
export const API_URL_ENV = "GITHUB_API_URL";

/** Env knob for the spacing between writes, in ms (unset: the throttling plugin's, as GitHub advises). */
export const WRITE_INTERVAL_ENV = "DISSENT_GITHUB_WRITE_INTERVAL_MS";

interface IssueData {
  number: number;
  title: string;
  body?: string | null;
  html_url: string;
  labels: (string | { name?: string })[];
  pull_request?: unknown;
}

const toIssue = (d: IssueData): TrackedIssue => ({
  id: String(d.number),
  title: d.title,
  body: d.body ?? "",
  labels: d.labels.map((l) => (typeof l === "string" ? l : (l.name ?? ""))).filter((l) => l !== ""),
  url: d.html_url,
});

/** A URL fit for messages: without any user:password in it. */
function shown(url: string): string {
  const u = new URL(url); // the config schema checked it is one
  u.username = "";
  u.password = "";
  return u.toString().replace(/\/+$/, "");
}

/** The error of a step stopped by the run's signal: its reason when it is one of ours (Interrupted naming the signal). */
function interruption(signal: AbortSignal): DissentError {
  const reason: unknown = signal.reason;
  return DissentError.isInstance(reason) ? reason : new Interrupted("interrupted");
}

/** `work`, or the signal's abort, whichever comes first: Octokit's retry and rate-limit waits do not watch the signal. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(interruption(signal));
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(interruption(signal));
    signal.addEventListener("abort", stop, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", stop);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", stop);
        reject(e);
      },
    );
  });
}

/** An issue id as GitHub numbers it: "12" or "#12". */
export function issueNumber(id: string): number {
  const m = /^#?([1-9]\d{0,9})$/.exec(id.trim());
  if (!m?.[1]) throw new UsageError(`'${id}' is not a GitHub issue number (give it as 12 or #12)`);
  return Number(m[1]);
}

/**
 * The GitHub tracker (issue #6): issues are the work, `dissent-*` labels the state machine, the
 * plan one comment found again by a hidden marker. The merge is noted in a second comment of its
 * own (also found by its marker, so recording it twice leaves one), which notifies the issue's
 * watchers and leaves the plan comment as the plan of record. Octokit loads on first use.
 */
export function githubTracker(config: GithubConfig, env: Record<string, string | undefined>, source: string, options: GithubOptions = {}): GithubTracker {
  const tokenEnv = config.token_env;
  const token = env[tokenEnv];
  if (!token) throw new ConfigError(`${source}: tracker github (${config.repo}) needs a token in the environment variable ${tokenEnv}, which is not set`);
  const interval = env[WRITE_INTERVAL_ENV];
  if (interval !== undefined && !/^\d+$/.test(interval)) throw new ConfigError(`${WRITE_INTERVAL_ENV} must be a number of milliseconds, not '${interval}'`);
  const opts: GithubOptions = {
    ...(interval !== undefined ? { writeIntervalMs: Number(interval) } : {}),
    ...(config.max_reply_bytes !== undefined ? { maxReplyBytes: config.max_reply_bytes } : {}),
    ...options,
  };

  const [owner = "", repo = ""] = config.repo.split("/");
  // tracker.base_url, else the API of the Actions run (GitHub Enterprise Server names its own), else github.com's.
  const fromEnv = config.base_url === undefined ? env[API_URL_ENV] || undefined : undefined;
  if (fromEnv !== undefined && !/^https?:\/\/[^\s/]/.test(fromEnv))
    throw new ConfigError(`${API_URL_ENV} must be the API's http(s) URL, not '${fromEnv.slice(0, 200)}'`);
  const baseUrl = (config.base_url ?? fromEnv ?? "https://api.github.com").replace(/\/+$/, "");
  const ctx: GithubErrorContext = {
    repo: config.repo,
    tokenEnv,
    baseUrl: shown(baseUrl),
    customBaseUrl: baseUrl !== "https://api.github.com",
    timeoutMs: opts.requestTimeoutMs ?? DEFAULT_OPTIONS.requestTimeoutMs,
    token,
  };
  let client: Promise<GithubClient> | undefined;
  const session: GithubSession = {
    owner,
    repo,
    key: `${baseUrl} ${config.repo.toLowerCase()}`,
    async step(action, fn) {
      try {
        return await untilAborted(fn(await (client ??= githubClient(baseUrl, token, opts))), opts.signal);
      } catch (e) {
        if (opts.signal?.aborted) throw interruption(opts.signal); // the run was stopped: not a GitHub failure
        throw githubError(e, ctx, action);
      }
    },
    pages(action, first) {
      const request = opts.signal ? { signal: opts.signal } : {};
      return session.step(action, (gh) =>
        readPages({
          action,
          repo: config.repo,
          baseUrl,
          ...(opts.maxPages ? { maxPages: opts.maxPages } : {}),
          ...(opts.say ? { warn: opts.say } : {}),
          first: () => first(gh, request),
          next: async (url) => {
            const r = await gh.request({ method: "GET", url, request });
            return { data: Array.isArray(r.data) ? r.data : [], headers: r.headers };
          },
        }),
      );
    },
  };
  const comments = commentWriter(session);
  const writeComment = comments.write;

  const getIssue = async (n: number): Promise<TrackedIssue> => {
    const { data } = await session.step(`reading issue #${n}`, (gh) => gh.rest.issues.get({ owner, repo, issue_number: n }));
    if (data.pull_request) throw new RunError(`#${n} in ${config.repo} is a pull request, not an issue: dissent plans issues`);
    return toIssue(data);
  };

  /** The merged pull request whose commit closed issue `n` last, or null. */
  const mergedBy = async (n: number): Promise<number | null> => {
    const events = await session.pages(`reading the events of issue #${n}`, (gh, request) =>
      gh.rest.issues.listEvents({ owner, repo, issue_number: n, per_page: 100, request }),
    );
    const last = [...events].reverse().find((e) => e.event === "closed" || e.event === "reopened");
    const sha = last?.event === "closed" ? last.commit_id : null;
    if (!sha) return null;
    const pulls = await session.step(`finding the pull request of commit ${sha.slice(0, 7)}`, (gh) =>
      gh.rest.repos.listPullRequestsAssociatedWithCommit({ owner, repo, commit_sha: sha }),
    );
    return pulls.data.find((p) => p.merged_at)?.number ?? null;
  };

  return {
    kind: "github",
    name: config.repo,
    ...commandPort(session),
    treeReader: () => treeReader(session),
    pullRequests: () => pullRequestPort(session, config.repo),
    async reply(id, body) {
      const n = issueNumber(id);
      await writeComment(n, REPLY_MARKER, `${REPLY_MARKER}\n${body}\n`);
    },
    async planUrl(id) {
      return comments.urlOf(issueNumber(id), PLAN_MARKER);
    },
    async mergedPullRequest(id) {
      const n = issueNumber(id);
      await getIssue(n); // a pull request's number is refused here, as everywhere
      return mergedBy(n);
    },
    async get(id) {
      return getIssue(issueNumber(id));
    },
    async list() {
      const all = await session.pages("listing open issues", (gh, request) =>
        gh.rest.issues.listForRepo({ owner, repo, state: "open", per_page: 100, request }),
      );
      return all.filter((d) => !d.pull_request).map(toIssue); // GitHub lists pull requests among issues
    },
    async setLabels(id, change) {
      const n = issueNumber(id);
      return moveLabels(session, n, change, async () => (await getIssue(n)).labels);
    },
    async project() {
      const { data } = await session.step(`reading repository ${config.repo}`, (gh) => gh.rest.repos.get({ owner, repo }));
      return { name: data.full_name || config.repo, description: data.description ?? null };
    },
    async publishPlan(id, report) {
      const n = issueNumber(id);
      await writeComment(n, PLAN_MARKER, planComment(String(n), report));
    },
    /**
     * The implemented issue's pull request (docs/implement.md): the open one whose head is the branch
     * is updated in place (title, body); otherwise one is opened, as a draft when asked. GitHub keeps a
     * draft a draft on update: marking it ready is the reviewer's call.
     */
    async openPullRequest(input) {
      const found = await session.step(`finding the pull request of ${input.head}`, (gh) =>
        gh.rest.pulls.list({ owner, repo, head: `${owner}:${input.head}`, state: "open", per_page: 10 }),
      );
      const open = found.data[0];
      if (open) {
        const { data } = await session.step(`updating pull request #${open.number}`, (gh) =>
          gh.rest.pulls.update({ owner, repo, pull_number: open.number, title: input.title, body: input.body }),
        );
        return { number: data.number, url: data.html_url, updated: true };
      }
      const { data } = await session.step(`opening a pull request for ${input.head}`, (gh) =>
        gh.rest.pulls.create({ owner, repo, head: input.head, base: input.base, title: input.title, body: input.body, draft: input.draft }),
      );
      return { number: data.number, url: data.html_url, updated: false };
    },
    async recordMerged(id, pr, gaps) {
      const n = issueNumber(id);
      await writeComment(n, MERGED_MARKER, mergedComment(String(n), pr, gaps));
    },
    /**
     * Closed issues still labelled ready, hitl or plan whose closing commit belongs to a merged pull
     * request: the issue's last `closed` event names the commit, and GitHub lists the pull requests
     * associated with that commit (REST: issues/{n}/events, commits/{sha}/pulls).
     */
    async mergedClosures() {
      const closed = await session.pages("listing closed issues", (gh, request) =>
        gh.rest.issues.listForRepo({ owner, repo, state: "closed", per_page: 100, request }),
      );
      const out: MergedClosure[] = [];
      for (const d of closed) {
        if (d.pull_request) continue;
        const issue = toIssue(d);
        if (!isMergeable(issue.labels)) continue;
        const pr = await mergedBy(d.number);
        if (pr !== null) out.push({ issue, pr });
      }
      return out;
    },
  };
}
