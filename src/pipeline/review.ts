import { fingerprint } from "../adversarial/fingerprint.js";
import type { AdversarialState, Concern } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { BudgetExceeded, ReplyFormatError, messageOf } from "../errors.js";
import type { CallMeta, ModelReply } from "../models/call.js";
import type { ModelRequest } from "../models/types.js";
import { carryEvents, resolutionEvents } from "./resolutions.js";
import { parseFindings, reviewerRequest, type RoleContext } from "./roles.js";
import { ESCALATING_ROLES } from "./stages.js";

export interface ReviewInput {
  issueId: string;
  /** Every pending concern: each is a must-address constraint for the reviewer. */
  pending: readonly Concern[];
  context: RoleContext;
  call: (meta: CallMeta, request: ModelRequest) => Promise<ModelReply>;
  concernId: (fingerprint: string, phase: string, role: string) => string;
  now: () => string;
}

/**
 * The plan reviewer, on its seven dimensions. A CRITICAL or HIGH finding rejects the plan and goes
 * back to the planner of the next `issue plan`; the rest, and every pending concern the plan does
 * not answer, go on to implementation. A reviewer that cannot run (budget) or whose reply is
 * unusable rejects too: an unreviewed plan is not ready.
 */
export async function reviewPlan(input: ReviewInput): Promise<{ events: NewEvent[]; rejected: boolean }> {
  const { issueId, pending, now } = input;
  const concern = (c: { severity: Concern["severity"]; category: string; concern: string; evidence?: string | undefined; human?: boolean | undefined }): Concern => {
    const fp = fingerprint({ category: c.category, concern: c.concern });
    const blocks = c.severity === "CRITICAL" || c.severity === "HIGH";
    return {
      id: input.concernId(fp, "review", "plan_reviewer"),
      phase: "review",
      stage: "plan_reviewer",
      raised_by: "plan_reviewer",
      severity: c.severity,
      category: c.category,
      concern: c.concern,
      evidence: c.evidence ?? "",
      must_address_by: blocks ? "plan" : "implement",
      human_required: c.human === true,
      fingerprint: fp,
      raised_at: now(),
    };
  };
  let answered: NewEvent[] = [];
  let raised: Concern[];
  try {
    const reply = await input.call({ role: "plan_reviewer" }, reviewerRequest(input.context, pending));
    const { findings, addressed } = parseFindings("plan_reviewer", reply.text);
    answered = resolutionEvents(issueId, pending, addressed, "plan_reviewer", now);
    raised = findings.map((f) =>
      concern({ severity: f.severity, category: f.dimension ?? f.category ?? "general", concern: f.concern, evidence: f.evidence, human: f.human_required }),
    );
  } catch (e) {
    if (!BudgetExceeded.isInstance(e) && !ReplyFormatError.isInstance(e)) throw e;
    const why = BudgetExceeded.isInstance(e) ? "the call budget ran out before the plan reviewer could run" : `the plan reviewer's reply was unusable (${messageOf(e)})`;
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
  return { events: [...answered, ...reviewed, ...onward], rejected: raised.some((c) => c.must_address_by === "plan") };
}

/**
 * The outcome after review (CONTRACT §4): a pending human_required concern, or two or more pending
 * CRITICALs with distinct fingerprints from the escalating roles → hitl; else a rejection →
 * needs_replan; else ready.
 */
export function planOutcome(state: AdversarialState, rejected: boolean): "ready" | "needs_replan" | "hitl" {
  const escalations = new Set(state.pending_concerns.filter((c) => c.severity === "CRITICAL" && ESCALATING_ROLES.has(c.raised_by)).map((c) => c.fingerprint));
  if (state.pending_concerns.some((c) => c.human_required) || escalations.size >= 2) return "hitl";
  return rejected ? "needs_replan" : "ready";
}

