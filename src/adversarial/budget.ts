import { BudgetExceeded } from "../errors.js";
import type { BudgetTicket, CallBudget } from "../models/types.js";

/**
 * The per-issue ceiling on network model calls (cache hits are free; retries count as their one
 * call). `used` is the store's count — every call it counts has its ModelCall event — and calls in
 * flight are reserved on top of it, so parallel critics can never cross the ceiling together.
 */
export interface IssueBudget extends CallBudget {
  readonly max: number;
  /** Calls recorded (each with its ModelCall event) plus calls in flight. */
  used(): number;
  /** Dollars spent so far, when a USD ceiling is set. */
  spentUsd(): number;
  /** Adds a recorded call's cost (the store's counter moves with the event; this mirrors it in the process). */
  addCost(usd: number | null): void;
}

/** A budget of `max` calls of which `recorded` are spent, and optionally `maxUsd` dollars of which `spentUsd` are spent. */
export function callBudget(max: number, recorded = 0, usd?: { max: number; spent: number }): IssueBudget {
  let done = recorded;
  let inFlight = 0;
  let spent = usd?.spent ?? 0;
  let reservedUsd = 0;
  return {
    max,
    tracksUsd: usd !== undefined,
    used: () => done + inFlight,
    spentUsd: () => spent,
    addCost(c) {
      if (c !== null) spent += c;
    },
    remaining: () => Math.max(0, max - done - inFlight),
    take(estimatedUsd = 0): BudgetTicket {
      if (done + inFlight >= max)
        throw new BudgetExceeded(`the call budget of ${max} model calls for this issue is spent (budget.max_calls_per_issue)`, { max, used: done + inFlight });
      if (usd && spent + reservedUsd + estimatedUsd > usd.max) {
        throw new BudgetExceeded(`the budget of $${usd.max} for this issue would be crossed (budget.max_usd_per_issue; $${spent.toFixed(4)} spent)`, {
          max: usd.max,
          used: spent,
          unit: "usd",
        });
      }
      inFlight++;
      reservedUsd += estimatedUsd;
      let settled = false;
      return (sent) => {
        if (settled) return;
        settled = true;
        inFlight--;
        reservedUsd -= estimatedUsd;
        if (sent) done++;
      };
    },
  };
}
