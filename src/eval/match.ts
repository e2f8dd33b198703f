import { ground, overlaps, type GroundingText } from "../adversarial/grounding.js";
import type { AuditCategory } from "../contracts/audit.js";
import { categoryMatches } from "./categories.js";

/**
 * When a concern finds a planted defect (ADR-015 §1): its grounded evidence points at the same
 * place in the draft — after normalisation (src/adversarial/grounding.ts) one excerpt contains the
 * other, or they share at least 12 characters, the corroboration rule of docs/issue.md — and its
 * category matches by the table in categories.ts. An excerpt with no place (a missing_verification
 * with empty evidence, on either side) has no location, and a defect marked `anywhere` is the whole
 * draft (a count, a length, a missing check): within its item the category decides (docs/eval.md).
 */

/** What matching needs of a defect or a concern. */
export interface Located {
  category: AuditCategory;
  evidence: string;
  /** A defect that is the whole draft: any concern is at its place. */
  anywhere?: boolean | undefined;
}

/** The normalised span of an excerpt in the draft, or null when it has none (empty, or not in it). */
export function spanOf(text: GroundingText, evidence: string): [number, number] | null {
  const g = ground(text, evidence);
  return g.grounded ? g.span : null;
}

/** How the concerns of one item meet its planted defects. */
export interface ItemMatch {
  /** For each defect, the concerns (by index) that found it: same place, compatible category. */
  foundBy: number[][];
  /** For each defect: some concern points at its place, whatever its category. */
  located: boolean[];
  /** For each concern, the defects (by index) it found. */
  matches: number[][];
}

/** Matches an item's grounded concerns against its planted defects. Many to many: two concerns on one defect both count as right. */
export function matchItem(text: GroundingText, defects: readonly Located[], concerns: readonly Located[]): ItemMatch {
  const dSpans = defects.map((d) => spanOf(text, d.evidence));
  const cSpans = concerns.map((c) => spanOf(text, c.evidence));
  const foundBy: number[][] = defects.map(() => []);
  const located = defects.map(() => false);
  const matches: number[][] = concerns.map(() => []);
  for (const [i, d] of defects.entries()) {
    for (const [j, c] of concerns.entries()) {
      const a = dSpans[i] ?? null;
      const b = cSpans[j] ?? null;
      const compatible = categoryMatches(d.category, c.category);
      const samePlace = d.anywhere ? true : a && b ? overlaps(a, b) : compatible;
      if (samePlace) located[i] = true;
      if (samePlace && compatible) {
        foundBy[i]?.push(j);
        matches[j]?.push(i);
      }
    }
  }
  return { foundBy, located, matches };
}
