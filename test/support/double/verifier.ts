import type { Ctx } from "./context.js";
import { renderJson } from "./format.js";
import { nearQuote } from "./near-quote.js";
import { rngFor } from "./prng.js";
import { block, type Seen } from "./request.js";
import { tryJson } from "./text.js";
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
  const real = d !== undefined && !d.nitpick && carries(text, d);
  const value = real
    ? {
        evidence: ctx.dice.on("nearQuotes", d.id) ? nearQuote(d.line, text, rngFor(ctx.seed, seen.key, "verify", d.id)) : d.line,
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
