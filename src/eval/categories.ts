import type { AuditCategory } from "../contracts/audit.js";

/**
 * Which concern categories count as finding a planted defect of each category (ADR-015 §2). The
 * six categories have fuzzy borders that careful auditors disagree on; a concern that points at
 * the right passage under a neighbouring name has found the defect. Pairs are symmetric; anything
 * not listed is a miss (a `factual_risk` concern never finds a `policy_compliance` defect).
 *
 * | planted defect          | also accepted as                                   | why |
 * |-------------------------|----------------------------------------------------|-----|
 * | policy_compliance       | boundary_violation                                 | a listed rule vs a constraint of the request: drafts break both the same way |
 * | boundary_violation      | policy_compliance                                  | (same pair) |
 * | factual_risk            | unverifiable_claim, internal_contradiction         | wrong vs unsupported is a judgment of confidence; a wrong figure often contradicts another |
 * | unverifiable_claim      | factual_risk, missing_verification                 | an unsupported claim is a risk, and the fix is to tell the reader to check |
 * | internal_contradiction  | factual_risk                                       | one side of a contradiction is, by itself, a wrong claim |
 * | missing_verification    | unverifiable_claim                                 | "should have said to check" vs "cannot be checked" |
 */
export const CATEGORY_MATCHES: Readonly<Record<AuditCategory, readonly AuditCategory[]>> = {
  policy_compliance: ["policy_compliance", "boundary_violation"],
  boundary_violation: ["boundary_violation", "policy_compliance"],
  factual_risk: ["factual_risk", "unverifiable_claim", "internal_contradiction"],
  unverifiable_claim: ["unverifiable_claim", "factual_risk", "missing_verification"],
  internal_contradiction: ["internal_contradiction", "factual_risk"],
  missing_verification: ["missing_verification", "unverifiable_claim"],
};

/** Does a concern of category `concern` count for a planted defect of category `defect`? */
export function categoryMatches(defect: AuditCategory, concern: AuditCategory): boolean {
  return CATEGORY_MATCHES[defect].includes(concern);
}
