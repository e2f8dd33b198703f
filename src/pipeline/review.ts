import { fingerprint } from "../adversarial/fingerprint.js";
import { groundQuote } from "../adversarial/code-grounding.js";
import { ground, groundingText } from "../adversarial/grounding.js";
import type { CodeLocation } from "../contracts/code-context.js";
import { isClaim, isSerious, type AdversarialState, type Concern, type ConcernResolution, type Severity } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { BudgetExceeded, isFatal, messageOf } from "../errors.js";
import type { CallDoor } from "../models/call.js";
import { carryEvents, resolutionEvents } from "./resolutions.js";
import type { CodeSelection } from "./code-context.js";
import { issueText, parseFindings, reviewerRequest, type RoleContext } from "./roles.js";
import { ESCALATING_ROLES } from "./stages.js";

export interface ReviewInput {
  issueId: string;
  /** Every pending concern: the CRITICAL and HIGH ones are must-address constraints for the reviewer. */
  pending: readonly Concern[];
  /** Producers' unconfirmed claims on CRITICAL/HIGH concerns, shown beside the plan (docs/issue.md). */
  claims: readonly ConcernResolution[];
  context: RoleContext;
  /** The code the reviewer reads (chosen for the issue, the plan and its criteria); its findings may quote it. */
  code?: CodeSelection;
  /** The plan of the issue's previous cycle: a pending concern quoting only it is shown as stale (docs/issue.md "Replanning"). */
  earlier?: string;
  call: CallDoor;
  concernId: (fingerprint: string, phase: string, role: string) => string;
  now: () => string;
  warn?: (message: string) => void;
}

/** What the review gave: events to commit, whether it rejected the plan, and its counts. */
export interface ReviewOutcome {
  events: NewEvent[];
  rejected: boolean;
  ungrounded: number;
}

/**
 * The plan reviewer, on its seven dimensions. A grounded CRITICAL or HIGH finding rejects the plan
 * and goes back to the planner of the next `issue plan`; the rest, and every pending concern the
 * plan does not settle, go on to implementation. A reviewer that cannot run (budget) or whose reply
 * is unusable rejects too: an unreviewed plan is never `ready`.
 */
export async function reviewPlan(input: ReviewInput): Promise<ReviewOutcome> {
  const { issueId, now } = input;
  // What the reviewer reviews: its serious findings must quote it, and a JSON value quoted from it is never the reply.
  const planTexts = [input.context.artifacts.plan ?? "", input.context.artifacts.acceptance_criteria ?? ""];
  const planText = groundingText(planTexts.join("\n\n"));
  // After a replan, a concern whose quote is only in the previous plan is shown as stale, never as quoting this one.
  const pending = input.earlier === undefined ? input.pending : markStale(input.pending, currentTexts(input.context), input.earlier);
  const restamped = pending.filter((c, i) => c !== input.pending[i]);
  let ungrounded = 0;
  const concern = (c: { severity: Severity; category: string; concern: string; evidence?: string | undefined; human?: boolean | undefined }): Concern => {
    let severity = c.severity;
    let raised: Severity | undefined;
    let inCode: CodeLocation | undefined;
    // Reviewer findings follow the critics' rule: CRITICAL or HIGH only with evidence from the plan, or from the code it read (docs/issue.md).
    if (isSerious(severity) && c.category !== "review_unavailable") {
      const q = groundQuote(planText, input.code?.evidence, c.evidence ?? "");
      if (q.in === "none") {
        raised = severity;
        severity = "MEDIUM";
        ungrounded++;
      } else if (q.in === "code") inCode = q.at;
    }
    const fp = fingerprint({ concern: c.concern });
    const blocks = isSerious(severity);
    // The reviewer restating a pending concern keeps that concern's identity and lineage; it only
    // sends it back to the planner (when it rejects) or on to implementation, as every concern the
    // plan leaves (a restatement without a quote of the plan rejects nothing) — it does not become a
    // new concern of its own, nor stay due at a phase that is over.
    const known = pending.find((p) => p.fingerprint === fp);
    if (known) {
      // A stale concern the reviewer quotes from this plan is grounded again: its new quote replaces the old.
      const regrounded = known.evidence_stale && c.evidence && ground(planText, c.evidence).grounded ? { ...fresh(known), evidence: c.evidence } : known;
      return { ...regrounded, must_address_by: blocks ? "plan" : "implement" };
    }
    return {
      id: input.concernId(fp, "review", "plan_reviewer"),
      phase: "review",
      stage: "plan_reviewer",
      raised_by: "plan_reviewer",
      severity,
      ...(raised ? { raised_severity: raised } : {}),
      category: c.category,
      concern: c.concern,
      evidence: c.evidence ?? "",
      ...(inCode ? { evidence_in_code: inCode } : {}),
      must_address_by: blocks ? "plan" : "implement",
      human_required: c.human === true && blocks,
      fingerprint: fp,
      raised_at: now(),
    };
  };
  let answered: NewEvent[] = [];
  let raised: Concern[];
  try {
    const context = input.code ? { ...input.context, code: input.code.text } : input.context;
    const reply = await input.call({ role: "plan_reviewer" }, reviewerRequest(context, pending, input.claims), (answer) =>
      parseFindings(answer, [...planTexts, issueText(input.context.issue), ...(input.code ? [input.code.text] : [])]),
    );
    const parsed = reply.parsed;
    if (!parsed?.ok) throw new Error(`the plan reviewer's reply was unusable (${parsed?.error ?? "no reply"})`);
    answered = resolutionEvents(issueId, pending, parsed.value.addressed ?? [], { kind: "reviewer" }, now);
    raised = parsed.value.findings.map((f) =>
      concern({ severity: f.severity, category: f.dimension ?? f.category ?? "general", concern: f.concern, evidence: f.evidence, human: f.human_required }),
    );
  } catch (e) {
    if (isFatal(e)) throw e;
    const why = BudgetExceeded.isInstance(e) ? "the call budget ran out before the plan reviewer could run" : messageOf(e);
    input.warn?.(`plan reviewer could not review the plan of issue ${issueId}: ${why}`);
    raised = [concern({ severity: "HIGH", category: "review_unavailable", concern: `The plan was not reviewed: ${why}` })];
  }
  const fromReview = new Set(raised.map((c) => c.id));
  const onward = carryEvents(
    issueId,
    pending.filter((c) => !fromReview.has(c.id)),
    answered,
    "implement",
    "review",
  );
  const reviewed: NewEvent[] = raised.map((c) => ({ type: "ConcernForwarded", issue_id: issueId, concern: c, reason: "review" }));
  // A concern newly marked stale (or grounded again) that nothing above records again is recorded as it now is.
  const recorded = new Set([...fromReview, ...onward.flatMap((e) => (e.type === "ConcernForwarded" ? [e.concern.id] : []))]);
  const settled = new Set(answered.flatMap((e) => (e.type === "ConcernAddressed" && !isClaim(e.resolution) ? [e.resolution.concern_id] : [])));
  const marked: NewEvent[] = restamped
    .filter((c) => !recorded.has(c.id) && !settled.has(c.id))
    .map((c) => ({ type: "ConcernForwarded", issue_id: issueId, concern: c, reason: "review" }));
  return { events: [...answered, ...reviewed, ...onward, ...marked], rejected: raised.some((c) => c.must_address_by === "plan"), ungrounded };
}

