import type { Concern } from "../contracts/concern.js";

/** An issue as a tracker holds it. */
export interface TrackedIssue {
  id: string;
  title: string;
  body: string;
  labels: string[];
  url?: string;
}

/** What the pipeline publishes on the issue when a planning cycle ends. */
export interface PlanReport {
  status: "ready" | "needs_replan" | "hitl";
  route: "trivial" | "load_bearing";
  plan: string;
  acceptanceCriteria: string[];
  pendingConcerns: Concern[];
  /** The last comment command's answer (docs/github-action.md), shown under the concerns. */
  note?: string;
}

/** An issue closed by a merged pull request (a closing reference), for the factory's post-merge handler (docs/factory.md). */
export interface MergedClosure {
  issue: TrackedIssue;
  pr: number;
}

/** A pull request to open, or to update in place when one is open for the branch (docs/implement.md). */
export interface PullRequestInput {
  issueId: string;
  /** The pushed branch (`dissent/issue-<ID>`). */
  head: string;
  /** The branch it would merge into. */
  base: string;
  title: string;
  body: string;
  draft: boolean;
}

/** The pull request as the tracker has it. */
export interface PullRequestRef {
  number: number;
  url: string;
  /** True when an open one was updated rather than a new one opened. */
  updated: boolean;
}

/** The port every tracker adapter implements (local store, GitHub). */
export interface Tracker {
  readonly kind: "local" | "github";
  /** A human-readable name for messages ("local", "owner/name"). */
  readonly name: string;
  get(id: string): Promise<TrackedIssue>;
  /** Open issues. */
  list(): Promise<TrackedIssue[]>;
  /** Adds before it removes; idempotent; returns the labels afterwards. */
  setLabels(id: string, change: { add: readonly string[]; remove: readonly string[] }): Promise<string[]>;
  /** Publishes the plan (GitHub: one comment, updated in place on re-plan). */
  publishPlan(id: string, report: PlanReport): Promise<void>;
  /** Notes the merge on the issue. */
  recordMerged(id: string, pr: number, gaps: readonly Concern[]): Promise<void>;
  /** Closed issues still labelled ready/hitl/plan whose closing pull request was merged. */
  mergedClosures(): Promise<MergedClosure[]>;
  /** Opens (or updates) the pull request of an implemented issue; absent on trackers without pull requests (the local one). */
  openPullRequest?(input: PullRequestInput): Promise<PullRequestRef>;
  /** The project the tracker's issues belong to (GitHub: the repository's name and description), the default of config `project`. */
  project?(): Promise<{ name: string; description: string | null }>;
}
