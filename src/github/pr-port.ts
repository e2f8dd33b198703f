/**
 * What dissent asks of GitHub to review a pull request where people read reviews (docs/adr/037):
 * the pull request, its reviews and their inline comments, check runs and commit statuses. The
 * GitHub tracker implements it (src/trackers/github/pulls.ts) for the repository it is configured on;
 * `issue implement` and `pr review` call it through src/github/pr-review.ts and check-run.ts.
 * What GitHub refuses comes back as a value (`refused`), never a throw: each caller has a fallback.
 */

/** GitHub refused a write: its status and what it said (the `errors` of a 422, else the message). */
export interface Refused {
  refused: number;
  errors: string[];
}

export const isRefused = (v: unknown): v is Refused => typeof v === "object" && v !== null && "refused" in v;

/** An open pull request as the review needs it. */
export interface PullRef {
  number: number;
  url: string;
  headSha: string;
  baseRef: string;
  /** Who opened it: GitHub refuses a change request from that same user. */
  author: string;
  /** Its head branch, title, description and state (`pr review` reads them: the description is the contract when dissent planned no issue). */
  headRef: string;
  title: string;
  body: string;
  state: "open" | "closed";
}

/** A review of the pull request. */
export interface ReviewRef {
  id: number;
  login: string;
  state: string;
  body: string;
  commitId: string | null;
}

/** An inline review comment. */
export interface ReviewCommentRef {
  id: number;
  login: string;
  body: string;
  path: string;
  line: number | null;
  reviewId: number | null;
  /** Set on a reply in a thread. */
  inReplyTo: number | null;
}

/** An inline comment of a review being created: on `line` (and from `start_line`) of `side` of `path` in the diff. */
export interface NewReviewComment {
  path: string;
  line: number;
  side: "RIGHT" | "LEFT";
  start_line?: number;
  start_side?: "RIGHT" | "LEFT";
  body: string;
}

/** A check run's fields dissent writes. */
export interface CheckRunFields {
  status: "in_progress" | "completed";
  conclusion?: "success" | "neutral" | "failure" | "cancelled";
  title: string;
  summary: string;
  detailsUrl?: string | null;
}

/** A commit status's fields (the fallback where check runs cannot be written). */
export interface StatusFields {
  state: "pending" | "success" | "failure" | "error";
  /** At most 140 characters (GitHub's bound). */
  description: string;
  targetUrl?: string | null;
}

export interface PullRequestPort {
  /** `owner/name`, for messages. */
  readonly repo: string;
  /** The open pull request whose head is `branch`, or null. */
  openPull(branch: string): Promise<PullRef | null>;
  /** A pull request by number (open or not), or null when there is none. */
  pull(number: number): Promise<PullRef | null>;
  /**
   * Its diff base…head as GitHub renders it (the `diff` media type), cut at `maxChars`; refused (406)
   * when GitHub will not render a diff that large.
   */
  pullDiff(number: number, maxChars: number): Promise<{ text: string; truncated: boolean } | Refused>;
  /** Its reviews, oldest first. */
  reviews(pull: number): Promise<ReviewRef[]>;
  /** Its inline review comments, oldest first. */
  reviewComments(pull: number): Promise<ReviewCommentRef[]>;
  /** One submitted review with its inline comments (GitHub refuses the whole review when one comment is not on the diff). */
  createReview(
    pull: number,
    /** `commitId` unset: the pull request's head (then no inline comments: their lines are another diff's). */
    r: { commitId?: string; body: string; event: "COMMENT" | "REQUEST_CHANGES"; comments: readonly NewReviewComment[] },
  ): Promise<{ id: number; login: string } | Refused>;
  updateReviewComment(id: number, body: string): Promise<undefined | Refused>;
  dismissReview(pull: number, id: number, message: string): Promise<undefined | Refused>;
  /** The check runs named `name` on a commit, newest first. */
  checkRuns(sha: string, name: string): Promise<{ id: number; status: string; conclusion: string | null }[] | Refused>;
  createCheckRun(sha: string, name: string, f: CheckRunFields): Promise<{ id: number } | Refused>;
  updateCheckRun(id: number, f: CheckRunFields): Promise<undefined | Refused>;
  createStatus(sha: string, context: string, f: StatusFields): Promise<undefined | Refused>;
}
