/**
 * The GitHub double (test/support/github-double.ts) taught the two reads of the factory's
 * post-merge handler (docs/factory.md): an issue's events (the `closed` event names the closing
 * commit) and the pull requests associated with a commit (with `merged_at`). Served through the
 * double's canned-answer hook, as GitHub documents the payloads (REST API 2022-11-28).
 */
import type { GithubDouble } from "./github-double.js";

const AT = "2024-05-02T09:30:00Z";

export interface ClosingPullRequest {
  number: number;
  /** False: the pull request was closed without merging. */
  merged: boolean;
  /** The closing commit (default: one derived from the PR number). */
  sha?: string;
}

/** Closes `issue` in the double as a pull request's closing reference does; `pr` undefined: closed by hand (no commit). */
export function closeIssue(gh: GithubDouble, issue: number, pr?: ClosingPullRequest): void {
  const state = gh.issues.get(issue);
  if (!state) throw new Error(`no issue #${issue} in the double`);
  state.state = "closed";
  const repo = `/repos/${gh.owner}/${gh.repo}`;
  const sha = pr ? (pr.sha ?? `${String(pr.number).padStart(7, "0")}${"a".repeat(33)}`) : null;
  const actor = { login: "octocat", id: 2, type: "User", site_admin: false };
  const events = [
    {
      id: 9_000 + issue,
      node_id: `LE_${issue}`,
      url: `${gh.url}${repo}/issues/events/${9_000 + issue}`,
      actor,
      event: "labeled",
      commit_id: null,
      commit_url: null,
      created_at: AT,
      label: { name: "bug", color: "d73a4a" },
    },
    {
      id: 9_500 + issue,
      node_id: `CE_${issue}`,
      url: `${gh.url}${repo}/issues/events/${9_500 + issue}`,
      actor,
      event: "closed",
      commit_id: sha,
      commit_url: sha ? `${gh.url}${repo}/commits/${sha}` : null,
      created_at: AT,
      state_reason: "completed",
      performed_via_github_app: null,
    },
  ];
  gh.fail({ method: "GET", path: new RegExp(`^${repo}/issues/${issue}/events$`), status: 200, body: events, times: Number.POSITIVE_INFINITY });
  if (!pr || !sha) return;
  const pull = {
    id: 70_000 + pr.number,
    node_id: `PR_${pr.number}`,
    url: `${gh.url}${repo}/pulls/${pr.number}`,
    html_url: `https://github.com/${gh.owner}/${gh.repo}/pull/${pr.number}`,
    number: pr.number,
    state: "closed",
    locked: false,
    title: `Fix #${issue}`,
    user: actor,
    body: `Closes #${issue}`,
    created_at: AT,
    updated_at: AT,
    closed_at: AT,
    merged_at: pr.merged ? AT : null,
    merge_commit_sha: sha,
    draft: false,
    head: { ref: `fix-${issue}`, sha },
    base: { ref: "main", sha: "b".repeat(40) },
  };
  gh.fail({ method: "GET", path: new RegExp(`^${repo}/commits/${sha}/pulls$`), status: 200, body: [pull], times: Number.POSITIVE_INFINITY });
}
