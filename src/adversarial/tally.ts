import { isSerious, SEVERITY_RANK, type Concern, type Finding, type MustAddressBy, type Severity, type StagePhase } from "../contracts/concern.js";
import { fingerprint } from "./fingerprint.js";
import { ground, overlaps, type GroundingText } from "./grounding.js";

/** One critic's findings in one round. */
export interface Vote {
  role: string;
  findings: readonly Finding[];
}

/** A round's verdict: what blocks convergence, what is carried forward as advice, and what was discounted. */
export interface Tally {
  blocking: Concern[];
  advisory: Concern[];
  /** CRITICAL/HIGH findings whose evidence was not in the artifact: counted as MEDIUM. */
  ungrounded: number;
  /** Findings beyond a critic's first MAX_FINDINGS in the round: dropped. */
  overCap: number;
}

/** A critic's findings beyond this many in one round are dropped and counted (CONTRACT §4 r2). */
export const MAX_FINDINGS = 5;

export interface TallyContext {
  stage: string;
  phase: StagePhase;
  mustAddressBy: MustAddressBy;
  /** Critics the stage has (not how many answered): the tally rule depends on it. */
  criticCount: number;
  /** The artifact under review, prepared for grounding: CRITICAL/HIGH findings must quote it. */
  artifact: GroundingText;
  /**
   * When several critics raise one concern, `raised_by` names the first of these roles among them
   * (the pipeline passes the roles whose CRITICALs escalate to a human); otherwise the first in council order.
   */
  leadRoles?: ReadonlySet<string>;
  /** The id of the concern with this fingerprint first raised by `role` (stable within a stage). */
  idFor: (fingerprint: string, role: string) => string;
  now: () => string;
}

/** A finding after grounding: its effective severity, and where its evidence sits in the artifact. */
interface Weighed {
  role: string;
  finding: Finding;
  severity: Severity;
  raised: Severity;
  span: [number, number] | null;
  fp: string;
}

/**
 * The council tally (CONTRACT §4 r2). A CRITICAL or HIGH finding must quote the artifact; an
 * ungrounded one counts as MEDIUM. Findings with one fingerprint are one concern. With two or more
 * critics, any CRITICAL blocks; a HIGH blocks when corroborated — another critic of the round raised
 * a CRITICAL or HIGH with the same fingerprint or with grounded evidence overlapping it; a lone HIGH
 * is kept as MEDIUM. With one critic, any CRITICAL or HIGH blocks. Nothing else is dropped.
 */
export function tally(votes: readonly Vote[], ctx: TallyContext): Tally {
  let ungrounded = 0;
  let overCap = 0;
  const weighed: Weighed[] = [];
  for (const vote of votes) {
    overCap += Math.max(0, vote.findings.length - MAX_FINDINGS);
    for (const finding of vote.findings.slice(0, MAX_FINDINGS)) {
      let severity = finding.severity;
      let span: [number, number] | null = null;
      if (isSerious(severity)) {
        const g = ground(ctx.artifact, finding.evidence ?? "");
        if (g.grounded) span = g.span;
        else {
          severity = "MEDIUM";
          ungrounded++;
        }
      }
      weighed.push({ role: vote.role, finding, severity, raised: finding.severity, span, fp: fingerprint({ concern: finding.concern }) });
    }
  }

  // One concern per fingerprint; corroboration (same fingerprint, or overlapping grounded evidence) only decides whether a HIGH blocks.
  const result: Tally = { blocking: [], advisory: [], ungrounded, overCap };
  const corroborates = (x: Weighed, y: Weighed) =>
    x.role !== y.role && isSerious(y.severity) && (x.fp === y.fp || (x.span !== null && y.span !== null && overlaps(x.span, y.span)));
  const byFingerprint = new Map<string, Weighed[]>(); // in order of first appearance
  for (const w of weighed) byFingerprint.set(w.fp, [...(byFingerprint.get(w.fp) ?? []), w]);
  for (const items of byFingerprint.values()) {
    // The voice of the concern: its most severe member, the lead role's first where several tie.
    const top = Math.max(...items.map((w) => SEVERITY_RANK[w.severity]));
    const atTop = items.filter((w) => SEVERITY_RANK[w.severity] === top);
    const voice = atTop.find((w) => ctx.leadRoles?.has(w.role)) ?? (atTop[0] as Weighed);
    let severity = voice.severity;
    let blocks: boolean;
    let raisedSeverity: Severity | undefined = voice.raised !== voice.severity ? voice.raised : undefined;
    if (ctx.criticCount >= 2) {
      const corroborated = items.some((x) => isSerious(x.severity) && weighed.some((y) => corroborates(x, y)));
      blocks = severity === "CRITICAL" || (severity === "HIGH" && corroborated);
      if (severity === "HIGH" && !corroborated) {
        severity = "MEDIUM";
        raisedSeverity = "HIGH";
      }
    } else {
      blocks = isSerious(severity);
    }
    // human_required counts only on a grounded HIGH or CRITICAL finding (CONTRACT §4 r2): a LOW product question is advice.
    const human = items.some((w) => w.finding.human_required === true && isSerious(w.severity));
    const fp = voice.fp;
    const concern: Concern = {
      id: ctx.idFor(fp, voice.role),
      phase: ctx.phase,
      stage: ctx.stage,
      raised_by: voice.role,
      severity,
      ...(raisedSeverity ? { raised_severity: raisedSeverity } : {}),
      category: voice.finding.category ?? voice.finding.dimension ?? "general",
      concern: voice.finding.concern,
      evidence: voice.finding.evidence ?? "",
      must_address_by: ctx.mustAddressBy,
      human_required: human,
      fingerprint: fp,
      raised_at: ctx.now(),
    };
    (blocks ? result.blocking : result.advisory).push(concern);
  }
  return result;
}
