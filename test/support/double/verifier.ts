import type { Ctx } from "./context.js";
import { renderJson } from "./format.js";
import { nearQuote } from "./near-quote.js";
import { rngFor } from "./prng.js";
import { block, type Seen } from "./request.js";
import { tryJson } from "./text.js";
import { seesCode } from "./critics.js";
import { carries, defectsOf, recognise } from "./world.js";

/**
 * The `verifier` (a second opinion on a lone HIGH), as the real model behaved: it finds the line the
 * finding is about and confirms a real defect the artifact still carries, quoting it; it refutes a
 * nitpick, or a finding about something the artifact does not say, with a reason.
 */
export function verifierReply(ctx: Ctx, seen: Seen): string {
  const text = block(seen, "under_review") ?? "";
  const raw = tryJson(block(seen, "finding"));
  const finding = raw && typeof raw === "object" ? (raw as { concern?: unknown; evidence?: unknown }) : {};
  const d = recognise(defectsOf(ctx.scenario, seen), finding);
  // A defect only the code shows is confirmed only from the code, quoting it.
  const code = d ? seesCode(seen, d) : undefined;
  const real = d !== undefined && !d.nitpick && carries(text, d) && (d.inCode === undefined || code !== undefined);
  const quote = d?.inCode !== undefined && code !== undefined ? { line: d.inCode, in: code } : { line: d?.line ?? "", in: text };
  const value = real
    ? {
        evidence: ctx.dice.on("nearQuotes", d.id) ? nearQuote(quote.line, quote.in, rngFor(ctx.seed, seen.key, "verify", d.id)) : quote.line,
        reason: `The line does what the finding says: ${d.wordings[0] ?? d.line}`,
        verdict: "confirm",
      }
    : {
        evidence: typeof finding.evidence === "string" ? finding.evidence : "",
        reason:
          d === undefined || !carries(text, d)
            ? "The artifact does not say what the finding describes; nothing here needs fixing before the next stage."
            : "A preference about presentation, not a defect: the artifact works as the issue asks without it.",
        verdict: "refute",
      };
  return renderJson(ctx.dice, ctx.seed, seen.key, {
    value,
    rawCandidate: value.reason,
    thinkAlternative: { ...value, verdict: real ? "refute" : "confirm" },
    subject: `whether the finding "${typeof finding.concern === "string" ? finding.concern : ""}" is a real defect`,
  });
}
