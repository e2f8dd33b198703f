import { execFileSync } from "node:child_process";

/**
 * The pull-request review, check-run and commit-status endpoints of the GitHub double
 * (test/support/github-double.ts), as GitHub documents them (REST API 2022-11-28; shapes from
 * @octokit/openapi-types):
 *
 *   POST   /repos/{o}/{r}/pulls/{n}/reviews                 { commit_id?, body?, event?, comments?: [{ path, line, side?, start_line?, start_side?, body }] } → 200 review
 *   GET    /repos/{o}/{r}/pulls/{n}/reviews                 → [review]
 *   PUT    /repos/{o}/{r}/pulls/{n}/reviews/{id}/dismissals { message, event? } → 200 review (DISMISSED)
 *   GET    /repos/{o}/{r}/pulls/{n}/comments                → [review comment]
 *   PATCH  /repos/{o}/{r}/pulls/comments/{id}               { body } → 200 review comment
 *   DELETE /repos/{o}/{r}/pulls/comments/{id}               → 204
 *   POST   /repos/{o}/{r}/check-runs                        { name, head_sha, status?, conclusion?, details_url?, external_id?, output? } → 201 check run
 *   PATCH  /repos/{o}/{r}/check-runs/{id}                   → 200 check run
 *   GET    /repos/{o}/{r}/commits/{ref}/check-runs          ?check_name= → { total_count, check_runs }
 *   POST   /repos/{o}/{r}/statuses/{sha}                    { state, target_url?, description?, context? } → 201 status
 *   GET    /repos/{o}/{r}/commits/{ref}/statuses            → [status], newest first
 *
 * What GitHub refuses, the double refuses the same way (422 unless said): an inline comment on a line
 * that is not in the pull request's diff at the review's commit ("Line could not be resolved" — the
 * whole review is refused), a path the diff does not touch, a start_line outside the line's hunk; a
 * commit_id not in the pull request; REQUEST_CHANGES or APPROVE on a pull request the same user
 * opened ("Can not request changes on your own pull request"); COMMENT or REQUEST_CHANGES without a
 * body; dismissing a review that is not APPROVED or CHANGES_REQUESTED; a check run on a commit the
 * repository does not have; a check-run write with a token that is no GitHub App's (403 "You must
 * authenticate via a GitHub App." — a personal access token, `checks: "token"`); an output summary
 * over 65,535 characters; a status description over 140.
 */

const DOCS = "https://docs.github.com/rest";

export interface ReviewState {
  id: number;
  pull: number;
  login: string;
  body: string;
  state: "COMMENTED" | "CHANGES_REQUESTED" | "APPROVED" | "DISMISSED";
  commit_id: string;
  submitted_at: string;
}

export interface ReviewCommentState {
  id: number;
  pull: number;
  review_id: number | null;
  login: string;
  path: string;
  line: number;
  side: "LEFT" | "RIGHT";
  start_line: number | null;
  start_side: "LEFT" | "RIGHT" | null;
  body: string;
  commit_id: string;
  diff_hunk: string;
  in_reply_to_id?: number;
  created_at: string;
  updated_at: string;
}

export interface CheckRunState {
  id: number;
  name: string;
  head_sha: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  details_url: string | null;
  external_id: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  started_at: string | null;
  completed_at: string | null;
  /** Every status it went through, in order ("in_progress", "completed:failure", …): what a watcher of the commit saw. */
  history: string[];
}

export interface StatusState {
  id: number;
  sha: string;
  state: "error" | "failure" | "pending" | "success";
  context: string;
  description: string | null;
  target_url: string | null;
  created_at: string;
}

