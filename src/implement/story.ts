import type { Concern } from "../contracts/concern.js";
import type { AttemptOutcome, DissentEvent } from "../contracts/events.js";
import { REVIEW_STAGE } from "./review-stage.js";

/** A concern that blocked one attempt, and what became of it. */
export interface Blocker {
  id: string;
  severity: Concern["severity"];
  raised_by: string;
  concern: string;
  /** The later attempt whose review no longer raised it; null while it still blocks (or no attempt came after). */
  fixed_in: number | null;
}

/** One attempt of the life as the pull request tells it. */
export interface AttemptStory {
  attempt: number;
  outcome: AttemptOutcome;
  test_exit_code: number | null;
  blocked: Blocker[];
}

/**
 * Every attempt over the life with what blocked it and the attempt that fixed each blocker,
 * from the event log (docs/implement.md "The pull request"). A round's ConcernBlocked events are
 * committed when its run's review ends, after the run's attempts: round r of a run is the run's
 * first attempt plus r − 1 (attempts are numbered over the life; an old store's per-run
 * numbers read the same way).
 */
export function attemptStory(events: readonly DissentEvent[]): AttemptStory[] {
  const first = new Map<number, number>();
  const attempts = new Map<number, AttemptStory>();
  let run = 0;
  const blocked = new Map<number, Map<string, Concern>>();
  const attemptOf = new Map<string, number>(); // "run/attempt-of-run" → the life's attempt number
  for (const e of events) {
    if (e.type === "ImplementAttemptStarted" || e.type === "ImplementAttempt") {
      run = e.run;
      first.set(run, Math.min(first.get(run) ?? e.attempt, e.attempt));
      if (e.type === "ImplementAttempt") {
        // An old store numbered attempts per run: two runs' "attempt 1" are told apart by run.
        const key = `${e.run}/${e.attempt}`;
        const n = attemptOf.get(key) ?? Math.max(e.attempt, ...[...attempts.keys()].map((k) => k + 1));
        attemptOf.set(key, n);
        attempts.set(n, { attempt: n, outcome: e.outcome, test_exit_code: e.test?.exit_code ?? null, blocked: [] });
      }
    } else if (e.type === "ConcernBlocked" && e.stage === REVIEW_STAGE.stage && run > 0) {
      const ofRun = (first.get(run) ?? 1) - 1 + e.round;
      const n = attemptOf.get(`${run}/${ofRun}`);
      if (n === undefined) continue;
      const list = blocked.get(n) ?? new Map<string, Concern>();
      list.set(e.concern.id, e.concern);
      blocked.set(n, list);
    }
  }
  const order = [...attempts.keys()].sort((a, b) => a - b);
  return order.map((n, i) => {
    const story = attempts.get(n) as AttemptStory;
    const next = order[i + 1];
    const nextBlocked = next === undefined ? undefined : (blocked.get(next) ?? new Map<string, Concern>());
    story.blocked = [...(blocked.get(n)?.values() ?? [])].map((c) => ({
      id: c.id,
      severity: c.severity,
      raised_by: c.raised_by,
      concern: c.concern,
      fixed_in: next !== undefined && nextBlocked && !nextBlocked.has(c.id) ? next : null,
    }));
    return story;
  });
}
