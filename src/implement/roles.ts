/**
 * The roles `issue implement` calls (docs/implement.md): kept apart from the review stage so the
 * config's known-role list (src/config/roles.ts) reads them without loading the loop.
 */

/** The critics that read the diff and write findings. */
export const REVIEW_CRITICS = ["review.correctness", "review.tests", "review.security"] as const;

/** The role that answers for every acceptance criterion. */
export const ACCEPTANCE_ROLE = "review.acceptance";

/** The verifier's role name (the same second opinion as the plan's councils). */
const VERIFIER = "verifier";

/** Every role `issue implement` calls a model for: the review council and the verifier. */
export const IMPLEMENT_ROLES: readonly string[] = [...REVIEW_CRITICS, ACCEPTANCE_ROLE, VERIFIER];
