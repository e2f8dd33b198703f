import type { AuditMeta } from "./contracts/audit.js";
import type { GateResult } from "./gate/audit-gate.js";
import type { ChallengeResult } from "./gate/challenge.js";
import type { ImplementProgress, ImplementResult } from "./implement/implement-issue.js";
import type { PrReviewResult } from "./github/review-pull.js";
import type { RoundProgress } from "./adversarial/retry-loop.js";
import type { ObservedCall } from "./models/types.js";
import type { PipelineProgress, PlanResult } from "./pipeline/plan-issue.js";
import type { CriticVoteReport } from "./pipeline/stage-runner.js";
import type { Telemetry } from "./telemetry/index.js";

/**
 * What a command's trace gives its run (docs/serve.md): the call observer (chained after the
 * caller's own), the progress and vote hooks (after the caller's), and the span around the run.
 */
export interface CommandTrace<P, R> {
  observe: (call: ObservedCall) => void;
  onProgress?: (p: P) => void;
  onVote?: (v: CriticVoteReport) => void;
  wrap: (run: () => Promise<R>) => Promise<R>;
}

/**
 * One command's wiring: the roles it calls (their keys are required and their in-process models
 * prepared before anything runs; `prices`: their prices too, when a dollar ceiling is set) and
 * its trace. `A` is what the command is about (a run's id, an issue's), `P` its progress, `R` what
 * its trace wraps.
 */
export interface Command<A, P, R> {
  roles(about: A): readonly string[] | Promise<readonly string[]>;
  prices: boolean;
  trace(t: Telemetry, about: A, onCall?: (call: ObservedCall) => void, onProgress?: (p: P) => void): CommandTrace<P, R>;
}

const command = <A, P, R>(c: Command<A, P, R>) => c;

/**
 * The wiring table (ADR-038): each command's models and trace, in one place. `createDissent` runs
 * every command through it — keys → prices → models, then the trace around the call context — and
 * adds only what the command itself needs. A new command (`pr review`) is a new row.
 */
export const COMMANDS = {
  run: command<{ runId: string; audit: boolean }, never, GateResult>({
    roles: ({ audit }) => (audit ? ["executor", "challenger"] : ["executor"]),
    prices: false,
    trace: (t, { runId, audit }, onCall) => {
      const trace = t.run(runId, audit);
      return { observe: trace.observer(onCall), wrap: (run) => trace.wrap(run) };
    },
  }),
  challenge: command<{ runId: string }, never, { audit_meta: AuditMeta; r: ChallengeResult }>({
    roles: () => ["challenger"],
    prices: false,
    trace: (t, { runId }, onCall) => {
      const trace = t.run(runId, true);
      return { observe: trace.observer(onCall), wrap: (run) => trace.wrap(run) };
    },
  }),
  plan: command<{ issueId: string }, PipelineProgress, PlanResult>({
    roles: async () => (await import("./pipeline/stages.js")).PIPELINE_ROLES,
    prices: true,
    trace: (t, { issueId }, onCall, onProgress) => {
      const trace = t.plan(issueId);
      return { ...trace.hooks(onCall, onProgress), wrap: (run) => trace.wrap(run) };
    },
  }),
  implement: command<{ issueId: string }, ImplementProgress, ImplementResult>({
    roles: async () => (await import("./implement/roles.js")).IMPLEMENT_ROLES,
    prices: true,
    trace: (t, { issueId }, onCall, onProgress) => {
      const trace = t.implement(issueId);
      return { ...trace.hooks(onCall, onProgress), wrap: (run) => trace.wrap(run) };
    },
  }),
  prReview: command<{ subject: string }, RoundProgress, PrReviewResult>({
    roles: async () => (await import("./implement/roles.js")).IMPLEMENT_ROLES,
    prices: true,
    trace: (t, { subject }, onCall) => {
      const trace = t.prReview(subject);
      return { observe: trace.observer(onCall), wrap: (run) => trace.wrap(run) };
    },
  }),
};
