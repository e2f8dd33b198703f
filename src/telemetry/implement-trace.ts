import { context, SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import type { ImplementProgress, ImplementResult } from "../implement/implement-issue.js";
import type { ObservedCall } from "../models/types.js";
import { epochMs, startChatSpan, type ChatSpanOptions } from "./chat-span.js";
import { DISSENT, GEN_AI, OPERATION } from "./conventions.js";
import { markFailed, type CostOf } from "./evaluation.js";
import { guard } from "./guard.js";

/**
 * The trace of one workflow over a subject (docs/serve.md): a workflow span and a chat span per
 * model call under it. `issue implement` adds a span per agent attempt; `pr review` is this alone.
 */
export class WorkflowTrace<R> {
  protected readonly root: Span;
  private readonly pending: Promise<void>[] = [];

  constructor(
    protected readonly tracer: Tracer,
    workflow: string,
    issueId: string,
    protected readonly o: ChatSpanOptions & { cost: CostOf; warn: (message: string) => void },
    private readonly attributesOf: (result: R) => Record<string, string | number>,
  ) {
    this.root = tracer.startSpan(`${OPERATION.INVOKE_WORKFLOW} ${workflow}`, {
      attributes: { [GEN_AI.OPERATION_NAME]: OPERATION.INVOKE_WORKFLOW, [GEN_AI.WORKFLOW_NAME]: workflow, [DISSENT.ISSUE_ID]: issueId },
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

  /** Runs the work inside the workflow span, ending it with the result's attributes. */
  async wrap(run: () => Promise<R>): Promise<R> {
    let result: R;
    try {
      result = await run();
    } catch (e) {
      await this.end(e);
      throw e;
    }
    this.root.setAttributes(this.attributesOf(result));
    await this.end();
    return result;
  }

  /** A model call: a chat span under the workflow. */
  call(c: ObservedCall): void {
    this.pending.push(this.o.cost(c).then((cost) => startChatSpan(this.tracer, this.root, c, this.o, cost).end(epochMs(c.endedAt))));
  }

  /** Ends the workflow. */
  async end(error?: unknown): Promise<void> {
    await Promise.allSettled(this.pending);
    this.closeOpen();
    if (error !== undefined) markFailed(this.root, error, this.o.redact);
    this.root.end();
  }

  /** Spans a failure left open, ended before the workflow. */
  protected closeOpen(): void {}
}

/**
 * The trace of one `issue implement` (docs/implement.md): a workflow span, a span per agent attempt
 * (its outcome, exit code, diff and test result as attributes, timed as the attempt ran) and a chat
 * span per review call, under the workflow.
 */
export class ImplementTrace extends WorkflowTrace<ImplementResult> {
  private readonly attempts = new Map<number, Span>();

  constructor(tracer: Tracer, issueId: string, o: ChatSpanOptions & { cost: CostOf; warn: (message: string) => void }) {
    super(tracer, "dissent.issue_implement", issueId, o, (result) => ({
      [DISSENT.STATUS]: result.status,
      "dissent.implement.attempts": result.attempts.length,
      [DISSENT.OUTCOME]: result.stage.outcome,
    }));
  }

  /** The driver's hooks, chained after the caller's own. */
  hooks(onCall?: (c: ObservedCall) => void, onProgress?: (p: ImplementProgress) => void) {
    const progress = guard(this.o.warn)((p: ImplementProgress) => this.progress(p));
    return {
      observe: this.observer(onCall),
      onProgress: (p: ImplementProgress) => {
        onProgress?.(p);
        progress(p);
      },
    };
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

  protected override closeOpen(): void {
    for (const span of this.attempts.values()) span.end();
    this.attempts.clear();
  }
}
