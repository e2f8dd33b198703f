import { isSerious, SEVERITY_RANK, type Concern, type Finding, type MustAddressBy, type Severity, type StagePhase } from "../contracts/concern.js";
import { fingerprint } from "./fingerprint.js";
import type { CodeLocation } from "../contracts/code-context.js";
import { groundQuote, type CodeEvidence } from "./code-grounding.js";
import { overlaps, type GroundingText } from "./grounding.js";

/** One critic's findings in one round. */
export interface Vote {
  role: string;
  findings: readonly Finding[];
  /** Ids of the known gaps this critic was shown: a finding's `known_gap` counts only when it names one of them. */
  knownGaps?: readonly string[];
  /** The code block this critic was given: a serious finding may quote it instead of the artifact (docs/issue.md "Findings about the code"). */
  code?: CodeEvidence;
}

/** A round's verdict: what blocks convergence, what is carried forward as advice, what awaits a second opinion, and what was discounted. */
export interface Tally {
  blocking: Concern[];
  advisory: Concern[];
  /**
   * Lone grounded HIGHs of a council of two or more critics, still HIGH: each awaits a second opinion
   * (see second-opinion.ts), which decides whether it blocks. Most severe first, then in order of appearance.
   */
  lone: Concern[];
  /** CRITICAL/HIGH findings whose evidence was not in the artifact: counted as MEDIUM. */
  ungrounded: number;
  /** Findings beyond a critic's first MAX_FINDINGS in the round: dropped. */
  overCap: number;
}

/** A critic's findings beyond this many in one round are dropped and counted (docs/issue.md). */
export const MAX_FINDINGS = 5;

/** How a stage weighs findings beyond the council rule (the stage table says; docs/issue.md). */
export interface TallyRules {
  /** Findings at or above this severity go back to the producer (they block), whatever the council's size; an ungrounded one never does. */
  returnAtLeast?: Severity;
  /** Categories of findings this stage's producer cannot fix: they never block and go on with their severity. */
  forwardCategories?: readonly string[];
}

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
  rules?: TallyRules;
  /** The id of the concern with this fingerprint first raised by `role` (stable within a stage). */
  idFor: (fingerprint: string, role: string) => string;
  now: () => string;
}

/** A finding after grounding: its effective severity, where its evidence sits in the artifact, and the known gap it validly names. */
interface Weighed {
  role: string;
  finding: Finding;
  severity: Severity;
  raised: Severity;
  span: [number, number] | null;
  /** Which text the span is of: "artifact", or the code block's key (spans of different texts never overlap). */
  source: string;
  /** Where a quote of the code block is. */
  inCode: CodeLocation | undefined;
  fp: string;
  knownGap: string | undefined;
}

/** The grounding step: serious findings must quote the artifact or the critic's code block; a `known_gap` counts only if the critic was shown that entry. */
function weigh(votes: readonly Vote[], artifact: GroundingText): { weighed: Weighed[]; ungrounded: number; overCap: number } {
  let ungrounded = 0;
  let overCap = 0;
  const weighed: Weighed[] = [];
  for (const vote of votes) {
    overCap += Math.max(0, vote.findings.length - MAX_FINDINGS);
    const shown = new Set(vote.knownGaps ?? []);
    for (const finding of vote.findings.slice(0, MAX_FINDINGS)) {
      let severity = finding.severity;
      let span: [number, number] | null = null;
      let source = "artifact";
      let inCode: CodeLocation | undefined;
      if (isSerious(severity)) {
        const q = groundQuote(artifact, vote.code, finding.evidence ?? "");
        if (q.in === "none") {
          severity = "MEDIUM";
          ungrounded++;
        } else {
          span = q.span;
          if (q.in === "code") {
            source = q.key;
            inCode = q.at;
          }
        }
      }
      const gap = finding.known_gap?.trim().replace(/^\[|\]$/g, "");
      weighed.push({
        role: vote.role,
        finding,
        severity,
        raised: finding.severity,
        span,
        source,
        inCode,
        fp: fingerprint({ concern: finding.concern }),
        knownGap: gap && shown.has(gap) ? gap : undefined,
      });
    }
  }
  return { weighed, ungrounded, overCap };
}

/**
 * Near-identical findings of one round, as groups in order of first appearance: a finding joins the
 * group holding its fingerprint, else the first group with another critic's finding whose grounded
 * evidence overlaps its own in the artifact (what corroboration means, docs/issue.md). Two
 * CRITICALs are never merged by place alone: each blocks on its own, and two distinct ones from the
 * escalating roles send the issue to a person. Each group becomes one concern.
 */
