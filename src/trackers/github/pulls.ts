import { isRefused, type CheckRunFields, type PullRef, type PullRequestPort, type Refused } from "../../github/pr-port.js";
import type { GithubSession } from "./client.js";
import { statusOf } from "./errors.js";

/** What GitHub said when it refused: the `errors` of a 422 (strings or objects), else its message. */
function said(e: unknown): string[] {
  const data = (e as { response?: { data?: unknown } }).response?.data;
  if (typeof data !== "object" || data === null) return [];
  const errors = (data as { errors?: unknown }).errors;
  const out: string[] = [];
  if (Array.isArray(errors))
    for (const x of errors) {
      if (typeof x === "string") out.push(x);
      else if (typeof x === "object" && x !== null) {
        const { message, field, code } = x as { message?: unknown; field?: unknown; code?: unknown };
        out.push([field, typeof message === "string" ? message : code].filter((v) => typeof v === "string").join(" "));
      }
    }
  const message = (data as { message?: unknown }).message;
  if (!out.length && typeof message === "string") out.push(message);
  return out.map((s) => s.slice(0, 300));
}

/** A refusal among `statuses` (never a rate limit: that is waited out or fails the step), as a value. */
function refusal(e: unknown, statuses: readonly number[]): Refused | undefined {
  const status = statusOf(e);
  if (status === undefined || !statuses.includes(status)) return undefined;
  const headers = (e as { response?: { headers?: Record<string, string | undefined> } }).response?.headers ?? {};
  if (headers["x-ratelimit-remaining"] === "0") return undefined;
  return { refused: status, errors: said(e) };
}

interface PullData {
  number: number;
  html_url: string;
  title: string;
  body: string | null;
  state: string;
  head: { sha: string; ref: string };
  base: { ref: string };
  user: { login: string } | null;
}
const toPull = (d: PullData): PullRef => ({
  number: d.number,
  url: d.html_url,
  headSha: d.head.sha,
  headRef: d.head.ref,
  baseRef: d.base.ref,
  author: d.user?.login ?? "",
  title: d.title,
  body: d.body ?? "",
  state: d.state === "closed" ? "closed" : "open",
});

const checkBody = (f: CheckRunFields) => ({
  status: f.status,
  ...(f.conclusion ? { conclusion: f.conclusion } : {}),
  ...(f.detailsUrl ? { details_url: f.detailsUrl } : {}),
  output: { title: f.title, summary: f.summary },
});

/**
 * The pull-request port on one repository (src/github/pr-port.ts), REST API 2022-11-28: pulls,
 * reviews and review comments, check runs, commit statuses. Refusals (403, 404, 422) are values.
 */
