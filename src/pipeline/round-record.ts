import { ground, groundingText } from "../adversarial/grounding.js";
import type { RoundReport } from "../adversarial/retry-loop.js";
import type { Opinion } from "../adversarial/second-opinion.js";
import { MAX_FINDINGS } from "../adversarial/tally.js";
import type { RoundDetail, RoundSecondOpinion, StageRounds } from "../read-models/types.js";

/** The most of a round's draft the record keeps (docs/limits.md); the rest is cut, and the record says so. */
export const ROUND_DRAFT_CHARS = 256 * 1024;

/** The artifact a stage's rounds are kept under, in its cycle (docs/serve.md "What was said"). */
export const roundsArtifact = (stage: string) => `rounds:${stage}`;

function opinionOf(o: Opinion): Omit<RoundSecondOpinion, "concern_id" | "concern" | "raised_by"> {
  switch (o.kind) {
    case "answered": {
      const { verdict, reason, evidence } = o.answer;
      const outcome = verdict === "refute" ? "refuted" : o.grounded ? "confirmed" : "unquoted";
      return { outcome, by: o.by, reason, ...(evidence ? { evidence } : {}) };
    }
    case "failed":
      return { outcome: "failed", why: o.error };
    case "skipped":
      return { outcome: "skipped", why: o.why === "cap" ? "beyond the round's 3 second opinions" : o.why === "budget" ? "no budget left" : "no verifier" };
  }
}

/**
 * One tallied round as the stage keeps it: the draft its critics read (as they read it), each
 * critic's findings with whether their evidence is in that draft, its failure if it failed, each
 * lone HIGH's second opinion, and the concerns that blocked. Artifacts of the plan, kept whatever
 * `log_content` says (ADR-035): the store redacts them as it does every artifact.
 */
export function roundDetail<A>(r: RoundReport<A>, render: (artifact: A) => string): RoundDetail {
  const text = render(r.artifact);
  const under = groundingText(text);
  return {
    round: r.round,
    draft: text.length > ROUND_DRAFT_CHARS ? text.slice(0, ROUND_DRAFT_CHARS) : text,
    ...(text.length > ROUND_DRAFT_CHARS ? { draft_truncated: true } : {}),
    critics: r.critics.map((c) => ({
      role: c.role,
      findings: c.findings.slice(0, MAX_FINDINGS).map((f) => ({
        severity: f.severity,
        category: f.category ?? "",
        concern: f.concern,
        evidence: f.evidence ?? "",
        grounded: f.evidence ? ground(under, f.evidence).grounded : false,
        ...(f.known_gap ? { known_gap: f.known_gap } : {}),
      })),
      ...(c.failed !== undefined ? { failed: c.failed } : {}),
    })),
    second_opinions: r.secondOpinions.map(({ concern, opinion }) => ({
      concern_id: concern.id,
      concern: concern.concern,
      raised_by: concern.raised_by,
      ...opinionOf(opinion),
    })),
    blocking: r.blocking.map((c) => ({ id: c.id, severity: c.severity, concern: c.concern, raised_by: c.raised_by })),
  };
}

/** The record's text: what `rounds:<stage>` holds. */
export const stageRoundsText = (stage: string, rounds: RoundDetail[]): string => JSON.stringify({ v: 1, stage, rounds } satisfies StageRounds);
