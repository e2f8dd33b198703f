import type { Span, Tracer } from "@opentelemetry/api";
import type { AuditMeta } from "../contracts/audit.js";
import type { ObservedCall } from "../models/types.js";
import { epochMs, startChatSpan, type ChatSpanOptions } from "./chat-span.js";
import { DISSENT, EVALUATION_RESULT_EVENT, GEN_AI, OPERATION } from "./conventions.js";
import { evaluationOfVerdict, markFailed, type CostOf } from "./evaluation.js";
import { guard } from "./guard.js";

/**
 * The trace of one `dissent run`: a workflow span, a chat span per call (executor, challenger,
 * revision), and the challenger's verdict as a `gen_ai.evaluation.result` event on the workflow.
 */
export class RunTrace {
  private readonly root: Span;
  private readonly pending: Promise<void>[] = [];

  constructor(
    private readonly tracer: Tracer,
    runId: string,
    audit: boolean,
    private readonly o: ChatSpanOptions & { cost: CostOf; warn: (message: string) => void },
  ) {
    this.root = tracer.startSpan(`${OPERATION.INVOKE_WORKFLOW} dissent.run`, {
      attributes: {
        [GEN_AI.OPERATION_NAME]: OPERATION.INVOKE_WORKFLOW,
        [GEN_AI.WORKFLOW_NAME]: "dissent.run",
        [DISSENT.RUN_ID]: runId,
        "dissent.audit": audit,
      },
    });
  }

  /** The call observer, chained after the caller's own. */
  observer(onCall?: (c: ObservedCall) => void): (c: ObservedCall) => void {
    const call = guard(this.o.warn)((c: ObservedCall) => this.call(c));
    return (c) => {
      onCall?.(c);
      call(c);
    };
  }

  /** Runs the gate inside the workflow span: the verdict becomes an evaluation event, a failure the span's error. */
  async wrap<T extends { audit_meta: AuditMeta }>(gate: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await gate();
    } catch (e) {
      await this.end(e);
      throw e;
    }
    guard(this.o.warn)((meta: AuditMeta) => this.verdict(meta))(result.audit_meta);
    await this.end();
    return result;
  }

  call(c: ObservedCall): void {
    this.pending.push(this.o.cost(c).then((cost) => startChatSpan(this.tracer, this.root, c, this.o, cost).end(epochMs(c.endedAt))));
  }

  /** The challenger's verdict (only when the audit ran). */
  verdict(meta: AuditMeta): void {
    if (!meta.audit_used) return;
    this.root.addEvent(EVALUATION_RESULT_EVENT, evaluationOfVerdict(meta));
  }

  async end(error?: unknown): Promise<void> {
    await Promise.allSettled(this.pending); // a span that could not be made never fails the run
    if (error !== undefined) markFailed(this.root, error, this.o.redact);
    this.root.end();
  }
}
