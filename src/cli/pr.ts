import { UsageError } from "../errors.js";
import type { PrReviewResult } from "../github/review-pull.js";
import { IMPLEMENT_ROLES } from "../implement/roles.js";
import { terminalSafe } from "../terminal.js";
import { callKind, callsText, json, withDissent, type Common } from "./common.js";
import type { Io } from "./io.js";

/** The human summary of `pr review`. */
function summaryLines(r: PrReviewResult, kind: "local" | "network" | "model"): string[] {
  const against = r.contract.kind === "plan" ? `issue ${r.contract.issue}'s plan` : "its description";
  const lines = [`pull request #${r.pull} at ${r.head.slice(0, 7)}: ${r.status} · reviewed against ${against} · ${callsText(r.calls, kind)}`];
  if (r.status === "empty") lines.push("the diff changes nothing: nothing was reviewed or posted");
  for (const f of r.findings) lines.push(`  ${f.id}  ${(f.blocking ? "blocks" : "advice").padEnd(6)} ${f.severity.padEnd(8)} ${terminalSafe(f.concern)}`);
  if (r.review)
    lines.push(
      `review: ${r.review.event}, ${r.review.inline} inline, ${r.review.in_body} in its body, ${r.review.resolved} earlier comment(s) resolved · ${r.url}`,
    );
  else if (r.status !== "empty") lines.push(`review: this head was reviewed before; nothing new posted · ${r.url}`);
  if (r.check) lines.push(`check: dissent ${r.check}`);
  return lines;
}

/**
 * `dissent pr review N` (docs/github-action.md "Reviewing any pull request"): exit 0 when the review
 * was made and posted, whatever it found (the `dissent` check carries the verdict); 1 or 2 when it
 * could not be made.
 */
export async function prReview(number: string, opts: Common & { cache: boolean; replay?: boolean }, io: Io): Promise<number> {
  if (!/^#?[1-9][0-9]{0,9}$/.test(number)) throw new UsageError(`a pull request number is a positive integer, not '${terminalSafe(number)}'`);
  if (!opts.cache && opts.replay) throw new UsageError("--no-cache and --replay cannot be used together");
  return withDissent(opts, io, async (d, status) => {
    let result: PrReviewResult;
    try {
      result = await d.reviewPullRequest(Number(number.replace(/^#/, "")), {
        cache: opts.replay ? "replay" : opts.cache ? "use" : "bypass",
        onProgress: (p) => {
          if (!opts.json) status.set(`dissent: review ${p.step}…`);
        },
      });
    } finally {
      status.clear();
    }
    if (opts.json) json(io, result);
    else io.stdout(`${summaryLines(result, callKind(d.config, IMPLEMENT_ROLES)).join("\n")}\n`);
    return 0;
  });
}
