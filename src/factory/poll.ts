import type { Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import type { FactoryLine } from "./lines.js";
import type { WorkQueue } from "./queue.js";
import { attemptsOf, cycleToImplement, cycleToPlan, readiness, roundKey, type Round } from "./rounds.js";
import { failuresOf, implementFailuresOf } from "./run-job.js";
import type { FactorySettings } from "./settings.js";

/** What one poll found. */
export interface PollResult {
  /** Rounds due now (queued by this poll, or already queued or running). */
  due: Round[];
  /** Rounds this poll queued. */
  queued: Round[];
  /** Rounds not retried any more: their attempts are used up. */
  gaveUp: Round[];
}

export interface PollDeps {
  store: Store;
  tracker: Tracker;
  queue: WorkQueue;
  settings: Pick<FactorySettings, "maxAttempts" | "limits"> & Partial<Pick<FactorySettings, "implement">>;
  line: (l: FactoryLine) => void;
  /** Rounds already reported as given up (each is reported once per process). */
  reported: Set<string>;
  now?: () => number;
}

/**
 * One poll of the tracker (docs/factory.md): every open issue with something to plan (labelled
 * `dissent-find`, or a cycle left unfinished) whose backoff has passed is queued, at most once.
 */
export async function poll(deps: PollDeps): Promise<PollResult> {
  const now = deps.now ?? Date.now;
  const [issues, plans, planFailures, implementFailures] = await Promise.all([
    deps.tracker.list(),
    deps.store.plans(),
    failuresOf(deps.store),
    deps.settings.implement ? implementFailuresOf(deps.store) : Promise.resolve([]),
  ]);
  const rows = new Map(plans.map((p) => [p.issue_id, p]));
  const due: Round[] = [];
  const gaveUp: Round[] = [];
  for (const issue of issues) {
    // An issue with something to plan is planned; one with a ready plan is implemented, when the factory does that (docs/implement.md).
    const planCycle = cycleToPlan(issue.labels, rows.get(issue.id));
    const implementCycle = planCycle === undefined && deps.settings.implement ? cycleToImplement(issue.labels, rows.get(issue.id)) : undefined;
    const cycle = planCycle ?? implementCycle;
    if (cycle === undefined) continue;
    const round: Round = planCycle !== undefined ? { issueId: issue.id, cycle } : { issueId: issue.id, cycle, kind: "implement" };
    const failures = round.kind === "implement" ? implementFailures : planFailures;
    const ready = readiness(
      attemptsOf(
        failures.filter((f) => f.issue_id === issue.id),
        cycle,
        { fromCycle: rows.get(issue.id)?.cycle ?? 0, limits: deps.settings.limits },
      ),
      deps.settings.maxAttempts,
      now(),
    );
    if (ready.ready) due.push(round);
    else if (ready.why === "ceiling") {
      gaveUp.push(round);
      if (!deps.reported.has(roundKey(round))) {
        deps.reported.add(roundKey(round));
        deps.line({ event: "ceiling", issue: issue.id, cycle, setting: ready.setting, error: ready.lastError ?? `${ready.setting} reached` });
      }
    } else if (ready.why === "gave_up") {
      gaveUp.push(round);
      if (!deps.reported.has(roundKey(round))) {
        deps.reported.add(roundKey(round));
        deps.line({ event: "gave_up", issue: issue.id, cycle, attempts: ready.failed, error: ready.lastError });
      }
    }
  }
  return { due, queued: await deps.queue.enqueue(due), gaveUp };
}