/** Everything a concern may quote now: the issue and every artifact of the current cycle. */
const currentTexts = (ctx: RoleContext) => [issueText(ctx.issue), ...Object.values(ctx.artifacts).filter((t): t is string => typeof t === "string")];

/** A concern without its stale mark. */
const fresh = (c: Concern): Concern => {
  const { evidence_stale: _stale, ...rest } = c;
  return rest;
};

/** Whether a concern's evidence quotes `text` (grounded as a critic's quote is: docs/issue.md). */
export function quotes(text: string, c: Pick<Concern, "evidence">): boolean {
  return c.evidence.trim() !== "" && ground(groundingText(text), c.evidence).grounded;
}

/**
 * After a replan (docs/issue.md "Replanning"): a concern whose evidence quotes the previous plan and
 * none of the current texts is marked `evidence_stale`; one marked so whose quote is back in the
 * current texts is unmarked. Every other concern is returned as it is (the same object).
 */
export function markStale(pending: readonly Concern[], current: readonly string[], earlier: string): Concern[] {
  const now = groundingText(current.join("\n\n"));
  return pending.map((c) => {
    const grounded = c.evidence.trim() !== "" && ground(now, c.evidence).grounded;
    if (c.evidence_stale) return grounded ? fresh(c) : c;
    return !grounded && quotes(earlier, c) ? { ...c, evidence_stale: true } : c;
  });
}

/**
 * The outcome after review (docs/issue.md): a pending human_required concern of severity HIGH or
 * CRITICAL, or two or more pending CRITICALs with distinct fingerprints from the escalating roles →
 * hitl; else a rejection → needs_replan; else ready.
 */
export function planOutcome(state: AdversarialState, rejected: boolean): "ready" | "needs_replan" | "hitl" {
  const escalations = new Set(state.pending_concerns.filter((c) => c.severity === "CRITICAL" && ESCALATING_ROLES.has(c.raised_by)).map((c) => c.fingerprint));
  if (state.pending_concerns.some((c) => c.human_required && isSerious(c.severity)) || escalations.size >= 2) return "hitl";
  return rejected ? "needs_replan" : "ready";
}

/** Producers' claims still awaiting confirmation: claims on concerns that are still pending. */
export function openClaims(state: AdversarialState): ConcernResolution[] {
  const pending = new Set(state.pending_concerns.map((c) => c.id));
  return state.addressed_concerns.filter((r) => isClaim(r) && pending.has(r.concern_id));
}
