import type { RoundReport } from "../adversarial/retry-loop.js";
import type { Opinion } from "../adversarial/second-opinion.js";
import { SEVERITY_RANK, type Concern, type Severity } from "../contracts/concern.js";

/** What a second opinion on a lone HIGH came to, as a review shows it. */
export interface SecondOpinionView {
  outcome: "confirmed" | "refuted" | "unquoted" | "failed" | "skipped";
  by?: string;
  reason?: string;
}

/** One finding of a review round as the pull request shows it (docs/adr/037). */
export interface ReviewFinding {
  /** The concern's id: the hidden marker of its inline comment, so a later round finds it again. */
  id: string;
  /** The concern's fingerprint (src/adversarial/fingerprint.ts): finds its comment again when a later run gave it another id. */
  fingerprint?: string;
  severity: Severity;
  /** The severity its critic wrote, when the tally changed it (a lone HIGH kept as MEDIUM). */
  raisedSeverity?: Severity;
  critic: string;
  alsoBy: readonly string[];
  category: string;
  concern: string;
  evidence: string;
  /** It blocks: the round sends the work back (or leaves it for a person). */
  blocking: boolean;
  secondOpinion?: SecondOpinionView;
}

function opinionView(o: Opinion): SecondOpinionView {
  switch (o.kind) {
    case "answered":
      return {
        outcome: o.answer.verdict === "refute" ? "refuted" : o.grounded ? "confirmed" : "unquoted",
        by: o.by,
        ...(o.answer.reason ? { reason: o.answer.reason } : {}),
      };
    case "failed":
      return { outcome: "failed", reason: o.error };
    case "skipped":
      return { outcome: "skipped", reason: o.why === "cap" ? "beyond the round's 3 second opinions" : o.why === "budget" ? "no budget left" : "no verifier" };
  }
}

/** A tallied concern as a review finding, with its second opinion when it had one. */
export function findingOf(c: Concern, blocking: boolean, opinion?: Opinion): ReviewFinding {
  return {
    id: c.id,
    fingerprint: c.fingerprint,
    severity: c.severity,
    ...(c.raised_severity ? { raisedSeverity: c.raised_severity } : {}),
    critic: c.raised_by,
    alsoBy: c.also_raised_by ?? [],
    category: c.category,
    concern: c.concern,
    evidence: c.evidence,
    blocking,
    ...(opinion ? { secondOpinion: opinionView(opinion) } : {}),
  };
}

/** A round's findings, most severe first: what blocked, then the advice, each lone HIGH with its second opinion. */
export function findingsOfRound<A>(r: Pick<RoundReport<A>, "blocking" | "advisory" | "secondOpinions">): ReviewFinding[] {
  const opinions = new Map(r.secondOpinions.map((s) => [s.concern.id, s.opinion]));
  const seen = new Set<string>();
  const out: ReviewFinding[] = [];
  for (const [list, blocking] of [
    [r.blocking, true],
    [r.advisory ?? [], false],
  ] as const) {
    for (const c of list) {
      if (seen.has(c.id)) continue;
      seen.add(c.id);
      out.push(findingOf(c, blocking, opinions.get(c.id)));
    }
  }
  return out.sort((a, b) => Number(b.blocking) - Number(a.blocking) || SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || (a.id < b.id ? -1 : 1));
}
