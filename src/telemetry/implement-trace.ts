import { context, SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import type { ImplementProgress, ImplementResult } from "../implement/implement-issue.js";
import type { ObservedCall } from "../models/types.js";
import { epochMs, startChatSpan, type ChatSpanOptions } from "./chat-span.js";
import { DISSENT, GEN_AI, OPERATION } from "./conventions.js";
import { markFailed, type CostOf } from "./evaluation.js";
import { guard } from "./guard.js";

/**
 * The trace of one `issue implement` (docs/implement.md): a workflow span, a span per agent attempt
 * (its outcome, exit code, diff and test result as attributes, timed as the attempt ran) and a chat
 * span per review call, under the workflow.
 */
export class ImplementTrace {
  private readonly root: Span;
  private readonly attempts = new Map<number, Span>();
  private readonly pending: Promise<void>[] = [];

  constructor(
    private readonly tracer: Tracer,
    issueId: string,
    private readonly o: ChatSpanOptions & { cost: CostOf; warn: (message: string) => void },
  ) {
    this.root = tracer.startSpan(`${OPERATION.INVOKE_WORKFLOW} dissent.issue_implement`, {
      attributes: { [GEN_AI.OPERATION_NAME]: OPERATION.INVOKE_WORKFLOW, [GEN_AI.WORKFLOW_NAME]: "dissent.issue_implement", [DISSENT.ISSUE_ID]: issueId },
    });
  }

  /** The driver's hooks, chained after the caller's own. */
  hooks(onCall?: (c: ObservedCall) => void, onProgress?: (p: ImplementProgress) => void) {
    const safe = guard(this.o.warn);
    const call = safe((c: ObservedCall) => this.call(c));
    const progress = safe((p: ImplementProgress) => this.progress(p));
    return {
      observe: (c: ObservedCall) => {
        onCall?.(c);
        call(c);
      },
      onProgress: (p: ImplementProgress) => {
        onProgress?.(p);
        progress(p);
      },
    };
  }

  /** Runs the implementation inside the workflow span, ending it with the outcome. */
  async wrap(run: () => Promise<ImplementResult>): Promise<ImplementResult> {
    let result: ImplementResult;
    try {
      result = await run();
    } catch (e) {
      await this.end(e);
      throw e;
    }
    this.root.setAttributes({ [DISSENT.STATUS]: result.status, "dissent.implement.attempts": result.attempts.length, [DISSENT.OUTCOME]: result.stage.outcome });
    await this.end();
    return result;
  }

  /** Attempts open and close as the driver reports them. */
  progress(p: ImplementProgress): void {
    if (p.kind === "attempt" && !p.replayed) {
      const span = this.tracer.startSpan(
        `attempt ${p.attempt}`,
        { attributes: { "dissent.implement.attempt": p.attempt } },
        trace.setSpan(context.active(), this.root),
      );
      this.attempts.set(p.attempt, span);
    } else if (p.kind === "attempt-done") {
      const a = p.attempt;
      const span = this.attempts.get(a.attempt);
      if (!span) return;
      span.setAttributes({
        "dissent.implement.outcome": a.outcome,
        "dissent.implement.agent.duration_ms": a.agent.duration_ms,
        "dissent.implement.diff.files": a.diff.files,
        "dissent.implement.diff.insertions": a.diff.insertions,
        "dissent.implement.diff.deletions": a.diff.deletions,
        ...(a.agent.exit_code !== null ? { "dissent.implement.agent.exit_code": a.agent.exit_code } : {}),
        ...(a.test?.exit_code !== undefined && a.test.exit_code !== null ? { "dissent.implement.test.exit_code": a.test.exit_code } : {}),
      });
      if (a.outcome === "timed_out" || a.outcome === "escaped") span.setStatus({ code: SpanStatusCode.ERROR, message: a.outcome });
      span.end();
      this.attempts.delete(a.attempt);
    }
  }

  /** A review call: a chat span under the workflow. */
  call(c: ObservedCall): void {
    this.pending.push(this.o.cost(c).then((cost) => startChatSpan(this.tracer, this.root, c, this.o, cost).end(epochMs(c.endedAt))));
  }

  /** Ends the workflow (and an attempt a failure left open). */
  async end(error?: unknown): Promise<void> {
    await Promise.allSettled(this.pending);
    for (const span of this.attempts.values()) span.end();
    this.attempts.clear();
    if (error !== undefined) markFailed(this.root, error, this.o.redact);
    this.root.end();
  }
}
