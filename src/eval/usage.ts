import type { CallRecord } from "../contracts/audit.js";
import { sumUsd } from "../models/pricing.js";
import type { UsageJson } from "./report.js";

/** Calls, tokens and money of a list of call records, and the wall time they took. */
export function usageOf(calls: readonly CallRecord[], modelCosts: readonly (number | null)[], wallMs: number): UsageJson {
  let input = 0;
  let output = 0;
  let cached = 0;
  let failed = 0;
  for (const c of calls) {
    input += c.input_tokens;
    output += c.output_tokens;
    if (c.cached) cached++;
    if (c.error) failed++;
  }
  return {
    calls: calls.length,
    network_calls: calls.length - cached,
    cached_calls: cached,
    failed_calls: failed,
    input_tokens: input,
    output_tokens: output,
    cost_usd: sumUsd(calls.map((c) => c.cost_usd)),
    model_cost_usd: sumUsd(modelCosts),
    wall_ms: Math.round(wallMs),
  };
}