function groups(weighed: readonly Weighed[]): Weighed[][] {
  const out: Weighed[][] = [];
  const critical = (w: Weighed) => w.severity === "CRITICAL";
  for (const w of weighed) {
    const overlapping = (y: Weighed) => y.role !== w.role && w.source === y.source && w.span !== null && y.span !== null && overlaps(w.span, y.span);
    const home = out.find((g) => g.some((y) => y.fp === w.fp)) ?? out.find((g) => g.some(overlapping) && !(critical(w) && g.some(critical)));
    if (home) home.push(w);
    else out.push([w]);
  }
  return out;
}

/**
 * The council tally (docs/issue.md "How a HIGH becomes blocking"). A CRITICAL or HIGH finding must quote the
 * artifact, or the code its critic was given; an ungrounded one counts as MEDIUM. Near-identical findings of the round are one concern
 * listing every critic that raised it. With two or more critics: any CRITICAL blocks; a HIGH blocks
 * when another critic corroborates it, or when it validly names a known gap; a lone grounded HIGH
 * awaits a second opinion (`lone`). With one critic, any CRITICAL or HIGH blocks. The stage's rules
 * may send more back to the producer (`returnAtLeast`) or forward a category it cannot fix. Nothing
 * else is dropped.
 */
export function tally(votes: readonly Vote[], ctx: TallyContext): Tally {
  const { weighed, ungrounded, overCap } = weigh(votes, ctx.artifact);
  const result: Tally = { blocking: [], advisory: [], lone: [], ungrounded, overCap };
  const forwardOnly = new Set(ctx.rules?.forwardCategories ?? []);
  const returnAt = ctx.rules?.returnAtLeast ? SEVERITY_RANK[ctx.rules.returnAtLeast] : Number.POSITIVE_INFINITY;
  for (const items of groups(weighed)) {
    // The voice of the concern: its most severe member, the lead role's first where several tie.
    const top = Math.max(...items.map((w) => SEVERITY_RANK[w.severity]));
    const atTop = items.filter((w) => SEVERITY_RANK[w.severity] === top);
    const voice = atTop.find((w) => ctx.leadRoles?.has(w.role)) ?? (atTop[0] as Weighed);
    const severity = voice.severity;
    const category = voice.finding.category ?? voice.finding.dimension ?? "general";
    const serious = items.filter((w) => isSerious(w.severity));
    const corroborated = new Set(serious.map((w) => w.role)).size >= 2;
    const knownGap = voice.knownGap ?? serious.find((w) => w.knownGap)?.knownGap;
    const others = [...new Set(items.map((w) => w.role))].filter((r) => r !== voice.role);

    let blocks: boolean;
    let lone = false;
    if (forwardOnly.has(category)) blocks = false;
    // What the producer can fix goes back to it, unless the tally discounted it (an ungrounded quote).
    else if (SEVERITY_RANK[severity] >= returnAt && voice.raised === severity) blocks = true;
    else if (ctx.criticCount >= 2) {
      blocks = severity === "CRITICAL" || (severity === "HIGH" && (corroborated || knownGap !== undefined));
      lone = severity === "HIGH" && !blocks;
    } else blocks = isSerious(severity);

    // human_required counts only on a grounded HIGH or CRITICAL finding (docs/issue.md): a LOW product question is advice.
    const human = items.some((w) => w.finding.human_required === true && isSerious(w.severity));
    const concern: Concern = {
      id: ctx.idFor(voice.fp, voice.role),
      phase: ctx.phase,
      stage: ctx.stage,
      raised_by: voice.role,
      severity,
      ...(voice.raised !== voice.severity ? { raised_severity: voice.raised, severity_change: "ungrounded" as const } : {}),
      ...(knownGap && isSerious(severity) ? { known_gap: knownGap } : {}),
      ...(others.length ? { also_raised_by: others } : {}),
      category,
      concern: voice.finding.concern,
      evidence: voice.finding.evidence ?? "",
      ...(voice.inCode ? { evidence_in_code: voice.inCode } : {}),
      must_address_by: ctx.mustAddressBy,
      human_required: human,
      fingerprint: voice.fp,
      raised_at: ctx.now(),
    };
    (lone ? result.lone : blocks ? result.blocking : result.advisory).push(concern);
  }
  // Most severe first, then in order of appearance (sort is stable): the order second opinions are asked in.
  result.lone.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  return result;
}
