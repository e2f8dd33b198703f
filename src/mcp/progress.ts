import type { ObservedCall } from "../models/types.js";
import type { PipelineProgress } from "../pipeline/plan-issue.js";
import { STAGES } from "../pipeline/stages.js";
import { inScope } from "./scope.js";

/** What a tool call's progress is told: a step it starts, or a model call that ended. */
type Sink = (message: string) => void;

const PHASE_OF = new Map<string, string>(STAGES.map((s) => [s.stage, s.phase]));
const PRODUCER_OF = new Map<string, string>(STAGES.map((s) => [s.phase, s.producer]));

/** Where a model call or a step is: `complexity gate`, `shape stage, round 2`, `plan review`. */
function where(stage: string | undefined, round: number | undefined, role: string): string {
  const phase = stage === undefined ? undefined : (PHASE_OF.get(stage) ?? stage);
  if (phase !== undefined) return `${phase} stage${round !== undefined ? `, round ${round}` : ""}`;
  if (role === "complexity_gate") return "complexity gate";
  if (role === "plan_reviewer") return "plan review";
  return role;
}

/** A finished model call, in words: `shape stage, round 2: shape.skeptic answered`. */
export function callMessage(c: ObservedCall): string {
  const what = c.error ? `${c.role} failed (${c.error.kind})` : `${c.role} answered${c.cached ? " from the cache" : ""}`;
  return `${where(c.stage, c.round, c.role)}: ${what}`;
}

/** A step the plan enters, in words; undefined for the updates a finished call already reports. */
export function stepMessage(p: PipelineProgress): string | undefined {
  switch (p.kind) {
    case "gate":
      return "complexity gate: asking the complexity gate";
    case "review":
      return "plan review: asking the plan reviewer";
    case "stage-done":
      return `${p.run.phase} stage: ${p.run.outcome} after ${p.run.rounds} round${p.run.rounds === 1 ? "" : "s"}`;
    case "stage": {
      const at = `${p.phase} stage, round ${p.progress.round}`;
      if (p.progress.step === "producing") return `${at}: ${PRODUCER_OF.get(p.phase) ?? "the producer"} writing`;
      if (p.progress.step === "verifying") return `${at}: second opinions on lone HIGHs`;
      // The first voting update (every critic still voting) starts the council; the later ones are the calls that ended.
      if (p.progress.step === "voting" && Object.values(p.progress.critics ?? {}).every((s) => s === "voting")) {
        const n = Object.keys(p.progress.critics ?? {}).length;
        return `${at}: ${n} critic${n === 1 ? "" : "s"} reviewing`;
      }
      return undefined;
    }
  }
}

/**
 * `plan_issue`'s progress (docs/mcp.md): a message at each step the plan enters and one per model
 * call as it ends — each naming the stage and round — so a client whose timeout resets on progress
 * waits at most one model call between two. The plan reviewer's call is the last: its answer is the
 * result, which follows at once — a notification right before it would reach the SDK's client after
 * the result (it handles notifications a microtask late) and be reported as for an unknown request.
 * `work` runs in the context that routes its model calls here; `onProgress` is the pipeline's hook.
 */
export function planProgress(send: Sink): {
  onProgress: (p: PipelineProgress) => void;
  run<T>(work: () => Promise<T>): Promise<T>;
} {
  let reviewing = false;
  return {
    onProgress: (p) => {
      if (p.kind === "review") reviewing = true;
      const m = stepMessage(p);
      if (m !== undefined) send(m);
    },
    run: (work) =>
      inScope(
        {
          call: (c) => {
            if (!reviewing) send(callMessage(c));
          },
        },
        work,
      ),
  };
}
