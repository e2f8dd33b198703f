import { context, SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import type { ObservedCall } from "../models/types.js";
import type { CriticVoteReport } from "../pipeline/stage-runner.js";
import type { PipelineProgress, PlanResult } from "../pipeline/plan-issue.js";
import { epochMs, startChatSpan, type ChatSpanOptions } from "./chat-span.js";
import { DISSENT, EVALUATION_RESULT_EVENT, GEN_AI, OPERATION } from "./conventions.js";
import { evaluationOfVote, markFailed, type CostOf } from "./evaluation.js";
import { guard } from "./guard.js";

/**
 * The trace of one `issue plan`: a workflow span, a span per stage and per round, a chat span per
 * model call, and a `gen_ai.evaluation.result` event for each critic's vote. Fed by the pipeline's
 * progress, vote and call hooks; spans are timed from what the hooks report.
 */
export class PlanTrace {
  private readonly root: Span;
  private readonly stages = new Map<string, Span>();
  private readonly rounds = new Map<string, Span>();
  private readonly pending: Promise<void>[] = [];

  constructor(
    private readonly tracer: Tracer,
    issueId: string,
    private readonly o: ChatSpanOptions & { cost: CostOf; warn: (message: string) => void },
  ) {
    this.root = tracer.startSpan(`${OPERATION.INVOKE_WORKFLOW} dissent.issue_plan`, {
      attributes: { [GEN_AI.OPERATION_NAME]: OPERATION.INVOKE_WORKFLOW, [GEN_AI.WORKFLOW_NAME]: "dissent.issue_plan", [DISSENT.ISSUE_ID]: issueId },
    });
  }

  private child(name: string, parent: Span, attributes: Record<string, string | number>): Span {
    return this.tracer.startSpan(name, { attributes }, trace.setSpan(context.active(), parent));
  }

  private stageSpan(stage: string, phase?: string): Span {
    let span = this.stages.get(stage);
    if (!span) {
      span = this.child(`stage ${stage}`, this.root, { [DISSENT.STAGE]: stage, ...(phase ? { [DISSENT.PHASE]: phase } : {}) });
      this.stages.set(stage, span);
    }
    return span;
  }

  private endRounds(stage: string): void {
    for (const [key, span] of this.rounds) {
      if (!key.startsWith(`${stage}#`)) continue;
      span.end();
      this.rounds.delete(key);
    }
  }

  /** The pipeline's hooks, chained after the caller's own (which run first and may throw as before). */
  hooks(onCall?: (c: ObservedCall) => void, onProgress?: (p: PipelineProgress) => void) {
    const safe = guard(this.o.warn);
    const call = safe((c: ObservedCall) => this.call(c));
    const progress = safe((p: PipelineProgress) => this.progress(p));
    return {
      observe: (c: ObservedCall) => {
        onCall?.(c);
        call(c);
      },
      onProgress: (p: PipelineProgress) => {
        onProgress?.(p);
        progress(p);
      },
      onVote: safe((v: CriticVoteReport) => this.vote(v)),
    };
  }

  /** Runs the plan inside the workflow span, and ends the span with its outcome. */
  async wrap(plan: () => Promise<PlanResult>): Promise<PlanResult> {
    let result: PlanResult;
    try {
      result = await plan();
    } catch (e) {
      await this.end({ error: e });
      throw e;
    }
    await this.end({ status: result.status, route: result.route });
    return result;
  }

  /** The pipeline's progress: stages and rounds open and close. */
  progress(p: PipelineProgress): void {
    if (p.kind === "stage") {
      const { stage, round, step } = p.progress;
      const key = `${stage}#${round}`;
      if (step === "producing" && !this.rounds.has(key)) {
        this.endRounds(stage);
        this.rounds.set(key, this.child(`round ${round}`, this.stageSpan(stage, p.phase), { [DISSENT.STAGE]: stage, [DISSENT.ROUND]: round }));
      } else if (step === "tallied") {
        const span = this.rounds.get(key);
        if (span) {
          if (p.progress.blocking !== undefined) span.setAttribute(DISSENT.BLOCKING, p.progress.blocking);
          span.end();
          this.rounds.delete(key);
        }
      }
    } else if (p.kind === "stage-done") {
      const r = p.run;
      this.endRounds(r.stage);
      const span = this.stageSpan(r.stage, r.phase);
      span.setAttributes({
        [DISSENT.OUTCOME]: r.outcome,
        [DISSENT.PHASE]: r.phase,
        "dissent.stage.rounds": r.rounds,
        "dissent.stage.calls": r.calls,
        "dissent.stage.concerns_raised": r.concerns_raised,
        "dissent.stage.concerns_forwarded": r.concerns_forwarded,
        "dissent.stage.critic_failures": r.critic_failures,
        [GEN_AI.USAGE_INPUT_TOKENS]: r.input_tokens,
        [GEN_AI.USAGE_OUTPUT_TOKENS]: r.output_tokens,
        [GEN_AI.USAGE_CACHE_READ_INPUT_TOKENS]: r.cached_input_tokens ?? 0,
        ...(r.cache_write_input_tokens ? { [GEN_AI.USAGE_CACHE_CREATION_INPUT_TOKENS]: r.cache_write_input_tokens } : {}),
        ...(r.cost_usd !== null ? { [DISSENT.COST_USD]: r.cost_usd } : {}),
      });
      if (r.outcome === "crashed") span.setStatus({ code: SpanStatusCode.ERROR, message: "every critic failed" });
      span.end();
      this.stages.delete(r.stage);
    }
  }

  /** A finished model call: a chat span under its round (or stage, or the workflow). */
  call(c: ObservedCall): void {
    const parent = (c.stage !== undefined && (this.rounds.get(`${c.stage}#${c.round ?? 0}`) ?? this.stages.get(c.stage))) || this.root;
    this.pending.push(
      this.o.cost(c).then((cost) => {
        startChatSpan(this.tracer, parent, c, this.o, cost).end(epochMs(c.endedAt));
      }),
    );
  }

  /** A critic's vote on the round's artifact: one evaluation event on the round's span. */
  vote(v: CriticVoteReport): void {
    const span = this.rounds.get(`${v.stage}#${v.round}`) ?? this.stages.get(v.stage) ?? this.root;
    span.addEvent(EVALUATION_RESULT_EVENT, evaluationOfVote(v, this.o.logContent, this.o.redact));
  }

  /** Ends the workflow (and anything a failure left open); the spans are exported in the background. */
  async end(outcome: { status?: string; route?: string; error?: unknown }): Promise<void> {
    await Promise.allSettled(this.pending); // a span that could not be made never fails the run
    for (const stage of [...this.stages.keys()]) this.endRounds(stage);
    for (const span of this.stages.values()) span.end();
    this.stages.clear();
    if (outcome.status) this.root.setAttribute(DISSENT.STATUS, outcome.status);
    if (outcome.route) this.root.setAttribute(DISSENT.ROUTE_KIND, outcome.route);
    if (outcome.error !== undefined) markFailed(this.root, outcome.error, this.o.redact);
    this.root.end();
  }
}
