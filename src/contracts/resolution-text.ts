import type { ConcernResolution } from "./concern.js";

/**
 * A resolution as every view shows it — `events` and the dashboard's lineage (docs/issue.md "Events"):
 * the council's own (a blocking concern it no longer raised) as what happened — `settled by council:
 * no longer raised against the final draft`, never a kind like `addressed-in-code`, which a plan
 * cannot be — and every other as its kind and who gave it, `(claim)` where it leaves the concern
 * pending. Pure, with no imports at run time, so the dashboard's bundle uses the same function.
 */
export function resolutionText(r: Pick<ConcernResolution, "resolution_kind" | "resolved_by" | "settled">): string {
  if (r.resolved_by === "council") return "settled by council: no longer raised against the final draft";
  // The claim rule of contracts/concern.ts isClaim, kept here free of zod for the browser.
  const claim = r.settled === false || (r.resolution_kind === "deferred" && r.resolved_by !== "human");
  return `${r.resolution_kind} by ${r.resolved_by}${claim ? " (claim)" : ""}`;
}