/** What the review routes need of the double around them. */
export interface ReviewHost {
  owner: string;
  repo: string;
  repoUrl: () => string;
  html: string;
  login: string;
  gitRepo: string | undefined;
  nextId: () => number;
  /** The pull request's base and head branch and its head commit now (following pushes), or undefined. */
  pull: (n: number) => { base: string; head: string; sha: string; login: string; state: string } | undefined;
  /** Check runs need a GitHub App's token: `token` answers check-run writes as GitHub answers a personal access token. */
  checks: "app" | "token";
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

const unprocessable = (errors: string[], doc: string): Answer => ({
  status: 422,
  body: { message: "Unprocessable Entity", errors, documentation_url: `${DOCS}/${doc}`, status: "422" },
});

/** The lines a comment may be on, per file of a diff: RIGHT (context and added, new numbering) and LEFT (context and deleted, old numbering), by hunk. */
interface FileLines {
  right: Map<number, { hunk: number; text: string }>;
  left: Map<number, { hunk: number; text: string }>;
  hunks: string[][];
}

function diffLines(diff: string): Map<string, FileLines> {
  const files = new Map<string, FileLines>();
  let file: FileLines | undefined;
  let oldNo = 0;
  let newNo = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("diff --git ")) {
      file = undefined;
      continue;
    }
    if (line.startsWith("+++ ")) {
      const path = line.slice(4).replace(/^b\//, "");
      if (path === "/dev/null") continue;
      file = { right: new Map(), left: new Map(), hunks: [] };
      files.set(path, file);
      continue;
    }
    if (line.startsWith("--- ")) continue;
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (h && file) {
      oldNo = Number(h[1]);
      newNo = Number(h[2]);
      file.hunks.push([line]);
      continue;
    }
    if (!file?.hunks.length) continue;
    const hunk = file.hunks.length - 1;
    file.hunks[hunk]?.push(line);
    if (line.startsWith("+")) file.right.set(newNo++, { hunk, text: line });
    else if (line.startsWith("-")) file.left.set(oldNo++, { hunk, text: line });
    else if (line.startsWith(" ")) {
      file.right.set(newNo++, { hunk, text: line });
      file.left.set(oldNo++, { hunk, text: line });
    }
  }
  return files;
}

export interface ReviewRoutes {
  reviews: ReviewState[];
  reviewComments: ReviewCommentState[];
  checkRuns: CheckRunState[];
  statuses: StatusState[];
  /** A review comment by someone else (a person reviewing on GitHub), on a line of the pull request's diff; throws when GitHub would refuse it. */
  addReviewComment(pull: number, c: { path: string; line: number; body: string; login: string; side?: "LEFT" | "RIGHT" }): ReviewCommentState;
  /** The route handler: an answer for the paths above, undefined for any other. */
  route(method: string, rest: string, query: URLSearchParams, input: Record<string, unknown>): Answer | undefined;
}

