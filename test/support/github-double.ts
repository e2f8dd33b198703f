import { execFileSync } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { reviewRoutes, type CheckRunState, type ReviewCommentState, type ReviewState, type StatusState } from "./github-double-reviews.js";

export type { CheckRunState, ReviewCommentState, ReviewState, StatusState } from "./github-double-reviews.js";

/**
 * A local double of exactly the GitHub REST endpoints the adapter uses, on 127.0.0.1. Payloads
 * follow GitHub's documented shapes (REST API 2022-11-28): issue, label and comment objects,
 * 201 on create, 200 + the remaining labels on DELETE …/labels/{name}, 404/401/403/422 bodies
 * with `message` and `documentation_url`, rate-limit headers on every answer.
 */

const DOCS = "https://docs.github.com/rest";

export interface LabelState {
  id: number;
  name: string;
  color: string;
  description: string | null;
}

export interface IssueState {
  number: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  labels: string[];
  /** GitHub lists pull requests among issues, marked by a `pull_request` object. */
  pullRequest?: boolean;
}

/** A pull request: its head branch must exist in the double's bare repository when it is opened (as GitHub requires a pushed branch). */
export interface PullState {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string | null;
  draft: boolean;
  state: "open" | "closed";
  /** The head commit when it was opened or last updated. */
  sha: string;
  /** Set when it was merged (`PUT …/pulls/{n}/merge`): the merge commit on the base branch. */
  merged?: { sha: string; at: string };
  /** Who opened it (default: the token's user, as for one opened through the API). */
  login?: string;
}

/** An issue event (REST `issues/{n}/events`): `closed` names the closing commit when a merge closed it. */
export interface IssueEventState {
  id: number;
  event: "closed" | "reopened";
  commit_id: string | null;
  at: string;
}

export interface CommentState {
  id: number;
  issue: number;
  body: string;
  login: string;
  /** When it was created (ISO). */
  at: string;
  /** When it was last edited (ISO), if ever; GitHub's `updated_at`, on which the repository listing's `since` filters. */
  updated?: string;
}

/** A reaction on an issue comment. */
export interface ReactionState {
  commentId: number;
  content: string;
  login: string;
}

/** One request as the double received it. */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
  authorization: string | undefined;
}

/** A canned answer; `times` counts down (default: once). */
export interface Failure {
  method?: string;
  path?: RegExp;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  times?: number;
  /** Only a request whose Accept header matches (a media type: `diff`). */
  accept?: RegExp;
  /** Drop the connection instead of answering. */
  destroy?: boolean;
  /** Never answer (until the double closes). */
  hang?: boolean;
}

export interface GithubDouble {
  /** The base URL to configure as `tracker.base_url`. */
  url: string;
  owner: string;
  repo: string;
  token: string;
  issues: Map<number, IssueState>;
  /** Repository labels, by lower-cased name (GitHub label names are case-insensitive). */
  labels: Map<string, LabelState>;
  comments: CommentState[];
  /** Reactions on comments, in order. */
  reactions: ReactionState[];
  /** Collaborators' permissions by login (`admin`, `maintain`, `write`, `triage`, `read`); anyone else is not a collaborator (404). */
  collaborators: Map<string, string>;
  /** Adds a comment by someone (as if posted on GitHub); returns it. */
  addComment(issue: number, body: string, login: string): CommentState;
  /** Edits a comment as its author would on GitHub: a new body and `updated_at` a second after `created_at`. */
  editComment(id: number, body: string): CommentState;
  /** Pull requests, by number (numbered with the issues, as GitHub does). */
  pulls: Map<number, PullState>;
  /** Issue events by issue number, oldest first. */
  issueEvents: Map<number, IssueEventState[]>;
  /**
   * Merges a pull request as GitHub's merge button does (REST `PUT …/pulls/{n}/merge`): a merge
   * commit on the base branch of the bare repository, the pull request closed and merged, and the
   * issues its body closes (`Closes #N`, on the default branch) closed by that commit. Returns the
   * status and body GitHub answers (405 for a draft or a closed pull request).
   */
  mergePull(number: number): { status: number; body: unknown };
  /** Pull-request reviews, their inline comments, check runs and commit statuses (test/support/github-double-reviews.ts). */
  reviews: ReviewState[];
  reviewComments: ReviewCommentState[];
  checkRuns: CheckRunState[];
  statuses: StatusState[];
  /** A person's review comment on a line of a pull request's diff (throws where GitHub would refuse it). */
  addReviewComment(pull: number, c: { path: string; line: number; body: string; login: string; side?: "LEFT" | "RIGHT" }): ReviewCommentState;
  requests: SeenRequest[];
  /** Answer matching requests with a failure before the normal handling. */
  fail(f: Failure): void;
  addIssue(i: Partial<IssueState> & { number: number; title: string }): IssueState;
  addLabel(name: string, color?: string, description?: string | null): LabelState;
  /** Requests that were not reads, in order, as "METHOD path". */
  writes(): string[];
  close(): Promise<void>;
}

