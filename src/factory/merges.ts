import { LeaseHeld, messageOf } from "../errors.js";
import { type HeldLease, holdLease } from "../pipeline/lease.js";
import type { Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import type { FactoryLine } from "./lines.js";
import { workerHolder, type Planner } from "./run-job.js";
import type { FactorySettings } from "./settings.js";
import { verdictOf } from "./verdict.js";

export interface MergeDeps {
  planner: Planner;
  store: Store;
  tracker: Tracker;
  settings: Pick<FactorySettings, "host" | "leaseTtlMs" | "leaseRenewMs">;
  line: (l: FactoryLine) => void;
  warn: (message: string) => void;
}

/**
 * ADR-0064's post-merge handler, run by every poll (docs/factory.md): an issue closed by a merged pull
 * request while labelled ready, hitl or plan gets `issue merged` with that PR's number. Under the
 * issue's lease, so two workers never record one merge twice; a merge that fails is a warning and
 * is tried again on the next poll (an auth or configuration error stops the factory).
 */
export async function carryMerges(deps: MergeDeps): Promise<number> {
  const closures = await deps.tracker.mergedClosures();
  let merged = 0;
  for (const { issue, pr } of closures) {
    let lease: HeldLease;
    try {
      lease = await holdLease(deps.store, issue.id, workerHolder(deps.settings), { ttlMs: deps.settings.leaseTtlMs, renewMs: deps.settings.leaseRenewMs });
    } catch (e) {
      if (LeaseHeld.isInstance(e)) continue; // another worker is on it
      throw e;
    }
    try {
      const result = await deps.planner.merge(issue.id, pr);
      if (!result.already_merged) {
        merged++;
        deps.line({ event: "merged", issue: result.issue, pr, gaps: result.gaps.length, wiki_entries: result.wiki_entries });
      }
    } catch (e) {
      if (verdictOf(e) === "fatal" || verdictOf(e) === "interrupted") throw e;
      deps.warn(`could not record the merge of issue ${issue.id} (PR #${pr}): ${messageOf(e)}; the next poll tries again`);
    } finally {
      await lease.release().catch(() => undefined); // an unreleased lease expires by itself
    }
  }
  return merged;
}
