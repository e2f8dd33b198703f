import type { Concern, Finding, MustAddressBy, Severity, StagePhase } from "../contracts/concern.js";
import { fingerprint } from "./fingerprint.js";

/** One critic's findings in one round. */
export interface Vote {
  role: string;
  findings: readonly Finding[];
}

/** A round's verdict: what blocks convergence, and what is carried forward as advice. */
export interface Tally {
  blocking: Concern[];
  advisory: Concern[];
}

export interface TallyContext {
  stage: string;
  phase: StagePhase;
  mustAddressBy: MustAddressBy;
  /** Critics the stage has (not how many answered): the tally rule depends on it. */
  criticCount: number;
  /**
   * When several critics raise one concern, `raised_by` names the first of these roles among them
   * (the pipeline passes the roles whose CRITICALs escalate to a human); otherwise the first in council order.
   */
  leadRoles?: ReadonlySet<string>;
  /** The id of the concern with this fingerprint first raised by `role` (stable within a stage). */
  idFor: (fingerprint: string, role: string) => string;
  now: () => string;
}

const RANK: Record<Severity, number> = { CRITICAL: 4, HIGH: 3, MEDIUM: 2, LOW: 1 };

/**
 * The council tally (CONTRACT §4). With two or more critics, any CRITICAL blocks; a HIGH
 * blocks when two or more critics raise the same concern (same fingerprint); a lone HIGH
 * is kept as MEDIUM. With one critic, any CRITICAL or HIGH blocks. Nothing is dropped.
 */
export function tally(votes: readonly Vote[], ctx: TallyContext): Tally {
  const groups = new Map<string, { first: Finding; role: string; severity: Severity; critics: Set<string>; human: boolean }>();
  for (const vote of votes) {
    for (const f of vote.findings) {
      const fp = fingerprint({ category: f.category ?? f.dimension ?? "general", concern: f.concern });
      const g = groups.get(fp);
      if (!g) {
        groups.set(fp, { first: f, role: vote.role, severity: f.severity, critics: new Set([vote.role]), human: f.human_required === true });
        continue;
      }
      g.critics.add(vote.role);
      if (ctx.leadRoles?.has(vote.role) && !ctx.leadRoles.has(g.role)) g.role = vote.role;
      if (RANK[f.severity] > RANK[g.severity]) g.severity = f.severity;
      g.human ||= f.human_required === true;
    }
  }
  const result: Tally = { blocking: [], advisory: [] };
  for (const [fp, g] of groups) {
    let severity = g.severity;
    let blocks: boolean;
    if (ctx.criticCount >= 2) {
      const corroborated = g.critics.size >= 2;
      blocks = severity === "CRITICAL" || (severity === "HIGH" && corroborated);
      if (severity === "HIGH" && !corroborated) severity = "MEDIUM";
    } else {
      blocks = severity === "CRITICAL" || severity === "HIGH";
    }
    const concern: Concern = {
      id: ctx.idFor(fp, g.role),
      phase: ctx.phase,
      stage: ctx.stage,
      raised_by: g.role,
      severity,
      category: g.first.category ?? g.first.dimension ?? "general",
      concern: g.first.concern,
      evidence: g.first.evidence ?? "",
      must_address_by: ctx.mustAddressBy,
      human_required: g.human,
      fingerprint: fp,
      raised_at: ctx.now(),
    };
    (blocks ? result.blocking : result.advisory).push(concern);
  }
  return result;
}