export function reviewRoutes(host: ReviewHost): ReviewRoutes {
  const reviews: ReviewState[] = [];
  const reviewComments: ReviewCommentState[] = [];
  const checkRuns: CheckRunState[] = [];
  const statuses: StatusState[] = [];
  const now = () => new Date().toISOString();
  const user = (login: string) => ({ login, id: login === host.login ? 1 : 2, node_id: "MDQ6VXNlcjE=", type: "User", site_admin: false });
  const git = (args: string[]): string | undefined => {
    if (!host.gitRepo) return undefined;
    try {
      return execFileSync("git", args, { cwd: host.gitRepo, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 * 1024 * 1024 });
    } catch {
      return undefined;
    }
  };
  const hasCommit = (sha: string) => /^[0-9a-f]{40}$/.test(sha) && git(["cat-file", "-t", sha])?.trim() === "commit";
  /** The pull request's diff at `commit`: base's merge base … commit, as GitHub shows it. */
  const diffAt = (base: string, commit: string): Map<string, FileLines> | undefined => {
    const mergeBase = git(["merge-base", `refs/heads/${base}`, commit])?.trim();
    if (!mergeBase) return undefined;
    const text = git(["diff", "--no-color", "--no-ext-diff", "--no-renames", mergeBase, commit]);
    return text === undefined ? undefined : diffLines(text);
  };
  const inPull = (head: string, commit: string) => commit === head || git(["merge-base", "--is-ancestor", commit, head]) !== undefined;

  const reviewJson = (r: ReviewState) => ({
    id: r.id,
    node_id: `PRR_${r.id}`,
    user: user(r.login),
    body: r.body,
    state: r.state,
    html_url: `${host.html}/pull/${r.pull}#pullrequestreview-${r.id}`,
    pull_request_url: `${host.repoUrl()}/pulls/${r.pull}`,
    _links: { html: { href: `${host.html}/pull/${r.pull}#pullrequestreview-${r.id}` }, pull_request: { href: `${host.repoUrl()}/pulls/${r.pull}` } },
    submitted_at: r.submitted_at,
    commit_id: r.commit_id,
    author_association: r.login === host.login ? "OWNER" : "CONTRIBUTOR",
  });
  const commentJson = (c: ReviewCommentState) => ({
    url: `${host.repoUrl()}/pulls/comments/${c.id}`,
    pull_request_review_id: c.review_id,
    id: c.id,
    node_id: `PRRC_${c.id}`,
    diff_hunk: c.diff_hunk,
    path: c.path,
    commit_id: c.commit_id,
    original_commit_id: c.commit_id,
    ...(c.in_reply_to_id !== undefined ? { in_reply_to_id: c.in_reply_to_id } : {}),
    user: user(c.login),
    body: c.body,
    created_at: c.created_at,
    updated_at: c.updated_at,
    html_url: `${host.html}/pull/${c.pull}#discussion_r${c.id}`,
    pull_request_url: `${host.repoUrl()}/pulls/${c.pull}`,
    author_association: c.login === host.login ? "OWNER" : "CONTRIBUTOR",
    _links: {
      self: { href: `${host.repoUrl()}/pulls/comments/${c.id}` },
      html: { href: `${host.html}/pull/${c.pull}#discussion_r${c.id}` },
      pull_request: { href: `${host.repoUrl()}/pulls/${c.pull}` },
    },
    start_line: c.start_line,
    original_start_line: c.start_line,
    start_side: c.start_side,
    line: c.line,
    original_line: c.line,
    side: c.side,
    subject_type: "line",
  });
  const checkJson = (c: CheckRunState) => ({
    id: c.id,
    head_sha: c.head_sha,
    node_id: `CR_${c.id}`,
    external_id: c.external_id,
    url: `${host.repoUrl()}/check-runs/${c.id}`,
    html_url: `${host.html}/runs/${c.id}`,
    details_url: c.details_url,
    status: c.status,
    conclusion: c.conclusion,
    started_at: c.started_at,
    completed_at: c.completed_at,
    output: { ...c.output, annotations_count: 0, annotations_url: `${host.repoUrl()}/check-runs/${c.id}/annotations` },
    name: c.name,
    check_suite: { id: 7000 },
    app: { id: 15368, slug: "github-actions", name: "GitHub Actions" },
    pull_requests: [],
  });
  const statusJson = (s: StatusState) => ({
    url: `${host.repoUrl()}/statuses/${s.sha}`,
    id: s.id,
    node_id: `SC_${s.id}`,
    state: s.state,
    description: s.description,
    target_url: s.target_url,
    context: s.context,
    created_at: s.created_at,
    updated_at: s.created_at,
    creator: user(host.login),
  });

  /** A comment's anchor checked against the diff: the hunk text up to its line, or the error GitHub answers. */
  const anchor = (
    files: Map<string, FileLines> | undefined,
    c: { path: string; line: number; side: "LEFT" | "RIGHT"; start_line: number | null; start_side: "LEFT" | "RIGHT" | null },
  ): { hunk: string } | { error: string } => {
    if (!files) return { hunk: "" }; // no repository to read the diff from: taken as GitHub would a line it can resolve
    const file = files.get(c.path);
    if (!file) return { error: "Path could not be resolved" };
    const at = (c.side === "LEFT" ? file.left : file.right).get(c.line);
    if (!at) return { error: "Line could not be resolved" };
    if (c.start_line !== null) {
      const start = (c.start_side === "LEFT" ? file.left : file.right).get(c.start_line);
      if (!start || c.start_line >= c.line) return { error: "Start line could not be resolved" };
      if (start.hunk !== at.hunk) return { error: "Pull request review thread start line must be part of the same hunk as the line." };
    }
    const lines = file.hunks[at.hunk] ?? [];
    const upto = lines.findIndex((l, i) => i > 0 && l === at.text);
    return { hunk: lines.slice(0, upto < 0 ? lines.length : upto + 1).join("\n") };
  };

  const routes: ReviewRoutes = {
    reviews,
    reviewComments,
    checkRuns,
    statuses,
    addReviewComment(pull, c) {
      const p = host.pull(pull);
      if (!p) throw new Error(`no pull request #${pull}`);
      const side = c.side ?? "RIGHT";
      const where = anchor(diffAt(p.base, p.sha), { path: c.path, line: c.line, side, start_line: null, start_side: null });
      if ("error" in where) throw new Error(`GitHub would refuse this comment: ${where.error}`);
      const at = now();
      const review: ReviewState = { id: host.nextId(), pull, login: c.login, body: "", state: "COMMENTED", commit_id: p.sha, submitted_at: at };
      reviews.push(review);
      const comment: ReviewCommentState = {
        id: host.nextId(),
        pull,
        review_id: review.id,
        login: c.login,
        path: c.path,
        line: c.line,
        side,
        start_line: null,
        start_side: null,
        body: c.body,
        commit_id: p.sha,
        diff_hunk: where.hunk,
        created_at: at,
        updated_at: at,
      };
      reviewComments.push(comment);
      return comment;
    },
    route(method, rest, query, input) {
      let m: RegExpExecArray | null;
      if ((m = /^\/pulls\/(\d+)\/reviews$/.exec(rest))) {
        const n = Number(m[1]);
        const p = host.pull(n);
        if (!p) return { status: 404, body: { message: "Not Found", documentation_url: DOCS, status: "404" } };
        if (method === "GET")
          return {
            status: 200,
            body: reviews
              .filter((r) => r.pull === n)
              .sort((a, b) => a.id - b.id)
              .map(reviewJson),
          };
        if (method !== "POST") return undefined;
        const doc = "pulls/reviews#create-a-review-for-a-pull-request";
        const event = input.event === undefined ? "PENDING" : String(input.event);
        if (!["APPROVE", "REQUEST_CHANGES", "COMMENT"].includes(event)) return unprocessable([`Invalid event: ${event}`], doc);
        const body = typeof input.body === "string" ? input.body : "";
        if (event !== "APPROVE" && !body.trim()) return unprocessable([`Body is required for ${event.toLowerCase().replace("_", " ")}`], doc);
        if (p.login === host.login && event === "REQUEST_CHANGES") return unprocessable(["Review Can not request changes on your own pull request"], doc);
        if (p.login === host.login && event === "APPROVE") return unprocessable(["Review Can not approve your own pull request"], doc);
        const commit = typeof input.commit_id === "string" ? input.commit_id : p.sha;
        if (!inPull(p.sha, commit)) return unprocessable(["Commit could not be resolved: it is not part of the pull request"], doc);
        const files = diffAt(p.base, commit);
        const wanted = Array.isArray(input.comments) ? (input.comments as Record<string, unknown>[]) : [];
        const placed: { c: Record<string, unknown>; hunk: string }[] = [];
        for (const c of wanted) {
          if (typeof c.position === "number") return unprocessable(["the double takes line and side, as dissent sends them, not position"], doc);
          if (typeof c.path !== "string" || typeof c.body !== "string" || typeof c.line !== "number")
            return unprocessable(["comments need a path, a body and a line"], doc);
          const side = c.side === "LEFT" ? "LEFT" : "RIGHT";
          const start = typeof c.start_line === "number" ? c.start_line : null;
          const where = anchor(files, {
            path: c.path,
            line: c.line,
            side,
            start_line: start,
            start_side: start === null ? null : c.start_side === "LEFT" ? "LEFT" : "RIGHT",
          });
          if ("error" in where) return unprocessable([where.error], doc); // one bad anchor refuses the whole review
          placed.push({ c, hunk: where.hunk });
        }
        const at = now();
        const review: ReviewState = {
          id: host.nextId(),
          pull: n,
          login: host.login,
          body,
          state: event === "REQUEST_CHANGES" ? "CHANGES_REQUESTED" : event === "APPROVE" ? "APPROVED" : "COMMENTED",
          commit_id: commit,
          submitted_at: at,
        };
        reviews.push(review);
        for (const { c, hunk } of placed) {
          const start = typeof c.start_line === "number" ? c.start_line : null;
          reviewComments.push({
            id: host.nextId(),
            pull: n,
            review_id: review.id,
            login: host.login,
            path: String(c.path),
            line: Number(c.line),
            side: c.side === "LEFT" ? "LEFT" : "RIGHT",
            start_line: start,
            start_side: start === null ? null : c.start_side === "LEFT" ? "LEFT" : "RIGHT",
            body: String(c.body),
            commit_id: commit,
            diff_hunk: hunk,
            created_at: at,
            updated_at: at,
          });
        }
        return { status: 200, body: reviewJson(review) };
      }
      if (method === "PUT" && (m = /^\/pulls\/(\d+)\/reviews\/(\d+)\/dismissals$/.exec(rest))) {
        const r = reviews.find((x) => x.pull === Number(m?.[1]) && x.id === Number(m?.[2]));
        if (!r) return { status: 404, body: { message: "Not Found", documentation_url: DOCS, status: "404" } };
        if (typeof input.message !== "string" || !input.message)
          return unprocessable(["message is required"], "pulls/reviews#dismiss-a-review-for-a-pull-request");
        if (r.state !== "APPROVED" && r.state !== "CHANGES_REQUESTED")
          return unprocessable(["Can not dismiss a commented pull request review"], "pulls/reviews#dismiss-a-review-for-a-pull-request");
        r.state = "DISMISSED";
        return { status: 200, body: reviewJson(r) };
      }
      if (method === "GET" && (m = /^\/pulls\/(\d+)\/comments$/.exec(rest))) {
        const n = Number(m[1]);
        if (!host.pull(n)) return { status: 404, body: { message: "Not Found", documentation_url: DOCS, status: "404" } };
        const list = reviewComments.filter((c) => c.pull === n).sort((a, b) => a.id - b.id);
        const per = Math.min(Number(query.get("per_page") ?? 30) || 30, 100);
        const page = Math.max(Number(query.get("page") ?? 1) || 1, 1);
        return { status: 200, body: list.slice((page - 1) * per, page * per).map(commentJson) };
      }
      if ((m = /^\/pulls\/comments\/(\d+)$/.exec(rest))) {
        const at = reviewComments.findIndex((c) => c.id === Number(m?.[1]));
        const c = reviewComments[at];
        if (!c) return { status: 404, body: { message: "Not Found", documentation_url: DOCS, status: "404" } };
        // GitHub lets only the author (or an admin of the repository) edit or delete a comment: the double's token is the author of its own.
        if (c.login !== host.login && (method === "PATCH" || method === "DELETE"))
          return { status: 403, body: { message: "You must be the author of the comment to change it.", documentation_url: DOCS, status: "403" } };
        if (method === "PATCH") {
          if (typeof input.body !== "string") return unprocessable(["body is required"], "pulls/comments#update-a-review-comment-for-a-pull-request");
          c.body = input.body;
          c.updated_at = now();
          return { status: 200, body: commentJson(c) };
        }
        if (method === "DELETE") {
          reviewComments.splice(at, 1);
          return { status: 204 };
        }
        if (method === "GET") return { status: 200, body: commentJson(c) };
        return undefined;
      }
      if (rest === "/check-runs" || /^\/check-runs\/\d+$/.test(rest)) {
        const doc = rest === "/check-runs" ? "checks/runs#create-a-check-run" : "checks/runs#update-a-check-run";
        if (method !== "POST" && method !== "PATCH") return undefined;
        if (host.checks === "token")
          return { status: 403, body: { message: "You must authenticate via a GitHub App.", documentation_url: `${DOCS}/${doc}`, status: "403" } };
        const existing = method === "PATCH" ? checkRuns.find((c) => `/check-runs/${c.id}` === rest) : undefined;
        if (method === "PATCH" && !existing) return { status: 404, body: { message: "Not Found", documentation_url: DOCS, status: "404" } };
        const output = input.output as { title?: unknown; summary?: unknown; text?: unknown } | undefined;
        if (output !== undefined) {
          if (typeof output.title !== "string" || typeof output.summary !== "string") return unprocessable(["output needs a title and a summary"], doc);
          if (output.summary.length > 65_535 || (typeof output.text === "string" && output.text.length > 65_535))
            return unprocessable(["Only 65535 characters are allowed; 65536 were supplied."], doc);
        }
        const conclusion = typeof input.conclusion === "string" ? input.conclusion : null;
        const CONCLUSIONS = ["action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"];
        if (conclusion !== null && !CONCLUSIONS.includes(conclusion)) return unprocessable([`Invalid conclusion: ${conclusion}`], doc);
        let status = typeof input.status === "string" ? input.status : undefined;
        if (status !== undefined && !["queued", "in_progress", "completed"].includes(status)) return unprocessable([`Invalid status: ${status}`], doc);
        if (conclusion !== null) status = "completed"; // a conclusion completes the run
        if (status === "completed" && conclusion === null) return unprocessable(["Conclusion can't be blank when status is completed"], doc);
        if (!existing) {
          const headSha = String(input.head_sha ?? "");
          if (typeof input.name !== "string" || !input.name) return unprocessable(["name is required"], doc);
          if (!hasCommit(headSha)) return unprocessable([`No commit found for SHA: ${headSha}`], doc);
          const c: CheckRunState = {
            id: host.nextId(),
            name: input.name,
            head_sha: headSha,
            status: (status ?? "queued") as CheckRunState["status"],
            conclusion,
            details_url: typeof input.details_url === "string" ? input.details_url : null,
            external_id: typeof input.external_id === "string" ? input.external_id : null,
            output: {
              title: typeof output?.title === "string" ? output.title : null,
              summary: typeof output?.summary === "string" ? output.summary : null,
              text: typeof output?.text === "string" ? output.text : null,
            },
            started_at: now(),
            completed_at: conclusion !== null ? now() : null,
            history: [],
          };
          c.history.push(c.status === "completed" ? `completed:${c.conclusion}` : c.status);
          checkRuns.push(c);
          return { status: 201, body: checkJson(c) };
        }
        if (status) existing.status = status as CheckRunState["status"];
        existing.conclusion = status === "completed" ? conclusion : status ? null : existing.conclusion;
        existing.completed_at = existing.status === "completed" ? now() : null;
        if (typeof input.details_url === "string") existing.details_url = input.details_url;
        if (output)
          existing.output = {
            title: String(output.title),
            summary: String(output.summary),
            text: typeof output.text === "string" ? output.text : null,
          };
        existing.history.push(existing.status === "completed" ? `completed:${existing.conclusion}` : existing.status);
        return { status: 200, body: checkJson(existing) };
      }
      if (method === "GET" && (m = /^\/commits\/([^/]+)\/check-runs$/.exec(rest))) {
        const ref = decodeURIComponent(m[1] ?? "");
        const sha = /^[0-9a-f]{40}$/.test(ref) ? ref : git(["rev-parse", "--verify", "--quiet", `refs/heads/${ref}`])?.trim();
        const name = query.get("check_name");
        const list = checkRuns.filter((c) => c.head_sha === sha && (name === null || c.name === name)).sort((a, b) => b.id - a.id);
        return { status: 200, body: { total_count: list.length, check_runs: list.map(checkJson) } };
      }
      if (method === "POST" && (m = /^\/statuses\/([0-9a-f]{40})$/.exec(rest))) {
        const sha = m[1] ?? "";
        const doc = "commits/statuses#create-a-commit-status";
        const state = String(input.state ?? "");
        if (!["error", "failure", "pending", "success"].includes(state)) return unprocessable([`State is not included in the list`], doc);
        if (typeof input.description === "string" && input.description.length > 140)
          return unprocessable(["Description is too long (maximum is 140 characters)"], doc);
        if (!hasCommit(sha)) return unprocessable([`No commit found for SHA: ${sha}`], doc);
        const s: StatusState = {
          id: host.nextId(),
          sha,
          state: state as StatusState["state"],
          context: typeof input.context === "string" ? input.context : "default",
          description: typeof input.description === "string" ? input.description : null,
          target_url: typeof input.target_url === "string" ? input.target_url : null,
          created_at: now(),
        };
        statuses.push(s);
        return { status: 201, body: statusJson(s) };
      }
      if (method === "GET" && (m = /^\/commits\/([0-9a-f]{40})\/statuses$/.exec(rest))) {
        const sha = m[1];
        return {
          status: 200,
          body: statuses
            .filter((s) => s.sha === sha)
            .sort((a, b) => b.id - a.id)
            .map(statusJson),
        };
      }
      return undefined;
    },
  };
  return routes;
}
