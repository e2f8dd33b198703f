import { type Attributes, type Span, SpanStatusCode } from "@opentelemetry/api";
import { SEVERITIES } from "../contracts/concern.js";
import type { AuditMeta } from "../contracts/audit.js";
import { messageOf } from "../errors.js";
import type { ObservedCall } from "../models/types.js";
import type { CriticVoteReport } from "../pipeline/stage-runner.js";
import { DISSENT, ERROR_TYPE, GEN_AI } from "./conventions.js";

/** The dollars of an observed call (null when its model has no known price). */
export type CostOf = (c: ObservedCall) => Promise<number | null>;

/** A low-cardinality name for what ended a run: the error's class name. */
export function errorType(e: unknown): string {
  if (e instanceof Error) return e.name && e.name !== "Error" ? e.name : e.constructor.name || "Error";
  return "_OTHER";
}

/** Marks a workflow span failed: the error's type, and its message (redacted) as the span's status. */
export function markFailed(span: Span, e: unknown, redact: (text: string) => string): void {
  span.setAttribute(ERROR_TYPE, errorType(e));
  span.setStatus({ code: SpanStatusCode.ERROR, message: redact(messageOf(e)).slice(0, 500) });
}

/**
 * A critic's vote as a `gen_ai.evaluation.result` event: the evaluation's name is the critic's
 * role, its label the most severe finding (NONE when it found nothing), its score the number of
 * findings. The concerns' text goes in only with `log_content`.
 */
export function evaluationOfVote(v: CriticVoteReport, logContent: boolean, redact: (text: string) => string): Attributes {
  const counts = SEVERITIES.map((s) => [s, v.findings.filter((f) => f.severity === s).length] as const).filter(([, n]) => n > 0);
  const top = counts[0]?.[0] ?? "NONE";
  return {
    [GEN_AI.EVALUATION_NAME]: v.role,
    [GEN_AI.EVALUATION_SCORE_LABEL]: top,
    [GEN_AI.EVALUATION_SCORE_VALUE]: v.findings.length,
    [GEN_AI.EVALUATION_EXPLANATION]: logContent
      ? redact(v.findings.map((f) => `${f.severity}: ${f.concern}`).join("\n")).slice(0, 4000)
      : counts.length
        ? counts.map(([s, n]) => `${n} ${s}`).join(", ")
        : "no findings",
    [DISSENT.STAGE]: v.stage,
    [DISSENT.ROUND]: v.round,
    [DISSENT.FINDINGS]: v.findings.length,
  };
}

/** The challenger's verdict on a `dissent run` draft as a `gen_ai.evaluation.result` event. */
export function evaluationOfVerdict(meta: AuditMeta): Attributes {
  const failed = meta.challenger_status === "failed";
  return {
    [GEN_AI.EVALUATION_NAME]: "challenger",
    [GEN_AI.EVALUATION_SCORE_LABEL]: failed ? "failed" : (meta.audit_verdict ?? "none"),
    [GEN_AI.EVALUATION_SCORE_VALUE]: meta.concerns,
    [GEN_AI.EVALUATION_EXPLANATION]: `${meta.concerns} grounded concern${meta.concerns === 1 ? "" : "s"}, ${meta.ungrounded_concerns} ungrounded${meta.revised ? "; the draft was revised" : ""}`,
    ...(failed ? { [ERROR_TYPE]: "challenger_failed" } : {}),
  };
}
