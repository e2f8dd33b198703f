import type { EventOf } from "../contracts/events.js";
import type { Dissent } from "../dissent.js";
import { AgentEscaped, BudgetExceeded, DissentError, LeaseHeld, messageOf, ProviderError, StoreError } from "../errors.js";
import { sumUsd } from "../models/pricing.js";
import { holderId, holdLease, type HeldLease } from "../pipeline/lease.js";
import type { LeaseHolder, Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import { AGENT_SLOT_RETRY_MS, takeAgentSlot } from "./agent-slots.js";
import { retryDelayMs } from "./backoff.js";
import { stageLine, type FactoryLine } from "./lines.js";
import type { Job } from "./queue.js";
import { attemptsOf, cycleToImplement, cycleToPlan, readiness, roundKey, type RoundFailure } from "./rounds.js";
import { FOLLOW_UP_MARGIN_MS, type FactorySettings } from "./settings.js";
import { verdictOf } from "./verdict.js";

/** What the factory needs of the library's wiring: `issue plan`, `issue merged` and (`factory.implement`) `issue implement`, as the CLI runs them. */
export type Planner = Pick<Dissent, "planIssue" | "merge"> & Partial<Pick<Dissent, "implementIssue">>;

/** What running one round needs. */
export interface RunJobDeps {
  planner: Planner;
  store: Store;
  tracker: Tracker;
  settings: FactorySettings;
  line: (l: FactoryLine) => void;
  /** Rounds already reported as not retried (each is reported once per process). */
  reported?: Set<string>;
  now?: () => number;
}

/** How a round ended, for the factory's tally and its exit code. */
export type JobOutcome =
  | { kind: "planned"; status: "ready" | "needs_replan" | "hitl" }
  | { kind: "implemented"; status: "review" | "hitl" }
  | { kind: "failed"; gaveUp: boolean }
  /** Another worker holds the issue, or the round was out of date: nothing to do now. */
  | { kind: "skipped" }
  | { kind: "interrupted" }
  | { kind: "fatal"; error: unknown };

/** An issue's IssuePlanFailed events, oldest first. */
export async function failuresOf(store: Store, issueId?: string): Promise<EventOf<"IssuePlanFailed">[]> {
  const events = await store.events({ ...(issueId !== undefined ? { issueId } : {}), types: ["IssuePlanFailed"] });
  return events.filter((e): e is EventOf<"IssuePlanFailed"> & { seq: number } => e.type === "IssuePlanFailed");
}

/** An issue's ImplementFailed events of factory attempts (not the final ones: those end a run for a person), oldest first. */
export async function implementFailuresOf(store: Store, issueId?: string): Promise<(RoundFailure & { issue_id: string | null })[]> {
  const events = await store.events({ ...(issueId !== undefined ? { issueId } : {}), types: ["ImplementFailed"] });
  return events.filter((e): e is EventOf<"ImplementFailed"> & { seq: number } => e.type === "ImplementFailed" && !e.final);
}

/** This worker as a lease holder: a new id per round, so two rounds of one process never share a lease. */
export function workerHolder(settings: Pick<FactorySettings, "host">): LeaseHolder {
  return { id: holderId(), host: settings.host, pid: process.pid };
}

/**
 * Runs one round: takes the issue's lease (docs/issue.md: one planner at a time), checks under it
 * that the round is still due (a poll can be out of date), plans the issue as `issue plan` would,
 * and ends the job with its outcome: a failure is an IssuePlanFailed event committed with the job,
 * retried on a later poll with backoff; a lease another worker holds queues the round again for
 * when that lease has expired.
 */
export async function runJob(job: Job, deps: RunJobDeps): Promise<JobOutcome> {
  const { store, tracker, settings, line } = deps;
  const now = deps.now ?? Date.now;
  const holder = workerHolder(settings);
  const leaseOpts = { ttlMs: settings.leaseTtlMs, renewMs: settings.leaseRenewMs };
  const round = { issue: job.issueId, cycle: job.cycle };
  const implementing = job.kind === "implement";
  let started = false;
  let attempt = 1;
  /** The failure as recorded: IssuePlanFailed for a plan round, ImplementFailed for an implement round (docs/implement.md). */
  const failure = async (error: string, retryAt: string | null, ceiling?: { setting: string; max: number }) => {
    if (!implementing)
      return { type: "IssuePlanFailed" as const, issue_id: job.issueId, cycle: job.cycle, attempt, error, retry_at: retryAt, ...(ceiling ? { ceiling } : {}) };
    const { readLedger } = await import("../implement/ledger.js");
    const { run } = await readLedger(store, job.issueId);
    return {
      type: "ImplementFailed" as const,
      issue_id: job.issueId,
      run,
      cycle: job.cycle,
      attempt,
      error,
      retry_at: retryAt,
      final: false,
      ...(ceiling ? { ceiling } : {}),
    };
  };

  const settle = async (e: unknown): Promise<JobOutcome> => {
    try {
      switch (verdictOf(e)) {
        case "interrupted":
          await job.abandon();
          if (started) line({ event: "interrupted", ...round });
          return { kind: "interrupted" };
        case "fatal":
          await job.abandon();
          return { kind: "fatal", error: e };
        case "lease_held": {
          // Not a failure: whoever holds it is planning it. If that worker died, its lease expires by then.
          const again = new Date(now() + settings.leaseTtlMs + FOLLOW_UP_MARGIN_MS);
          await job.finish(undefined, again);
          const h = LeaseHeld.isInstance(e) ? e.holder : undefined;
          line({
            event: "skipped",
            ...round,
            reason: h ? `being planned by another dissent (host ${h.host}, pid ${h.pid}, since ${h.since})` : messageOf(e),
            retry_at: again.toISOString(),
          });
          return { kind: "skipped" };
        }
        case "ceiling": {
          // Past a ceiling of the issue's life: recorded once, never retried until the setting is raised.
          const error = messageOf(e).split("\n")[0] ?? "";
          const setting = BudgetExceeded.isInstance(e) ? (e.setting ?? "budget") : "budget";
          const max = BudgetExceeded.isInstance(e) ? e.max : 0;
          const record = await failure(error, null, { setting, max });
          await job.finish((tx) => tx.append([record]));
          deps.reported?.add(roundKey({ issueId: job.issueId, cycle: job.cycle }));
          line({ event: "ceiling", ...round, setting, error });
          return { kind: "failed", gaveUp: true };
        }
        case "failed": {
          const error = messageOf(e).split("\n")[0] ?? "";
          if (AgentEscaped.isInstance(e)) {
            // The run recorded its own end and moved the issue to a person: nothing to retry.
            await job.finish();
            line({ event: "failed", ...round, attempt, max_attempts: settings.maxAttempts, error, retry_at: null });
            return { kind: "failed", gaveUp: true };
          }
          const last = attempt >= settings.maxAttempts;
          const retryAt = last
            ? null
            : new Date(now() + retryDelayMs(attempt, settings.pollIntervalMs, ProviderError.isInstance(e) ? e.retryAfterMs : undefined)).toISOString();
          const record = await failure(error, retryAt);
          await job.finish((tx) => tx.append([record]));
          line({ event: "failed", ...round, attempt, max_attempts: settings.maxAttempts, error, retry_at: retryAt });
          return { kind: "failed", gaveUp: last };
        }
      }
    } catch (again) {
      // The job could not even be ended (the store went away): that stops the factory.
      await job.abandon().catch(() => undefined); // already reporting `again`
      const error = DissentError.isInstance(again)
        ? again
        : new StoreError(`the store failed while ending the round of issue ${job.issueId}: ${messageOf(again)}`);
      return { kind: "fatal", error };
    }
  };

  let lease: HeldLease;
  let slot: HeldLease | undefined;
  try {
    lease = await holdLease(store, job.issueId, holder, leaseOpts);
  } catch (e) {
    return settle(e);
  }
  try {
    // Under the lease, with fresh data: a round queued from a poll now out of date is not planned
    // again (an issue another worker just planned reads as planned here, never as new).
    const row = await store.plan(job.issueId);
    const ceilings = { fromCycle: row?.cycle ?? 0, limits: settings.limits };
    const failures = implementing ? await implementFailuresOf(store, job.issueId) : await failuresOf(store, job.issueId);
    const ready = readiness(attemptsOf(failures, job.cycle, ceilings), settings.maxAttempts, now());
    if (ready.ready) attempt = ready.attempt; // (a failure from here on is this attempt's)
    const issue = await tracker.get(job.issueId);
    const cycle = implementing ? cycleToImplement(issue.labels, row) : cycleToPlan(issue.labels, row);
    if (cycle !== job.cycle || !ready.ready) {
      await job.finish();
      return { kind: "skipped" };
    }
    if (implementing) {
      // implement.max_concurrency: agents at once across every worker of the factory (docs/implement.md).
      slot = await takeAgentSlot(store, holder, settings.implementConcurrency, leaseOpts);
      const waiting = `agent-slot:${job.issueId}`;
      if (!slot) {
        const again = new Date(now() + Math.min(settings.pollIntervalMs, AGENT_SLOT_RETRY_MS));
        await job.finish(undefined, again);
        if (!deps.reported?.has(waiting)) {
          deps.reported?.add(waiting);
          const n = settings.implementConcurrency;
          line({
            event: "skipped",
            ...round,
            reason: `waiting for a coding agent slot: implement.max_concurrency (${n}) agents are running`,
            retry_at: again.toISOString(),
          });
        }
        return { kind: "skipped" };
      }
      deps.reported?.delete(waiting);
    }
    started = true;
    line({ event: "started", ...round, attempt, worker: `${holder.host} pid ${holder.pid}`, ...(implementing ? { kind: "implement" as const } : {}) });
    const mark = await store.lastSeq();
    if (implementing) {
      if (!deps.planner.implementIssue) throw new StoreError("this factory cannot implement issues (no implementIssue in its wiring)");
      const done = await deps.planner.implementIssue(issue.id, {
        holder,
        lease: leaseOpts,
        // A slot taken over (its renewal came too late) stops this agent: the bound never holds one agent too many.
        ...(slot ? { signal: slot.lost } : {}),
        onProgress: (p) => {
          if (p.kind === "attempt-done")
            line({
              event: "attempt",
              issue: issue.id,
              cycle: job.cycle,
              attempt: p.attempt.attempt,
              outcome: p.attempt.outcome,
              test_exit_code: p.attempt.test?.exit_code ?? null,
            });
        },
      });
      const calls = (await store.events({ issueId: issue.id, after: mark, types: ["ModelCall"] })).filter((e) => e.type === "ModelCall" && !e.cached);
      line({
        event: "implemented",
        ...round,
        status: done.status,
        attempts: done.attempts.length,
        pull_request: done.pull_request.number,
        calls: calls.length,
        cost_usd: sumUsd(calls.map((c) => (c.type === "ModelCall" ? c.cost_usd : undefined))),
      });
      await job.finish();
      return { kind: "implemented", status: done.status };
    }
    const result = await deps.planner.planIssue(issue.id, {
      // The queue chose this round from its labels (dissent-find, or a cycle left unfinished): a
      // person moving a ready issue back to find asked for a new plan.
      replan: true,
      holder,
      lease: leaseOpts,
      onProgress: (p) => {
        if (p.kind === "stage-done") line(stageLine(issue.id, p.run));
      },
    });
    // This run's network calls and their dollars, from its ModelCall events (null when a price is unknown).
    const calls = (await store.events({ issueId: issue.id, after: mark, types: ["ModelCall"] })).filter((e) => e.type === "ModelCall" && !e.cached);
    const costs = calls.map((c) => (c.type === "ModelCall" ? c.cost_usd : undefined));
    line({
      event: "finished",
      ...round,
      status: result.status,
      route: result.route,
      calls: calls.length,
      cost_usd: sumUsd(costs),
    });
    await job.finish();
    return { kind: "planned", status: result.status };
  } catch (e) {
    return settle(e);
  } finally {
    // planIssue released the lease already when it ran; this releases it when it did not.
    await lease.release().catch(() => undefined); // an unreleased lease expires by itself
    await slot?.release().catch(() => undefined); // likewise a slot
  }
}
