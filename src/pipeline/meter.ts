import type { Usage } from "../adversarial/retry-loop.js";
import type { CallRecord } from "../contracts/audit.js";
import { roundUsd } from "../models/pricing.js";

/**
 * Network calls, tokens and dollars of an issue's run, from the records of the one door (the call
 * context's `meter`): every network call counts, failed and interrupted ones included; a reply
 * served from dissent's own cache is free and not counted.
 */
export class Meter {
  private calls = 0;
  private input = 0;
  private output = 0;
  private cachedInput = 0;
  private cacheWrite = 0;
  private cost: number | null = 0;
  /** Adds one call's record. */
  record(r: CallRecord): void {
    if (r.cached) return;
    this.calls++;
    this.input += r.input_tokens;
    this.output += r.output_tokens;
    this.cachedInput += r.cached_input_tokens ?? 0;
    this.cacheWrite += r.cache_write_input_tokens ?? 0;
    this.cost = this.cost === null || r.cost_usd === null || r.cost_usd === undefined ? null : this.cost + r.cost_usd;
  }
  /** Usage so far. */
  now(): Usage {
    return {
      calls: this.calls,
      inputTokens: this.input,
      outputTokens: this.output,
      cachedInputTokens: this.cachedInput,
      cacheWriteTokens: this.cacheWrite,
      costUsd: this.cost,
    };
  }
  /** Usage since a mark; dollars are null when any call since had no known price. */
  since(mark: Usage): Usage {
    const n = this.now();
    return {
      calls: n.calls - mark.calls,
      inputTokens: n.inputTokens - mark.inputTokens,
      outputTokens: n.outputTokens - mark.outputTokens,
      cachedInputTokens: n.cachedInputTokens - mark.cachedInputTokens,
      cacheWriteTokens: n.cacheWriteTokens - mark.cacheWriteTokens,
      costUsd: n.costUsd === null || mark.costUsd === null ? null : roundUsd(n.costUsd - mark.costUsd),
    };
  }
}
