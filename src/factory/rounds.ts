import type { EventOf } from "../contracts/events.js";
import type { PlanRow } from "../store/port.js";

/** An issue's planning round as the factory queues it: one job per issue and cycle (docs/factory.md). */
export interface Round {
  issueId: string;
  /** The planning cycle this round runs: the one under way, or the next (an implement round: the ready plan's). */
  cycle: number;
  /** What the round does: plan the issue, or implement its ready plan (docs/implement.md); default plan. */
  kind?: "plan" | "implement";
}

/** The singleton key of a round's job: each poll enqueues an issue (and cycle, and kind) at most once. */
export const roundKey = (r: Round) => `${r.issueId}#${r.cycle}${r.kind === "implement" ? "#implement" : ""}`;

/**
 * The cycle whose ready plan the factory would implement now (`factory.implement`, docs/implement.md),
 * or undefined: an issue labelled `dissent-ready` whose plan is ready, or one left
 * `dissent-implementing` (its worker died: the run resumes at its attempt).
 */
export function cycleToImplement(labels: readonly string[], row: PlanRow | undefined): number | undefined {
  if (row?.status !== "ready" || labels.includes("dissent-fixed")) return undefined;
  return labels.includes("dissent-ready") || labels.includes("dissent-implementing") ? row.cycle : undefined;
}

/**
 * The cycle the factory would plan for an issue now, or undefined when it has nothing to plan:
 * an issue labelled `dissent-find` is planned (its cycle resumed if one is under way, else the
 * next); one still labelled `dissent-plan` whose cycle is under way (interrupted, or its worker
 * died) is resumed, and so is one whose outcome label moved but whose cycle did not commit (stopped
 * between the two); one whose cycle ended without a plan (`budget`) is tried again in a new cycle.
 * Anything else (planned, waiting for a re-plan by hand, merged) is left alone.
 */
export function cycleToPlan(labels: readonly string[], row: PlanRow | undefined): number | undefined {
  const status = row?.status ?? "new";
  const find = labels.includes("dissent-find");
  // A cycle still `planning` under an outcome label was stopped between the label move and its commit: it resumes.
  const unfinished =
    (labels.includes("dissent-plan") && (status === "planning" || status === "budget")) ||
    (status === "planning" && (labels.includes("dissent-ready") || labels.includes("dissent-hitl")));
  if (!find && !unfinished) return undefined;
  if (labels.includes("dissent-fixed")) return undefined;
  if (!row) return 1;
  return status === "planning" ? row.cycle : row.cycle + 1;
}

/** What the factory knows of a round's earlier attempts: the IssuePlanFailed events of that cycle. */
export interface Attempts {
  failed: number;
  /** A ceiling of the issue's life that holds it (see `heldBy`): no attempt helps until the setting is raised. */
  ceiling: string | null;
  /** When the last failure asked to be tried again (null: it was the last allowed). */
  retryAt: string | null;
  lastError: string | null;
}

/** The ceilings of an issue's life as configured now, by setting (null: none). */
export type Limits = Readonly<Record<string, number | null>>;

/**
 * The ceiling failure that still holds an issue: one recorded for its current cycle or the next
 * (the cycle that reached it, or the one it refused to start), whose setting has not been raised
 * since. Raising it lets the factory try again; a later cycle that planned moves past it.
 */
export function heldBy<F extends RoundFailure>(failures: readonly F[], fromCycle: number, limits: Limits): F | undefined {
  return failures.findLast((f) => {
    if (!f.ceiling || f.cycle < fromCycle) return false;
    const now = limits[f.ceiling.setting];
    return now === undefined || now === null ? false : now <= f.ceiling.max;
  });
}

/** A failed round as recorded: IssuePlanFailed, or ImplementFailed for an implement round. */
export type RoundFailure = Pick<EventOf<"IssuePlanFailed">, "cycle" | "error" | "retry_at" | "ceiling">;

/** Counts a round's failed attempts from the issue's IssuePlanFailed events (the store's, so every worker agrees). */
export function attemptsOf(failures: readonly RoundFailure[], cycle: number, ceilings?: { fromCycle: number; limits: Limits }): Attempts {
  const mine = failures.filter((f) => f.cycle === cycle);
  const last = mine.at(-1);
  const held = ceilings ? heldBy(failures, ceilings.fromCycle, ceilings.limits) : undefined;
  return {
    failed: mine.length,
    ceiling: held?.ceiling?.setting ?? null,
    retryAt: last?.retry_at ?? null,
    lastError: held?.error ?? last?.error ?? null,
  };
}

/** Whether a round may be attempted now. */
export type Readiness =
  | { ready: true; attempt: number }
  | { ready: false; why: "backoff"; retryAt: string }
  | { ready: false; why: "gave_up"; failed: number; lastError: string | null }
  | { ready: false; why: "ceiling"; setting: string; lastError: string | null };

export function readiness(a: Attempts, maxAttempts: number, now: number): Readiness {
  if (a.ceiling !== null) return { ready: false, why: "ceiling", setting: a.ceiling, lastError: a.lastError };
  if (a.failed >= maxAttempts) return { ready: false, why: "gave_up", failed: a.failed, lastError: a.lastError };
  if (a.failed > 0 && a.retryAt !== null && Date.parse(a.retryAt) > now) return { ready: false, why: "backoff", retryAt: a.retryAt };
  return { ready: true, attempt: a.failed + 1 };
}
