import type { Dissent } from "../dissent.js";
import { UsageError } from "../errors.js";
import { isGithubTracker, isMergeable } from "../trackers/github.js";
import type { IssuesEvent } from "./event.js";

/** What handling one `issues: closed` event came to (docs/github-action.md "When an issue closes"). */
export interface ClosedOutcome {
  /**
   * `merged` (the merge is recorded: unresolved concerns shipped as known gaps), `already_merged`
   * (recorded before), `not_merged` (closed, but not by a merged pull request), `ignored` (not a
   * closing, a pull request, or an issue dissent has no plan state for).
   */
  status: "merged" | "already_merged" | "not_merged" | "ignored";
  issue: string;
  /** The merged pull request that closed it. */
  pr: number | null;
  /** The concerns that shipped unresolved. */
  gaps: number;
  /** Wiki entries written or updated (CRITICAL and HIGH gaps). */
  wiki_entries: string[];
  detail: string;
}

/**
 * Handles an `issues` event of the Action (docs/github-action.md): an issue dissent planned that a
 * merged pull request closed gets `issue merged` with that pull request — what `dissent factory` does
 * on its polls — so its unresolved CRITICAL and HIGH concerns become wiki entries the next issue's
 * councils are shown. The pull request is asked of the API (the issue's closing commit), never taken
 * from the payload.
 */
export async function handleClosedEvent(d: Dissent, event: IssuesEvent): Promise<ClosedOutcome> {
  const id = String(event.issue.number);
  const base = { issue: id, pr: null, gaps: 0, wiki_entries: [] };
  if (event.action !== "closed") return { ...base, status: "ignored", detail: `an issue ${event.action}, not closed` };
  if (event.issue.pull_request !== undefined) return { ...base, status: "ignored", detail: "a pull request: dissent records the issues it closes" };
  const labels = event.issue.labels.map((l) => l.name);
  if (!isMergeable(labels))
    return { ...base, status: "ignored", detail: "not in a dissent state a merge is recorded from (ready, hitl, plan, implementing, review)" };

  const tracker = await d.tracker();
  if (!isGithubTracker(tracker)) throw new UsageError(`dissent github closed needs the GitHub tracker; ${d.config.source} uses ${tracker.kind}`);
  if (tracker.name.toLowerCase() !== event.repository.full_name.toLowerCase())
    throw new UsageError(`the event is from ${event.repository.full_name}, but the config's tracker is ${tracker.name}`);
  const pr = await tracker.mergedPullRequest(id);
  if (pr === null) return { ...base, status: "not_merged", detail: `issue ${id} was closed, but not by a merged pull request: nothing shipped` };
  const r = await d.merge(id, pr);
  const gaps = r.gaps.length;
  if (r.already_merged) return { ...base, status: "already_merged", pr, detail: `issue ${id}'s merge in PR #${pr} was recorded before` };
  return {
    status: "merged",
    issue: id,
    pr,
    gaps,
    wiki_entries: r.wiki_entries,
    detail: `issue ${id} merged in PR #${pr}: ${gaps} known gap${gaps === 1 ? "" : "s"} shipped${r.wiki_entries.length ? `, wiki: ${r.wiki_entries.join(", ")}` : ""}`,
  };
}
