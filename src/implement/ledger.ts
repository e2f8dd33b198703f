import type { EventOf } from "../contracts/events.js";
import type { Store } from "../store/port.js";

/** An ImplementAttempt event as recorded. */
export type AttemptEvent = EventOf<"ImplementAttempt">;

/** What an issue's events say about its implement phase: runs, attempts, and what they spent. */
export interface ImplementLedger {
  /** The run to work in: the unfinished one (resumed at its attempt), or the next. */
  run: number;
  /** True when `run` was started before and not finished (a kill, a crash). */
  resuming: boolean;
  /** Attempts of `run` already recorded, by number. */
  recorded: Map<number, AttemptEvent>;
  /**
   * The number of the run's first attempt less one: attempts are numbered over the issue's life (the
   * store's count), so `DISSENT_ATTEMPT`, the task file and the events of a second run go on from the
   * first's — and a resumed run (a kill, even -9) numbers its attempts as it did before.
   */
  attemptsBefore: number;
  /** Attempts over the issue's whole life, and the agent's wall time over them (the ceilings, docs/implement.md). */
  attemptsEver: number;
  agentMsEver: number;
  /** The last pull request (or recorded review) of the issue, if any. */
  lastPr: EventOf<"PullRequestOpened"> | undefined;
}

/**
 * Reads the implement phase from the event log (everything that happens is an event): a run is
 * finished once its review went out (PullRequestOpened) or it failed for good (a final ImplementFailed);
 * otherwise the next `issue implement` resumes it at the attempt it was in.
 */
export async function readLedger(store: Store, issueId: string): Promise<ImplementLedger> {
  const events = await store.events({ issueId, types: ["ImplementAttemptStarted", "ImplementAttempt", "PullRequestOpened", "ImplementFailed"] });
  let last = 0;
  const finished = new Set<number>();
  let attemptsEver = 0;
  let agentMsEver = 0;
  let lastPr: EventOf<"PullRequestOpened"> | undefined;
  for (const e of events) {
    if (e.type === "ImplementAttemptStarted") last = Math.max(last, e.run);
    else if (e.type === "ImplementAttempt") {
      last = Math.max(last, e.run);
      attemptsEver++;
      agentMsEver += e.agent.duration_ms;
    } else if (e.type === "PullRequestOpened") {
      finished.add(e.run);
      lastPr = e;
    } else if (e.type === "ImplementFailed" && e.final) finished.add(e.run);
  }
  const resuming = last > 0 && !finished.has(last);
  const run = resuming ? last : last + 1;
  const recorded = new Map<number, AttemptEvent>();
  for (const e of events) if (e.type === "ImplementAttempt" && e.run === run) recorded.set(e.attempt, e);
  // Earlier runs' attempts: counted, and never below the highest number one of them started (a run that died mid-attempt).
  let before = 0;
  let highest = 0;
  const own: number[] = [];
  for (const e of events) {
    if (e.type !== "ImplementAttemptStarted" && e.type !== "ImplementAttempt") continue;
    if (e.run === run) own.push(e.attempt);
    else {
      if (e.type === "ImplementAttempt") before++;
      highest = Math.max(highest, e.attempt);
    }
  }
  // A run resumed from a store that numbered attempts per run (before issue 33) goes on numbering them so.
  const attemptsBefore = own.some((n) => n <= Math.max(before, highest)) ? 0 : Math.max(before, highest);
  return { run, resuming, recorded, attemptsBefore, attemptsEver, agentMsEver, lastPr };
}
