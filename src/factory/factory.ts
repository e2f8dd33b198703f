import pLimit from "p-limit";
import { messageOf } from "../errors.js";
import type { Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import type { FactoryLine } from "./lines.js";
import { carryMerges } from "./merges.js";
import { poll } from "./poll.js";
import type { WorkQueue } from "./queue.js";
import { runJob, type JobOutcome, type Planner } from "./run-job.js";
import type { FactorySettings } from "./settings.js";
import { verdictOf } from "./verdict.js";

/** How long a stopping factory waits for its running rounds to clear their labels and save their state (docs/factory.md: out within 10 s). */
export const SHUTDOWN_GRACE_MS = 7_000;

/** What the factory loop needs: the wiring, the queue, where its lines go, and when to stop. */
export interface FactoryDeps {
  planner: Planner;
  store: Store;
  tracker: Tracker;
  queue: WorkQueue;
  settings: FactorySettings;
  line: (l: FactoryLine) => void;
  warn: (message: string) => void;
  /** Aborted on SIGINT/SIGTERM: no new round starts, running ones are interrupted (through the planner's own signal). */
  signal: AbortSignal;
  /** Interrupts the running rounds when the factory stops of its own accord (an auth or configuration error). */
  interrupt: (reason: unknown) => void;
  /** Aborted, with the error, when the queue's database went away: the factory stops as on any fatal error. */
  lost?: AbortSignal;
  /** Loads what a round needs; started with the first poll, awaited before the first round is taken (src/factory/warm.ts). */
  warm?: () => Promise<void>;
  /** Handles new comment commands, once per poll (the GitHub tracker: docs/github-action.md). */
  commands?: () => Promise<void>;
  now?: () => number;
}

/** How a factory run ended. */
export interface FactoryResult {
  planned: number;
  /** Issues implemented (their review went out). */
  implemented: number;
  failed: number;
  /** Rounds found with their attempts used up (`--once` counts them as failed). */
  gaveUp: number;
  /** The error that stopped the factory (auth, configuration, an unusable store), if one did. */
  fatal?: unknown;
  /** The rounds still running when the grace period ended. */
  abandoned: number;
}

/**
 * `dissent factory` (docs/factory.md): polls the tracker every `poll_interval_s`, queues every issue
 * with something to plan, and runs at most `concurrency` rounds at once (p-limit; each provider's
 * `max_concurrency` holds across them in the router). A failed round is recorded and retried later;
 * an auth or configuration error stops the factory; SIGINT/SIGTERM interrupts the running rounds
 * as Ctrl-C interrupts `issue plan` and waits for them to clear up. `once`: one poll, then run
 * what it found and stop.
 */
export async function runFactory(deps: FactoryDeps): Promise<FactoryResult> {
  const { settings, queue, signal } = deps;
  const now = deps.now ?? Date.now;
  const limit = pLimit(settings.concurrency);
  const running = new Set<Promise<void>>();
  const reported = new Set<string>();
  const result: FactoryResult = { planned: 0, implemented: 0, failed: 0, gaveUp: 0, abandoned: 0 };
  let wake: () => void = () => undefined;

  const stopping = () => signal.aborted || result.fatal !== undefined;
  const stop = (e: unknown) => {
    if (result.fatal !== undefined) return;
    result.fatal = e;
    deps.interrupt(e);
    wake();
  };
  const onLost = () => stop(deps.lost?.reason);
  if (deps.lost?.aborted) onLost();
  deps.lost?.addEventListener("abort", onLost, { once: true });
  const tally = (o: JobOutcome) => {
    if (o.kind === "planned") result.planned++;
    else if (o.kind === "implemented") result.implemented++;
    else if (o.kind === "failed") result.failed++;
    else if (o.kind === "fatal") stop(o.error);
  };
  /** Sleeps until `ms` pass, a round ends, or the factory is told to stop. */
  const nap = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        wake = () => undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      wake = done;
      signal.addEventListener("abort", done, { once: true });
    });
  /** Takes due rounds while this process has room for them. */
  const dispatch = async () => {
    while (!stopping() && limit.activeCount + limit.pendingCount < settings.concurrency) {
      const job = await queue.take();
      if (!job) return;
      // An implement round takes one of implement.max_concurrency agent slots in the store (every worker's bound) or waits its turn in the queue.
      const run: Promise<void> = limit(() => runJob(job, { ...deps, now, reported }))
        .then(tally, (e: unknown) => stop(e))
        .finally(() => {
          running.delete(run);
          wake();
        });
      running.add(run);
    }
  };
  /** A failure of the loop itself (the tracker, the queue): fatal ones stop the factory, others are warnings. */
  const trouble = (e: unknown, what: string) => {
    if (verdictOf(e) === "interrupted") return;
    if (verdictOf(e) === "fatal" || settings.once) stop(e);
    else deps.warn(`${what} failed: ${messageOf(e)}; trying again`);
  };

  let nextPoll = now();
  let polled = false;
  // Alongside the first poll: the rounds it finds start warm, and a poll that finds nothing waits on little more than itself.
  const warming = deps.warm?.();
  while (!stopping()) {
    if (!polled || (!settings.once && now() >= nextPoll)) {
      try {
        const found = await poll({ ...deps, reported, now });
        result.gaveUp += settings.once ? found.gaveUp.length : 0;
        await carryMerges(deps);
        await deps.commands?.();
      } catch (e) {
        trouble(e, "polling the tracker");
      }
      polled = true;
      nextPoll = now() + settings.pollIntervalMs;
    }
    try {
      await warming;
      await dispatch();
    } catch (e) {
      trouble(e, "taking a round from the queue");
    }
    if (settings.once && running.size === 0) break; // dispatch found nothing more that is due
    const dueIn = queue.nextDueInMs();
    const untilPoll = settings.once ? Number.POSITIVE_INFINITY : nextPoll - now();
    await nap(Math.min(untilPoll, dueIn ?? settings.queuePollMs, settings.queuePollMs));
  }

  // Stopping: running rounds were interrupted (their calls abort); let them clear their labels and save.
  if (running.size) {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_GRACE_MS)));
    await Promise.race([Promise.allSettled([...running]), grace]);
    clearTimeout(timer);
    result.abandoned = running.size;
  }
  deps.lost?.removeEventListener("abort", onLost);
  return result;
}
