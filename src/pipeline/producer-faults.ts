import type { AddressedItem, Concern } from "../contracts/concern.js";

/** The warning for an artifact that says nothing (a producer fault: the stage does not converge on it). */
export function emptyArtifactWarning(role: string, artifact: string, where: string, why: string): string {
  const what = artifact === "acceptance_criteria" ? "acceptance criteria that say" : `a ${artifact} that says`;
  return `${role} wrote ${what} nothing in ${where} (${why}): a producer fault, not reviewed and never accepted — is the model too weak for this role?`;
}

/** A Decisions heading at any level, as producers write it. */
const DECISIONS = /^#{1,6}\s*Decisions\b/im;

/**
 * What is wrong with a producer's reply that the loop should warn about (docs/issue.md): concern ids
 * it was never given, a json block it never closed (read all the same), and — for a markdown
 * artifact answering concerns — no `## Decisions` section.
 */
export function producerFaults(
  role: string,
  where: string,
  reply: { artifact: unknown; addressed: readonly AddressedItem[]; unclosedFence?: boolean },
  given: readonly Concern[],
  /** Whether the artifact is markdown (only markdown answers concerns in a `## Decisions` section). */
  markdown = typeof reply.artifact === "string",
): string[] {
  const out: string[] = [];
  const known = new Set(given.map((c) => c.id));
  const unknown = [...new Set(reply.addressed.map((a) => a.concern_id).filter((id) => !known.has(id)))];
  if (unknown.length) out.push(`${role} named concern ids it was not given in ${where} (${unknown.join(", ")}): ignored`);
  if (reply.unclosedFence) {
    const n = reply.addressed.length;
    out.push(`${role} never closed its json block in ${where}: read all the same (${n} addressed item${n === 1 ? "" : "s"}) and cut off the artifact`);
  }
  if (given.length && markdown && typeof reply.artifact === "string" && !DECISIONS.test(reply.artifact)) {
    out.push(`${role} answered ${given.length} concern${given.length === 1 ? "" : "s"} in ${where} with no "## Decisions" section`);
  }
  return out;
}
