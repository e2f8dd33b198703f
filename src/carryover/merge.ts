import type { Concern, ConcernResolution, ResolutionKind } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { UsageError } from "../errors.js";
import { TRANSIENT_LABELS, transition } from "../contracts/labels.js";
import type { Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import { readWiki, upsertGap } from "./wiki.js";

/** `dissent issue merged --json`. */
export interface MergeResult {
  issue: string;
  pr: number;
  /** True when the issue was already recorded as merged: nothing was added. */
  already_merged: boolean;
  /** Every pending concern without a resolution: recorded in ShippedWithKnownGap. */
  gaps: Concern[];
  /** Wiki entries written or updated (CRITICAL and HIGH gaps only). */
  wiki_entries: string[];
  labels: string[];
}

export interface MergeDeps {
  tracker: Tracker;
  store: Store;
  warn?: (message: string) => void;
  now?: () => string;
  /** Removes what the implement phase left for the issue (its worktree, docs/implement.md); a failure is a warning. */
  cleanup?: (issueId: string) => Promise<void>;
}

/**
 * ADR-0064 "Carryover": what ships despite dissent becomes knowledge. Unresolved concerns go
 * into one ShippedWithKnownGap event; each CRITICAL or HIGH one also becomes (or updates) a wiki entry.
 */
export async function mergeIssue(issueId: string, pr: number, deps: MergeDeps): Promise<MergeResult> {
  if (!Number.isSafeInteger(pr) || pr <= 0 || pr > 2_147_483_647) throw new UsageError(`--pr must be a positive pull request number, not '${pr}'`);
  const now = deps.now ?? (() => new Date().toISOString());
  const issue = await deps.tracker.get(issueId);
  const id = issue.id;
  const row = await deps.store.plan(id);
  if (row?.status === "fixed" || issue.labels.includes("dissent-fixed")) {
    return { issue: id, pr, already_merged: true, gaps: [], wiki_entries: [], labels: issue.labels };
  }
  const gaps = (await deps.store.state(id)).pending_concerns;
  const at = now();
  // Entries first: upserts are idempotent, so a crash before the event below is repaired by running merged again.
  const written: string[] = [];
  let warn = deps.warn;
  for (const gap of gaps) {
    if (gap.severity !== "CRITICAL" && gap.severity !== "HIGH") continue;
    const { id: entry } = await upsertGap(deps.store.wiki, await readWiki(deps.store.wiki, warn), gap, pr, id, at);
    warn = undefined; // one warning per malformed file is enough
    if (!written.includes(entry)) written.push(entry);
  }

  let labels = issue.labels;
  const change = transition(labels, "dissent-fixed", id);
  const remove = [...change.remove, ...TRANSIENT_LABELS.filter((l) => labels.includes(l))];
  if (change.add.length || remove.length) labels = await deps.tracker.setLabels(id, { add: change.add, remove });
  const events: NewEvent[] = [];
  // Recorded even with no gap: the merge itself is on the record, and "none" is an answer.
  events.push({ type: "ShippedWithKnownGap", issue_id: id, pr, concerns: gaps, wiki_entries: written });
  if (change.add.length || remove.length)
    events.push({ type: "LabelChanged", issue_id: id, added: change.add, removed: remove.filter((l) => issue.labels.includes(l)), labels });
  await deps.store.transaction(async (tx) => {
    await tx.append(events);
    const current = (await tx.plan(id)) ??
      row ?? { issue_id: id, cycle: 0, route: null, route_reason: null, calls: 0, cost_usd: 0, concern_seq: 0, status: "new" as const };
    await tx.savePlan({ ...current, status: "fixed" });
  });
  await deps.tracker.recordMerged(id, pr, gaps);
  await deps.cleanup?.(id).catch((e: unknown) => deps.warn?.(`could not remove the worktree of issue ${id}: ${e instanceof Error ? e.message : String(e)}`));
  return { issue: id, pr, already_merged: false, gaps, wiki_entries: written, labels };
}

/** Records by hand how a pending concern was resolved (`dissent issue resolve`). */
export async function resolveConcern(
  issueId: string,
  concernId: string,
  kind: ResolutionKind,
  note: string,
  deps: { store: Store; now?: () => string },
): Promise<ConcernResolution> {
  const state = await deps.store.state(issueId);
  const concern = state.pending_concerns.find((c) => c.id === concernId);
  if (!concern) {
    const done = state.addressed_concerns.some((r) => r.concern_id === concernId);
    throw new UsageError(
      done
        ? `concern ${concernId} of issue ${issueId} is already resolved`
        : `issue ${issueId} has no pending concern ${concernId} (dissent issue show ${issueId} lists them)`,
    );
  }
  const resolution: ConcernResolution = {
    concern_id: concern.id,
    fingerprint: concern.fingerprint,
    resolution_kind: kind,
    note,
    resolved_by: "human",
    resolved_at: (deps.now ?? (() => new Date().toISOString()))(),
  };
  await deps.store.append([{ type: "ConcernAddressed", issue_id: issueId, resolution }]);
  return resolution;
}
