import { z } from "zod";
import type { Finding } from "../contracts/concern.js";
import { isObject, lenientEnum, optionalText, readList, type Read } from "../contracts/lenient.js";
import { parseStructured, type Parsed } from "../models/json.js";

export { ACCEPTANCE_ROLE } from "./roles.js";

/** `met`, `not_met` or `cannot_tell` ("Not met", "NOT-MET" read as well). */
export const CRITERION_VERDICTS = ["met", "not_met", "cannot_tell"] as const;
export type CriterionVerdict = (typeof CRITERION_VERDICTS)[number];

/** One criterion's verdict: quote first, then the decision. */
export const CriterionCheck = z.object({
  criterion: z.string().trim().min(1),
  evidence: optionalText,
  verdict: lenientEnum(CRITERION_VERDICTS),
  reason: optionalText,
});
export type CriterionCheck = z.infer<typeof CriterionCheck>;

/** `review.acceptance`'s reply (the JSON Schema sent as response_format). */
export const AcceptanceReply = z.object({ criteria: z.array(CriterionCheck) });
export type AcceptanceReply = z.infer<typeof AcceptanceReply>;

/** Reads the reply leniently: an item that is not a verdict is dropped and counted; a bare list is the criteria. */
export function readAcceptanceReply(value: unknown): Read<AcceptanceReply> {
  const raw = Array.isArray(value) ? value : isObject(value) ? value.criteria : undefined;
  if (raw === undefined) return { ok: false, error: "criteria: missing" };
  const list = readList(raw, CriterionCheck);
  if (!list) return { ok: false, error: "criteria: expected a list" };
  if (list.items.length === 0 && list.invalid > 0) return { ok: false, error: "criteria: no item is a verdict" };
  return { ok: true, value: { criteria: list.items }, invalid: list.invalid, dropped: list.dropped };
}

/** Parses `review.acceptance`'s reply; a JSON object quoted from the request is never the reply. */
export function parseAcceptance(answer: string, quotedFrom: readonly string[]): Parsed<AcceptanceReply> {
  return parseStructured(answer, readAcceptanceReply, { quotedFrom, arrays: true });
}

/** Matches the reply's checks to the criteria (by words, case and spacing ignored): every criterion gets one, `cannot_tell` when unanswered. */
export function verdictsFor(criteria: readonly string[], checks: readonly CriterionCheck[]): CriterionCheck[] {
  const key = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, " ")
      .trim();
  return criteria.map((criterion, i) => {
    const found = checks.find((c) => key(c.criterion) === key(criterion)) ?? checks[i];
    return found ? { ...found, criterion } : { criterion, verdict: "cannot_tell" as const, reason: "The reviewer gave no verdict for this criterion." };
  });
}

/**
 * The verdicts as findings for the tally (docs/implement.md): `not_met` is HIGH, `cannot_tell`
 * MEDIUM, `met` none. Each quotes the reviewer's evidence, so an unquoted `not_met` counts as MEDIUM.
 */
export function acceptanceFindings(verdicts: readonly CriterionCheck[]): Finding[] {
  const out: Finding[] = [];
  for (const v of verdicts) {
    if (v.verdict === "met") continue;
    out.push({
      ...(v.evidence ? { evidence: v.evidence } : {}),
      severity: v.verdict === "not_met" ? "HIGH" : "MEDIUM",
      category: "acceptance",
      concern:
        v.verdict === "not_met" ? `Acceptance criterion not met: ${v.criterion}` : `Cannot tell from the diff whether this criterion is met: ${v.criterion}`,
    });
  }
  // not_met first: a critic's first five findings are the ones counted.
  return out.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === "HIGH" ? -1 : 1));
}
