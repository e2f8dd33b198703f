import type { Ctx } from "./context.js";
import { renderJson } from "./format.js";
import { nearQuote } from "./near-quote.js";
import { rngFor } from "./prng.js";
import { block, concernsIn, type Seen } from "./request.js";
import { contains } from "./text.js";
import type { Defect } from "./types.js";
import { carries, defectsOf, recognise } from "./world.js";

/** The criteria of the request's `acceptance_criteria` block, one per markdown bullet. */
function criteriaOf(seen: Seen): string[] {
  return (block(seen, "artifact", "acceptance_criteria") ?? "")
    .split("\n")
    .map((l) => /^\s*[-*]\s+(.+)$/.exec(l)?.[1]?.trim())
    .filter((c): c is string => Boolean(c));
}

/** The diff of the change under review (its fence), without the test output. */
const diffOf = (text: string) => /```diff\n([\s\S]*?)\n```/.exec(text)?.[1] ?? "";

/**
 * The settlement of each tracked concern (docs/implement.md "Forwarded concerns"), as a careful model
 * settles it: `addressed` quoting the diff line that answers it when the diff carries that line (near
 * verbatim, as models quote), `not_addressed` when the diff leaves what it names alone, `cannot_tell`
 * for a concern about nothing it can find in the change.
 */
function settlements(ctx: Ctx, seen: Seen, defects: readonly Defect[], text: string) {
  const diff = diffOf(text);
  return concernsIn(block(seen, "tracked_concerns")).map((c, i) => {
    const d = recognise(defects, c);
    if (d === undefined) return { id: c.id, evidence: "", verdict: "cannot_tell", reason: "Nothing in the change is about this concern either way." };
    const answer = d.answeredBy;
    if (answer !== undefined && contains(diff, answer)) {
      const line =
        diff
          .split("\n")
          .find((l) => contains(l, answer))
          ?.replace(/^[+-]/, "")
          .trim() ?? answer;
      const evidence = ctx.dice.on("nearQuotes", d.id, "settle") ? nearQuote(line, diff, rngFor(ctx.seed, seen.key, "settle", d.id)) : line;
      return { id: c.id, evidence, verdict: i % 2 === 0 ? "addressed" : "Addressed", reason: `The diff adds it: ${line}` };
    }
    return { id: c.id, evidence: "", verdict: i % 2 === 0 ? "not_addressed" : "Not addressed", reason: "The diff does not touch what this concern names." };
  });
}

/**
 * `review.acceptance` (docs/implement.md), as a careful frontier model answers: a criterion is
 * `not_met` when the change still carries a defect in its lane (quoting the line), `met` when the
 * tests pass (quoting the test line), and `cannot_tell` when they fail or did not run. Given tracked
 * concerns, it settles each on the diff too (`settlements`).
 */
export function acceptanceReply(ctx: Ctx, seen: Seen): string {
  const text = block(seen, "under_review") ?? "";
  const criteria = criteriaOf(seen);
  const defects = defectsOf(ctx.scenario, seen);
  const carried = defects.filter((d) => d.lanes.includes("review.acceptance") && carries(text, d));
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
  const concerns = block(seen, "tracked_concerns") !== undefined ? settlements(ctx, seen, defects, text) : undefined;
  return renderJson(ctx.dice, ctx.seed, seen.key, {
    value: { criteria: items, ...(concerns ? { concerns } : {}) },
    ...(items[0] ? { rawCandidate: items[0].reason } : {}),
    thinkAlternative: {
      criteria: items.map((c) => ({ ...c, verdict: "met" })),
      ...(concerns ? { concerns: concerns.map((c) => ({ ...c, verdict: "addressed" })) } : {}),
    },
    subject: `whether the change meets the acceptance criteria of "${seen.issue?.title ?? ""}"`,
  });
}
