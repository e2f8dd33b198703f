import type { Concern } from "../contracts/concern.js";
import type { DissentEvent } from "../contracts/events.js";
import { BudgetExceeded } from "../errors.js";
import { roundUsd } from "../models/pricing.js";
import { countsCall } from "../store/state.js";
import type { PlanRow, Store } from "../store/port.js";

/** What an issue has spent over its whole life: network calls, and the dollars of those with a known price. */
export interface LifetimeUsage {
  calls: number;
  usd: number;
}

/** An issue's network calls over all its cycles, from its ModelCall events (cache hits are free). */
export async function lifetimeUsage(store: Store, issueId: string): Promise<LifetimeUsage> {
  const events: DissentEvent[] = await store.events({ issueId, types: ["ModelCall"] });
  const calls = events.filter(countsCall);
  return { calls: calls.length, usd: roundUsd(calls.reduce((n, e) => n + (e.cost_usd ?? 0), 0)) };
}

/** The ceilings of an issue's life (docs/issue.md): null means none. */
export interface Ceilings {
  maxCalls: number;
  maxUsd: number | null;
  maxCycles: number | null;
}

/**
 * Refuses to plan an issue past a ceiling of its life (docs/issue.md): every network call of every
 * cycle counts against `budget.max_calls_per_issue` (and dollars against `max_usd_per_issue`); a new
 * cycle beyond `budget.max_cycles_per_issue` is not started (an interrupted cycle still resumes).
 * The error names the setting to raise.
 */
export function checkCeilings(issueId: string, row: PlanRow | undefined, spent: LifetimeUsage, c: Ceilings): void {
  const resuming = row?.status === "planning";
  const cycles = row?.cycle ?? 0;
  if (!resuming && c.maxCycles !== null && cycles >= c.maxCycles) {
    throw new BudgetExceeded(
      `issue ${issueId} has had ${cycles} planning cycle${cycles === 1 ? "" : "s"}, the most budget.max_cycles_per_issue (${c.maxCycles}) allows; raise it to plan the issue again`,
      { max: c.maxCycles, used: cycles, unit: "cycles", setting: "budget.max_cycles_per_issue" },
    );
  }
  if (spent.calls >= c.maxCalls) {
    throw new BudgetExceeded(
      `issue ${issueId} has used ${spent.calls} network calls over its planning cycles, the most budget.max_calls_per_issue (${c.maxCalls}) allows; raise it to plan the issue again`,
      { max: c.maxCalls, used: spent.calls, unit: "calls", setting: "budget.max_calls_per_issue" },
    );
  }
  if (c.maxUsd !== null && spent.usd >= c.maxUsd) {
    throw new BudgetExceeded(
      `issue ${issueId} has spent $${spent.usd.toFixed(4)} over its planning cycles, the most budget.max_usd_per_issue ($${c.maxUsd}) allows; raise it to plan the issue again`,
      { max: c.maxUsd, used: spent.usd, unit: "usd", setting: "budget.max_usd_per_issue" },
    );
  }
}

/** The gaps an issue shipped with (its ShippedWithKnownGap events), one line each, for the planner of a replan; undefined when none. */
export function shippedGapsText(events: readonly DissentEvent[]): string | undefined {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const e of events) {
    if (e.type !== "ShippedWithKnownGap") continue;
    for (const c of e.concerns as Concern[]) {
      if (seen.has(c.fingerprint)) continue;
      seen.add(c.fingerprint);
      lines.push(`- [${c.id}] ${c.severity} (shipped in PR #${e.pr}): ${c.concern}${c.evidence ? ` — about: "${c.evidence}"` : ""}`);
    }
  }
  return lines.length ? lines.join("\n") : undefined;
}