/** GitHub's answer to an exhausted primary rate limit (403, remaining 0, reset in epoch seconds). */
export function rateLimited(resetInSeconds: number, times = 1): Failure {
  return {
    status: 403,
    times,
    headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + resetInSeconds) },
    body: { message: "API rate limit exceeded for user ID 1.", documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api` },
  };
}

/** GitHub's answer to a secondary rate limit (429 with retry-after). */
export function secondaryRateLimited(retryAfterSeconds: number, times = 1): Failure {
  return {
    status: 429,
    times,
    headers: { "retry-after": String(retryAfterSeconds) },
    body: {
      message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
      documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits`,
    },
  };
}

/** `prefix` serves the API under a path, as GitHub Enterprise Server does ("/api/v3"). */
export async function startGithubDouble(
  opts: {
    owner?: string;
    repo?: string;
    token?: string;
    login?: string;
    prefix?: string;
    description?: string | null;
    /** A bare git repository standing for the GitHub repository: pushed branches are read from it. */
    gitRepo?: string;
    /** Git data (trees and blobs, below): a recursive tree with more entries than this is answered truncated, as GitHub does past its limits. */
    treeLimit?: number;
    /** Whose token it is: a GitHub App's (`app`, as in an Actions run: check runs work) or a person's (`token`: check-run writes are 403). Default app. */
    checks?: "app" | "token";
  } = {},
): Promise<GithubDouble> {
  const prefix = opts.prefix ?? "";
  const owner = opts.owner ?? "acme";
  const repoName = opts.repo ?? "widgets";
  const token = opts.token ?? "ghp_testTOKEN1234567890";
  const login = opts.login ?? "dissent-bot";
  const issues = new Map<number, IssueState>();
  const labels = new Map<string, LabelState>();
  const comments: CommentState[] = [];
  const reactions: ReactionState[] = [];
  const collaborators = new Map<string, string>();
  const pulls = new Map<number, PullState>();
  const issueEvents = new Map<number, IssueEventState[]>();
  const requests: SeenRequest[] = [];
  const failures: Failure[] = [];
  let nextId = 1000;
  let base = "";
  const at = "2024-05-01T12:00:00Z";
  const repoUrl = () => `${base}/repos/${owner}/${repoName}`;
  const html = `https://github.com/${owner}/${repoName}`;
  const user = { login, id: 1, node_id: "MDQ6VXNlcjE=", type: "User", site_admin: false };

  const labelJson = (l: LabelState) => ({
    id: l.id,
    node_id: `LA_${l.id}`,
    url: `${repoUrl()}/labels/${encodeURIComponent(l.name)}`,
    name: l.name,
    color: l.color,
    default: false,
    description: l.description,
  });
  const labelOf = (name: string) => labels.get(name.toLowerCase());
  const issueLabels = (i: IssueState) =>
    i.labels
      .map((n) => labelOf(n))
      .filter((l): l is LabelState => l !== undefined)
      .map(labelJson);
  const issueJson = (i: IssueState) => ({
    id: 5000 + i.number,
    node_id: `I_${i.number}`,
    url: `${repoUrl()}/issues/${i.number}`,
    repository_url: repoUrl(),
    labels_url: `${repoUrl()}/issues/${i.number}/labels{/name}`,
    comments_url: `${repoUrl()}/issues/${i.number}/comments`,
    events_url: `${repoUrl()}/issues/${i.number}/events`,
    html_url: `${html}/${i.pullRequest ? "pull" : "issues"}/${i.number}`,
    number: i.number,
    state: i.state,
    state_reason: null,
    title: i.title,
    body: i.body,
    user,
    labels: issueLabels(i),
    assignee: null,
    assignees: [],
    milestone: null,
    locked: false,
    comments: comments.filter((c) => c.issue === i.number).length,
    created_at: at,
    updated_at: at,
    closed_at: i.state === "closed" ? at : null,
    author_association: "OWNER",
    ...(i.pullRequest
      ? {
          pull_request: {
            url: `${repoUrl()}/pulls/${i.number}`,
            html_url: `${html}/pull/${i.number}`,
            diff_url: `${html}/pull/${i.number}.diff`,
            patch_url: `${html}/pull/${i.number}.patch`,
            merged_at: null,
          },
        }
      : {}),
  });
  const commentJson = (c: CommentState) => ({
    id: c.id,
    node_id: `IC_${c.id}`,
    url: `${repoUrl()}/issues/comments/${c.id}`,
    html_url: `${html}/issues/${c.issue}#issuecomment-${c.id}`,
    body: c.body,
    user: { ...user, login: c.login },
    created_at: c.at,
    updated_at: c.updated ?? c.at,
    issue_url: `${repoUrl()}/issues/${c.issue}`,
    author_association: "OWNER",
  });
  /** An edit's time: a second after creation at least, so `updated_at` is later than `created_at` as GitHub has it. */
  const edited = (c: CommentState) => new Date(Math.max(Date.now(), Date.parse(c.at) + 1000)).toISOString();
  const addLabel = (name: string, color = "ededed", description: string | null = null): LabelState => {
    const l = { id: nextId++, name, color, description };
    labels.set(name.toLowerCase(), l);
    return l;
  };

  /** The commit a branch of the bare repository points at, or undefined when it was never pushed. */
  const branchSha = (ref: string): string | undefined => {
    if (!opts.gitRepo) return undefined;
    try {
      return execFileSync("git", ["rev-parse", "--verify", "--quiet", `refs/heads/${ref}`], { cwd: opts.gitRepo, encoding: "utf8" }).trim();
    } catch {
      return undefined; // not pushed: GitHub answers 422 below
    }
  };
  const pullJson = (p: PullState) => ({
    id: 9000 + p.number,
    node_id: `PR_${p.number}`,
    url: `${repoUrl()}/pulls/${p.number}`,
    html_url: `${html}/pull/${p.number}`,
    number: p.number,
    state: p.state,
    locked: false,
    title: p.title,
    body: p.body,
    user: { ...user, login: p.login ?? login },
    draft: p.draft,
    head: { label: `${owner}:${p.head}`, ref: p.head, sha: p.state === "open" ? (branchSha(p.head) ?? p.sha) : p.sha, user },
    base: { label: `${owner}:${p.base}`, ref: p.base, sha: branchSha(p.base) ?? "", user },
    merged: p.merged !== undefined,
    merged_at: p.merged?.at ?? null,
    merge_commit_sha: p.merged?.sha ?? null,
    closed_at: p.merged?.at ?? (p.state === "closed" ? at : null),
    created_at: at,
    updated_at: at,
    author_association: "OWNER",
  });
  const eventJson = (issue: number, e: IssueEventState) => ({
    id: e.id,
    node_id: `IE_${e.id}`,
    url: `${repoUrl()}/issues/events/${e.id}`,
    actor: user,
    event: e.event,
    commit_id: e.commit_id,
    commit_url: e.commit_id ? `${repoUrl()}/commits/${e.commit_id}` : null,
    created_at: e.at,
    issue_number: issue,
    performed_via_github_app: null,
  });
  /** Closes or reopens an issue, with its event (a merge names its commit; by hand, none). */
  const setIssueState = (i: IssueState, state: "open" | "closed", commit: string | null) => {
    if (i.state === state) return;
    i.state = state;
    const list = issueEvents.get(i.number) ?? [];
    list.push({ id: nextId++, event: state === "closed" ? "closed" : "reopened", commit_id: commit, at: new Date().toISOString() });
    issueEvents.set(i.number, list);
  };
  /** A real merge commit of `head` into `base` in the bare repository (git merge-tree, no work tree needed). */
  const mergeCommit = (p: PullState): string => {
    if (!opts.gitRepo) return `${String(p.number).padStart(7, "0")}${"c".repeat(33)}`;
    const env = {
      PATH: process.env.PATH ?? "",
      GIT_AUTHOR_NAME: "octocat",
      GIT_AUTHOR_EMAIL: "octocat@example.com",
      GIT_COMMITTER_NAME: "GitHub",
      GIT_COMMITTER_EMAIL: "noreply@github.com",
    };
    const run = (args: string[]) => execFileSync("git", args, { cwd: opts.gitRepo, encoding: "utf8", env }).trim();
    const tree = run(["merge-tree", "--write-tree", `refs/heads/${p.base}`, `refs/heads/${p.head}`]).split("\n")[0] ?? "";
    const baseSha = run(["rev-parse", `refs/heads/${p.base}`]);
    const headSha = run(["rev-parse", `refs/heads/${p.head}`]);
    const sha = run(["commit-tree", tree, "-p", baseSha, "-p", headSha, "-m", `Merge pull request #${p.number} from ${owner}/${p.head}`]);
    run(["update-ref", `refs/heads/${p.base}`, sha, baseSha]);
    return sha;
  };
  const notAllowed = (message: string) => ({
    status: 405,
    body: { message, documentation_url: `${DOCS}/pulls/pulls#merge-a-pull-request`, status: "405" },
  });
  const mergePull = (number: number): { status: number; body: unknown } => {
    const p = pulls.get(number);
    if (!p) return { status: 404, body: { message: "Not Found", documentation_url: DOCS, status: "404" } };
    if (p.state !== "open") return notAllowed("Pull Request is not mergeable");
    if (p.draft) return notAllowed("Pull Request is still a draft");
    const sha = mergeCommit(p);
    p.state = "closed";
    p.merged = { sha, at: new Date().toISOString() };
    // GitHub closes the issues a pull request's body references with a closing keyword when it merges into the default branch.
    if (p.base === "main")
      for (const m of (p.body ?? "").matchAll(/\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)\b/gi)) {
        const closed = issues.get(Number(m[1]));
        if (closed) setIssueState(closed, "closed", sha);
      }
    return { status: 200, body: { sha, merged: true, message: "Pull Request successfully merged" } };
  };

  // ================================================================ Git data: refs, trees, blobs (issue 30)
  // The repository map reads a branch with no checkout through these (src/trackers/github/tree.ts), from
  // the bare repository `gitRepo`, as GitHub documents them (REST "Git database"):
  //   GET /repos/{owner}/{repo}/git/ref/heads/{branch} → { ref, node_id, url, object: { sha, type: "commit", url } }
  //   GET /repos/{owner}/{repo}/git/trees/{tree_sha}[?recursive=1] → { sha, url, tree: [{ path, mode, type, sha, size?, url }], truncated }
  //     (tree_sha may name a commit or a branch; recursive lists sub-trees too; past `treeLimit` entries, truncated: true)
  //   GET /repos/{owner}/{repo}/git/blobs/{file_sha} → { sha, node_id, size, url, content (base64, a newline every 60), encoding: "base64" }
  type GitAnswer = { status: number; body?: unknown };
  const gitOut = (args: string[]): Buffer | undefined => {
    if (!opts.gitRepo) return undefined;
    try {
      return execFileSync("git", args, { cwd: opts.gitRepo, stdio: ["ignore", "pipe", "ignore"], maxBuffer: 256 * 1024 * 1024 });
    } catch {
      return undefined;
    }
  };
  const gitData = (method: string, rest: string, query: URLSearchParams): GitAnswer | undefined => {
    if (method !== "GET" || !rest.startsWith("/git/")) return undefined;
    const missing: GitAnswer = { status: 404, body: { message: "Not Found", documentation_url: `${DOCS}/git`, status: "404" } };
    // With no `gitRepo`, the repository is one commit of no files (every repository the tests' trackers
    // name exists on GitHub): its map is empty, and reading it costs a run no warning.
    if (!opts.gitRepo) {
      const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
      const COMMIT = "e".repeat(40);
      const ref = /^\/git\/ref\/(.+)$/.exec(rest);
      if (ref && decodeURIComponent(ref[1] ?? "").startsWith("heads/")) {
        const branch = decodeURIComponent(ref[1] ?? "").slice("heads/".length);
        return {
          status: 200,
          body: {
            ref: `refs/heads/${branch}`,
            node_id: "REF_empty",
            url: `${repoUrl()}/git/refs/heads/${branch}`,
            object: { sha: COMMIT, type: "commit", url: `${repoUrl()}/git/commits/${COMMIT}` },
          },
        };
      }
      if (/^\/git\/trees\//.test(rest))
        return { status: 200, body: { sha: EMPTY_TREE, url: `${repoUrl()}/git/trees/${EMPTY_TREE}`, tree: [], truncated: false } };
      return missing;
    }
    let m: RegExpExecArray | null;
    // Octokit sends `{ref}` encoded (heads%2Fmain); GitHub takes either.
    if ((m = /^\/git\/ref\/(.+)$/.exec(rest)) && decodeURIComponent(m[1] ?? "").startsWith("heads/")) {
      const branch = decodeURIComponent(m[1] ?? "").slice("heads/".length);
      const sha = branchSha(branch);
      if (!sha) return missing;
      return {
        status: 200,
        body: {
          ref: `refs/heads/${branch}`,
          node_id: `REF_${sha.slice(0, 8)}`,
          url: `${repoUrl()}/git/refs/heads/${branch}`,
          object: { sha, type: "commit", url: `${repoUrl()}/git/commits/${sha}` },
        },
      };
    }
    if ((m = /^\/git\/trees\/(.+)$/.exec(rest))) {
      const ref = decodeURIComponent(m[1] ?? "");
      const tree = gitOut(["rev-parse", "--verify", "--quiet", `${/^[0-9a-f]{40}$/.test(ref) ? ref : `refs/heads/${ref}`}^{tree}`])
        ?.toString("utf8")
        .trim();
      if (!tree) return missing;
      const recursive = query.get("recursive") !== null && query.get("recursive") !== "0" && query.get("recursive") !== "false";
      const listing = gitOut(["ls-tree", "-l", "-z", ...(recursive ? ["-r", "-t"] : []), tree])?.toString("utf8") ?? "";
      const entries = listing
        .split("\0")
        .filter(Boolean)
        .map((line) => {
          const [info = "", path = ""] = line.split("\t");
          const [mode = "", type = "", sha = "", size = "-"] = info.split(/\s+/);
          const url = `${repoUrl()}/git/${type === "tree" ? "trees" : "blobs"}/${sha}`;
          return { path, mode, type, sha, ...(type === "blob" ? { size: Number(size) } : {}), url };
        });
      const limit = opts.treeLimit ?? 100_000;
      const truncated = recursive && entries.length > limit;
      return { status: 200, body: { sha: tree, url: `${repoUrl()}/git/trees/${tree}`, tree: truncated ? entries.slice(0, limit) : entries, truncated } };
    }
    if ((m = /^\/git\/blobs\/([0-9a-f]{40})$/.exec(rest))) {
      const sha = m[1] ?? "";
      if (gitOut(["cat-file", "-t", sha])?.toString("utf8").trim() !== "blob") return missing;
      const bytes = gitOut(["cat-file", "blob", sha]) ?? Buffer.alloc(0);
      const content = (bytes.toString("base64").match(/.{1,60}/g) ?? []).join("\n");
      return {
        status: 200,
        body: {
          sha,
          node_id: `B_${sha.slice(0, 8)}`,
          size: bytes.length,
          url: `${repoUrl()}/git/blobs/${sha}`,
          content: content ? `${content}\n` : "",
          encoding: "base64",
        },
      };
    }
    return missing;
  };
  // ================================================================ end of Git data

  // ================================================================ Reviews, check runs, statuses (issue 33)
  const reviewing = reviewRoutes({
    owner,
    repo: repoName,
    repoUrl,
    html,
    login,
    gitRepo: opts.gitRepo,
    nextId: () => nextId++,
    checks: opts.checks ?? "app",
    pull: (n) => {
      const p = pulls.get(n);
      if (!p) return undefined;
      if (p.state === "open") p.sha = branchSha(p.head) ?? p.sha; // a push to its branch moves an open pull request's head
      return { base: p.base, head: p.head, sha: p.sha, login: p.login ?? login, state: p.state };
    },
  });

  /** `text`: a raw body (a `diff` media type), sent as text/plain instead of JSON. */
  /** Every pull request is an issue on GitHub: `/issues/{n}` (comments, labels) serves it, marked `pull_request`. */
  const pullAsIssue = (n: number): IssueState | undefined => {
    const p = pulls.get(n);
    if (!p) return undefined;
    const i: IssueState = { number: n, title: p.title, body: p.body, state: p.state, labels: [], pullRequest: true };
    issues.set(n, i);
    return i;
  };
  type Answer = { status: number; body?: unknown; headers?: Record<string, string>; text?: string };
  const notFound = (): Answer => ({ status: 404, body: { message: "Not Found", documentation_url: DOCS, status: "404" } });
  /** GitHub paginates with `per_page` (default 30, max 100) and a Link header. */
  const page = (items: unknown[], path: string, query: URLSearchParams): Answer => {
    const per = Math.min(Number(query.get("per_page") ?? 30) || 30, 100);
    const p = Math.max(Number(query.get("page") ?? 1) || 1, 1);
    const last = Math.max(Math.ceil(items.length / per), 1);
    const link = (n: number, rel: string) => {
      const q = new URLSearchParams(query);
      q.set("page", String(n));
      q.set("per_page", String(per));
      return `<${base}${path}?${q.toString()}>; rel="${rel}"`;
    };
    const links = [...(p < last ? [link(p + 1, "next"), link(last, "last")] : []), ...(p > 1 ? [link(1, "first"), link(p - 1, "prev")] : [])];
    return { status: 200, body: items.slice((p - 1) * per, p * per), ...(links.length ? { headers: { link: links.join(", ") } } : {}) };
  };

  const route = (method: string, path: string, query: URLSearchParams, body: unknown, accept = ""): Answer => {
    const prefix = `/repos/${owner}/${repoName}`;
    if (!path.toLowerCase().startsWith(prefix.toLowerCase())) return notFound();
    const rest = path.slice(prefix.length);
    const input = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
    let m: RegExpExecArray | null;
    const git = gitData(method, rest, query); // Git data (issue 30), above
    if (git) return git;
    const reviewed = reviewing.route(method, rest, query, input); // reviews, check runs, statuses (issue 33), above
    if (reviewed) return reviewed;

    // GET /repos/{owner}/{repo}: the repository (the fields dissent reads, and a few around them).
    if (method === "GET" && rest === "") {
      return {
        status: 200,
        body: {
          id: 1,
          node_id: "R_1",
          name: repoName,
          full_name: `${owner}/${repoName}`,
          private: false,
          owner: user,
          html_url: html,
          description: opts.description === undefined ? "Widgets for everyone." : opts.description,
          fork: false,
          url: repoUrl(),
          default_branch: "main",
        },
      };
    }
    if (method === "GET" && rest === "/issues") {
      const state = query.get("state") ?? "open";
      const list = [...issues.values()].filter((i) => state === "all" || i.state === state).sort((a, b) => b.number - a.number);
      return page(list.map(issueJson), path, query);
    }
    if (method === "GET" && rest === "/labels") return page([...labels.values()].map(labelJson), path, query);
    if (method === "GET" && rest === "/pulls") {
      const state = query.get("state") ?? "open";
      const head = query.get("head"); // "owner:branch"
      const list = [...pulls.values()].filter((p) => (state === "all" || p.state === state) && (!head || `${owner}:${p.head}` === head));
      return page(list.map(pullJson), path, query);
    }
    if (method === "POST" && rest === "/pulls") {
      const head = String(input.head ?? "");
      const baseRef = String(input.base ?? "");
      const invalid = (field: string, message?: string): Answer => ({
        status: 422,
        body: {
          message: "Validation Failed",
          errors: [{ resource: "PullRequest", field, code: message ? "custom" : "invalid", ...(message ? { message } : {}) }],
          documentation_url: `${DOCS}/pulls/pulls#create-a-pull-request`,
        },
      });
      const sha = branchSha(head);
      if (!sha) return invalid("head");
      if (!branchSha(baseRef)) return invalid("base");
      if ([...pulls.values()].some((p) => p.state === "open" && p.head === head)) return invalid("head", `A pull request already exists for ${owner}:${head}.`);
      const number = Math.max(0, ...issues.keys(), ...pulls.keys()) + 1;
      const pr: PullState = {
        number,
        head,
        base: baseRef,
        title: String(input.title ?? ""),
        body: typeof input.body === "string" ? input.body : null,
        draft: input.draft === true,
        state: "open",
        sha,
      };
      pulls.set(number, pr);
      return { status: 201, body: pullJson(pr) };
    }
    if (method === "PUT" && (m = /^\/pulls\/(\d+)\/merge$/.exec(rest))) {
      const r = mergePull(Number(m[1]));
      return { status: r.status, body: r.body };
    }
    // The pull requests a commit belongs to: its head commits and its merge commit.
    if (method === "GET" && (m = /^\/commits\/([0-9a-f]{7,40})\/pulls$/.exec(rest))) {
      const sha = m[1] ?? "";
      return page([...pulls.values()].filter((p) => p.sha === sha || p.merged?.sha === sha).map(pullJson), path, query);
    }
    if ((m = /^\/pulls\/(\d+)$/.exec(rest))) {
      const pr = pulls.get(Number(m[1]));
      if (!pr) return notFound();
      // `Accept: application/vnd.github.diff` (or .v3.diff): the diff base…head as git renders it (three-dot: from the merge base).
      if (method === "GET" && /\.diff\b|\bdiff$/.test(accept)) {
        const head = pr.state === "open" ? (branchSha(pr.head) ?? pr.sha) : pr.sha;
        const text = opts.gitRepo
          ? execFileSync("git", ["diff", `refs/heads/${pr.base}...${head}`], { cwd: opts.gitRepo, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
          : "";
        return { status: 200, text, headers: { "content-type": "application/vnd.github.diff; charset=utf-8" } };
      }
      if (method === "GET") return { status: 200, body: pullJson(pr) };
      if (method === "PATCH") {
        if (typeof input.title === "string") pr.title = input.title;
        if (typeof input.body === "string") pr.body = input.body;
        if (input.state === "open" || input.state === "closed") pr.state = input.state;
        pr.sha = branchSha(pr.head) ?? pr.sha;
        return { status: 200, body: pullJson(pr) };
      }
    }
    if (method === "POST" && rest === "/labels") {
      const name = String(input.name ?? "");
      if (labelOf(name)) {
        return {
          status: 422,
          body: {
            message: "Validation Failed",
            errors: [{ resource: "Label", code: "already_exists", field: "name" }],
            documentation_url: `${DOCS}/issues/labels#create-a-label`,
          },
        };
      }
      return {
        status: 201,
        body: labelJson(addLabel(name, String(input.color ?? "ededed"), typeof input.description === "string" ? input.description : null)),
      };
    }
    // GET …/collaborators/{username}/permission: `permission` folds maintain into write and triage into read; `role_name` keeps them.
    if (method === "GET" && (m = /^\/collaborators\/([^/]+)\/permission$/.exec(rest))) {
      const name = decodeURIComponent(m[1] ?? "");
      const role = collaborators.get(name.toLowerCase());
      if (role === undefined) return { status: 404, body: { message: `${name} is not a user`, documentation_url: DOCS, status: "404" } };
      const permission = role === "maintain" ? "write" : role === "triage" ? "read" : role;
      return { status: 200, body: { permission, role_name: role, user: { ...user, login: name } } };
    }
    if (method === "GET" && rest === "/issues/comments") {
      const since = query.get("since");
      const list = comments.filter((c) => since === null || (c.updated ?? c.at) >= since).sort((a, b) => a.id - b.id);
      return page(list.map(commentJson), path, query);
    }
    if (method === "POST" && (m = /^\/issues\/comments\/(\d+)\/reactions$/.exec(rest))) {
      const c = comments.find((x) => x.id === Number(m?.[1]));
      if (!c) return notFound();
      const content = String(input.content ?? "");
      if (!["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"].includes(content))
        return { status: 422, body: { message: "Validation Failed", documentation_url: DOCS } };
      reactions.push({ commentId: c.id, content, login });
      return { status: 201, body: { id: nextId++, node_id: "REA_1", user, content, created_at: at } };
    }
    if (method === "PATCH" && (m = /^\/issues\/comments\/(\d+)$/.exec(rest))) {
      const c = comments.find((x) => x.id === Number(m?.[1]));
      if (!c) return notFound();
      c.body = String(input.body ?? "");
      c.updated = edited(c);
      return { status: 200, body: commentJson(c) };
    }
    if (!(m = /^\/issues\/(\d+)(\/.*)?$/.exec(rest))) return notFound();
    const issue = issues.get(Number(m[1])) ?? pullAsIssue(Number(m[1]));
    const sub = m[2] ?? "";
    if (!issue) return notFound();
    if (method === "GET" && sub === "") return { status: 200, body: issueJson(issue) };
    if (method === "PATCH" && sub === "") {
      if (typeof input.title === "string") issue.title = input.title;
      if (typeof input.body === "string") issue.body = input.body;
      if (input.state === "open" || input.state === "closed") setIssueState(issue, input.state, null); // by hand: no commit
      return { status: 200, body: issueJson(issue) };
    }
    if (method === "GET" && sub === "/events")
      return page(
        (issueEvents.get(issue.number) ?? []).map((e) => eventJson(issue.number, e)),
        path,
        query,
      );
    if (method === "POST" && sub === "/labels") {
      const wanted = Array.isArray(input.labels) ? input.labels.map(String) : [];
      for (const name of wanted) {
        const l = labelOf(name) ?? addLabel(name); // GitHub creates a label it does not know, in its default colour
        if (!issue.labels.some((x) => x.toLowerCase() === l.name.toLowerCase())) issue.labels.push(l.name);
      }
      return { status: 200, body: issueLabels(issue) };
    }
    if (method === "DELETE" && (m = /^\/labels\/(.+)$/.exec(sub))) {
      const name = decodeURIComponent(m[1] ?? "").toLowerCase();
      const at = issue.labels.findIndex((x) => x.toLowerCase() === name);
      if (at < 0)
        return {
          status: 404,
          body: { message: "Label does not exist", documentation_url: `${DOCS}/issues/labels#remove-a-label-from-an-issue`, status: "404" },
        };
      issue.labels.splice(at, 1);
      return { status: 200, body: issueLabels(issue) };
    }
    if (method === "GET" && sub === "/comments") return page(comments.filter((c) => c.issue === issue.number).map(commentJson), path, query);
    if (method === "POST" && sub === "/comments") {
      const c: CommentState = { id: nextId++, issue: issue.number, body: String(input.body ?? ""), login, at: new Date().toISOString() };
      comments.push(c);
      return { status: 201, body: commentJson(c) };
    }
    return notFound();
  };

  const answer = (res: ServerResponse, a: Answer) => {
    const reset = String(Math.floor(Date.now() / 1000) + 3600);
    res.writeHead(a.status, {
      "content-type": "application/json; charset=utf-8",
      "x-github-api-version-selected": "2022-11-28",
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "4999",
      "x-ratelimit-reset": reset,
      "x-ratelimit-used": "1",
      "x-ratelimit-resource": "core",
      ...a.headers,
    });
    res.end(a.text !== undefined ? a.text : a.body === undefined ? "" : JSON.stringify(a.body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", base);
    const method = req.method ?? "GET";
    if (!url.pathname.startsWith(`${prefix}/`)) {
      answer(res, { status: 404, body: { message: "Not Found", documentation_url: DOCS } });
      return;
    }
    url.pathname = url.pathname.slice(prefix.length);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      answer(res, { status: 400, body: { message: "Problems parsing JSON", documentation_url: DOCS } });
      return;
    }
    requests.push({ method, path: url.pathname, query: url.searchParams, body, authorization: req.headers.authorization });
    const failure = failures.find(
      (f) =>
        (f.method === undefined || f.method === method) &&
        (f.path === undefined || f.path.test(url.pathname)) &&
        (f.accept === undefined || f.accept.test(req.headers.accept ?? "")),
    );
    if (failure) {
      failure.times = (failure.times ?? 1) - 1;
      if (failure.times <= 0) failures.splice(failures.indexOf(failure), 1);
      if (failure.destroy) {
        req.socket.destroy();
        return;
      }
      if (failure.hang) return;
      answer(res, {
        status: failure.status,
        body: failure.body ?? { message: `status ${failure.status}`, documentation_url: DOCS },
        ...(failure.headers ? { headers: failure.headers } : {}),
      });
      return;
    }
    const auth = /^(?:token|bearer) (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (auth !== token) {
      answer(res, { status: 401, body: { message: "Bad credentials", documentation_url: DOCS, status: "401" } });
      return;
    }
    answer(res, route(method, url.pathname, url.searchParams, body, req.headers.accept ?? ""));
  };

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => void handle(req, res));
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;

  return {
    url: base,
    owner,
    repo: repoName,
    token,
    issues,
    labels,
    comments,
    reactions,
    collaborators,
    addComment(issue, body, by) {
      const c: CommentState = { id: nextId++, issue, body, login: by, at: new Date().toISOString() };
      comments.push(c);
      return c;
    },
    editComment(id, body) {
      const c = comments.find((x) => x.id === id);
      if (!c) throw new Error(`no comment ${id}`);
      c.body = body;
      c.updated = edited(c);
      return c;
    },
    pulls,
    issueEvents,
    mergePull,
    reviews: reviewing.reviews,
    reviewComments: reviewing.reviewComments,
    checkRuns: reviewing.checkRuns,
    statuses: reviewing.statuses,
    addReviewComment: reviewing.addReviewComment,
    requests,
    fail: (f) => void failures.push({ ...f }),
    addIssue(i) {
      const issue: IssueState = { body: "", state: "open", labels: [], ...i };
      issues.set(issue.number, issue);
      for (const l of issue.labels) if (!labelOf(l)) addLabel(l);
      return issue;
    },
    addLabel,
    writes: () =>
      requests.filter((r) => r.method !== "GET").map((r) => `${r.method} ${decodeURIComponent(r.path.slice(`/repos/${owner}/${repoName}`.length))}`),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
