import type { Concern, Verdict } from "../contracts/concern.js";

/** At most this many lone HIGHs of one round are put to the verifier (docs/issue.md); the rest stay MEDIUM, counted. */
export const MAX_SECOND_OPINIONS = 3;

/** The role a second opinion is routed as (falls back to `default`, like every role). */
export const VERIFIER_ROLE = "verifier";

/** What the verifier said about one lone HIGH: its verdict, its reason, and whether its quote is in the artifact. */
export interface VerifierAnswer {
  verdict: Verdict;
  reason: string;
  evidence: string;
  /** The verifier's quote is of the code block its request carried (the one its critic was given), not of the artifact. */
  quotesCode?: boolean;
}

/** What became of one lone HIGH's second opinion. */
export type Opinion =
  | { kind: "answered"; answer: VerifierAnswer; grounded: boolean; by: string }
  /** The call or its reply failed: the failure is on its ModelCall event. */
  | { kind: "failed"; error: string }
  /** Never asked: beyond the round's cap, or no budget left outside what later stages need. */
  | { kind: "skipped"; why: "cap" | "budget" | "no_verifier" };

/** A lone HIGH kept as MEDIUM: how the concern reads when no second opinion backed it. */
const notCorroborated = (c: Concern): Concern => ({ ...c, severity: "MEDIUM", raised_severity: "HIGH", severity_change: "not_corroborated" });

/**
 * Settles one lone HIGH by its second opinion (docs/issue.md, "How a HIGH becomes blocking"): a
 * `confirm` that quotes the artifact blocks, recorded as corroborated by the verifier; a `refute` makes
 * it MEDIUM with the verifier's reason; a confirm that quotes nothing in the artifact does not confirm
 * (an unsupported yes is no corroboration), and neither does a failed or skipped call: MEDIUM, raised HIGH.
 */
export function settleOne(c: Concern, opinion: Opinion): { concern: Concern; blocks: boolean } {
  if (opinion.kind !== "answered") return { concern: notCorroborated(c), blocks: false };
  const { answer, by } = opinion;
  const second_opinion = { verdict: answer.verdict, reason: answer.reason, by };
  if (answer.verdict === "refute") {
    return { concern: { ...c, severity: "MEDIUM", raised_severity: "HIGH", severity_change: "refuted", second_opinion }, blocks: false };
  }
  if (!opinion.grounded) return { concern: notCorroborated(c), blocks: false };
  return { concern: { ...c, second_opinion }, blocks: true };
}

/** Settles a round's lone HIGHs, in their order: the confirmed ones block, the rest are advice. */
export function settleLone(lone: readonly Concern[], opinions: readonly Opinion[]): { blocking: Concern[]; advisory: Concern[] } {
  const out = { blocking: [] as Concern[], advisory: [] as Concern[] };
  lone.forEach((c, i) => {
    const { concern, blocks } = settleOne(c, opinions[i] ?? { kind: "skipped", why: "no_verifier" });
    (blocks ? out.blocking : out.advisory).push(concern);
  });
  return out;
}
