import type { Ctx } from "./context.js";
import { renderJson } from "./format.js";
import { nearQuote } from "./near-quote.js";
import { rngFor } from "./prng.js";
import { block, type Seen } from "./request.js";
import { carries, defectsOf } from "./world.js";

/** The criteria of the request's `acceptance_criteria` block, one per markdown bullet. */
function criteriaOf(seen: Seen): string[] {
  return (block(seen, "artifact", "acceptance_criteria") ?? "")
    .split("\n")
    .map((l) => /^\s*[-*]\s+(.+)$/.exec(l)?.[1]?.trim())
    .filter((c): c is string => Boolean(c));
}

/**
 * `review.acceptance` (docs/implement.md), as a careful frontier model answers: a criterion is
 * `not_met` when the change still carries a defect in its lane (quoting the line), `met` when the
 * tests pass (quoting the test line), and `cannot_tell` when they fail or did not run.
 */
export function acceptanceReply(ctx: Ctx, seen: Seen): string {
  const text = block(seen, "under_review") ?? "";
  const criteria = criteriaOf(seen);
  const carried = defectsOf(ctx.scenario, seen).filter((d) => d.lanes.includes("review.acceptance") && carries(text, d));
  const testLine = text.split("\n").find((l) => l.startsWith("Tests: ")) ?? "";
  const passed = /passed \(exit 0\)/.test(testLine);
  const items = criteria.map((criterion, i) => {
    const d = carried[i];
    if (d) {
      const evidence = ctx.dice.on("nearQuotes", d.id) ? nearQuote(d.line, text, rngFor(ctx.seed, seen.key, "acceptance", d.id)) : d.line;
      return { criterion, evidence, verdict: i % 2 === 0 ? "not_met" : "Not met", reason: d.wordings[0] ?? d.line };
    }
    return passed
      ? { criterion, evidence: testLine, verdict: "met", reason: "The change builds it and the tests pass." }
      : { criterion, evidence: testLine, verdict: "cannot_tell", reason: "The tests do not pass, so the change cannot be judged against this criterion." };
  });
  return renderJson(ctx.dice, ctx.seed, seen.key, {
    value: { criteria: items },
    ...(items[0] ? { rawCandidate: items[0].reason } : {}),
    thinkAlternative: { criteria: items.map((c) => ({ ...c, verdict: "met" })) },
    subject: `whether the change meets the acceptance criteria of "${seen.issue?.title ?? ""}"`,
  });
}
