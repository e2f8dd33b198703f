import { BudgetExceeded } from "../errors.js";
import type { CallBudget } from "../models/types.js";

/** The per-issue ceiling on network model calls (cache hits are free; retries count as their one call). */
export interface IssueBudget extends CallBudget {
  readonly max: number;
  used(): number;
}

/** A budget of `max` calls, `alreadyUsed` of them spent; `onTake` makes each call durable (a killed run resumes with its count). */
export function callBudget(max: number, alreadyUsed = 0, onTake?: () => void): IssueBudget {
  let used = alreadyUsed;
  return {
    max,
    used: () => used,
    remaining: () => Math.max(0, max - used),
    take() {
      if (used >= max) throw new BudgetExceeded(`call budget of ${max} model calls for this issue is spent (budget.max_calls_per_issue)`);
      used++;
      onTake?.();
    },
  };
}