export function pullRequestPort(s: GithubSession, repoName: string): PullRequestPort {
  const { owner, repo } = s;
  const attempt = async <T>(action: string, statuses: readonly number[], fn: Parameters<GithubSession["step"]>[1]): Promise<T | Refused> =>
    s.step(action, async (gh) => {
      try {
        return (await fn(gh)) as T;
      } catch (e) {
        const r = refusal(e, statuses);
        if (r) return r;
        throw e;
      }
    });
  return {
    repo: repoName,
    async openPull(branch) {
      const { data } = await s.step(`finding the pull request of ${branch}`, (gh) =>
        gh.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: "open", per_page: 10 }),
      );
      const open = data[0];
      return open ? toPull(open) : null;
    },
    async pull(number) {
      const got = await attempt<PullData>(
        `reading pull request #${number}`,
        [404],
        async (gh) => (await gh.rest.pulls.get({ owner, repo, pull_number: number })).data,
      );
      return "refused" in got ? null : toPull(got);
    },
    async pullDiff(number, maxChars) {
      const got = await attempt<string>(`reading the diff of pull request #${number}`, [406], async (gh) => {
        const r = await gh.rest.pulls.get({ owner, repo, pull_number: number, mediaType: { format: "diff" } });
        // Octokit gives text for GitHub's `…diff; charset=utf-8`, bytes for a bare media type.
        const data = r.data as unknown;
        return data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? new TextDecoder().decode(data as ArrayBuffer) : String(data);
      });
      if (isRefused(got)) return got;
      return got.length > maxChars ? { text: got.slice(0, got.lastIndexOf("\n", maxChars) + 1 || maxChars), truncated: true } : { text: got, truncated: false };
    },
    async reviews(pull) {
      const all = await s.pages(`reading the reviews of pull request #${pull}`, (gh, request) =>
        gh.rest.pulls.listReviews({ owner, repo, pull_number: pull, per_page: 100, request }),
      );
      return all.map((r) => ({
        id: r.id,
        login: r.user?.login ?? "",
        state: r.state,
        body: r.body ?? "",
        commitId: r.commit_id ?? null,
      }));
    },
    async reviewComments(pull) {
      const all = await s.pages(`reading the review comments of pull request #${pull}`, (gh, request) =>
        gh.rest.pulls.listReviewComments({ owner, repo, pull_number: pull, per_page: 100, request }),
      );
      return all.map((c) => ({
        id: c.id,
        login: c.user?.login ?? "",
        body: c.body ?? "",
        path: c.path,
        line: c.line ?? null,
        reviewId: c.pull_request_review_id ?? null,
        inReplyTo: c.in_reply_to_id ?? null,
      }));
    },
    async createReview(pull, r) {
      const got = await attempt<{ id: number; user: { login: string } | null }>(
        `reviewing pull request #${pull}`,
        [422],
        async (gh) =>
          (
            await gh.rest.pulls.createReview({
              owner,
              repo,
              pull_number: pull,
              ...(r.commitId ? { commit_id: r.commitId } : {}),
              body: r.body,
              event: r.event,
              comments: r.comments.map((c) => ({ ...c })),
            })
          ).data,
      );
      return "refused" in got ? got : { id: got.id, login: got.user?.login ?? "" };
    },
    async updateReviewComment(id, body) {
      const got = await attempt<undefined>(`updating dissent's review comment ${id}`, [403, 404, 422], async (gh) => {
        await gh.rest.pulls.updateReviewComment({ owner, repo, comment_id: id, body });
      });
      return isRefused(got) ? got : undefined;
    },
    async dismissReview(pull, id, message) {
      const got = await attempt<undefined>(`dismissing dissent's review on pull request #${pull}`, [403, 404, 422], async (gh) => {
        await gh.rest.pulls.dismissReview({ owner, repo, pull_number: pull, review_id: id, message, event: "DISMISS" });
      });
      return isRefused(got) ? got : undefined;
    },
    async checkRuns(sha, name) {
      return attempt(`reading the checks of commit ${sha.slice(0, 7)}`, [403, 404], async (gh) =>
        (await gh.rest.checks.listForRef({ owner, repo, ref: sha, check_name: name, per_page: 20 })).data.check_runs.map((c) => ({
          id: c.id,
          status: c.status,
          conclusion: c.conclusion,
        })),
      );
    },
    async createCheckRun(sha, name, f) {
      const got = await attempt<{ id: number }>(`writing the ${name} check on commit ${sha.slice(0, 7)}`, [403, 404, 422], async (gh) => ({
        id: (await gh.rest.checks.create({ owner, repo, name, head_sha: sha, ...checkBody(f) })).data.id,
      }));
      return got;
    },
    async updateCheckRun(id, f) {
      const got = await attempt<undefined>(`updating check run ${id}`, [403, 404, 422], async (gh) => {
        await gh.rest.checks.update({ owner, repo, check_run_id: id, ...checkBody(f) });
      });
      return isRefused(got) ? got : undefined;
    },
    async createStatus(sha, context, f) {
      const got = await attempt<undefined>(`writing the ${context} status on commit ${sha.slice(0, 7)}`, [403, 404, 422], async (gh) => {
        await gh.rest.repos.createCommitStatus({
          owner,
          repo,
          sha,
          state: f.state,
          context,
          description: f.description.slice(0, 140),
          ...(f.targetUrl ? { target_url: f.targetUrl } : {}),
        });
      });
      return isRefused(got) ? got : undefined;
    },
  };
}
