import type { ModelCallEvent } from "../contracts/events.js";
import { roundUsd } from "../models/pricing.js";
import type { CallRow, Estimator, Usage } from "./types.js";

/** Usage of no calls. */
export function emptyUsage(): Usage {
  return {
    calls: 0,
    cached_calls: 0,
    failed_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cached_input_tokens: 0,
    cache_write_input_tokens: 0,
    known_usd: 0,
    unpriced_calls: 0,
    cost_usd: 0,
    reply_cache_input_tokens: 0,
    reply_cache_output_tokens: 0,
    estimated_calls: 0,
    estimated_usd: 0,
    estimate_from: [],
  };
}

/** The most distinct prices a usage names for its estimate (the rest are in the calls). */
const MAX_ESTIMATE_FROM = 3;

/**
 * Adds one call to a usage (in place). Network calls count; a cache hit is counted apart and is
 * free. A network call with no known price makes `cost_usd` null (docs/serve.md: never 0 for unknown).
 */
export function addCall(
  u: Usage,
  c: Pick<CallRow, "cached" | "input_tokens" | "output_tokens" | "cost_usd" | "error"> &
    Partial<Pick<CallRow, "cached_input_tokens" | "cache_write_input_tokens" | "estimate">>,
): Usage {
  if (c.error) u.failed_calls++;
  if (c.cached) {
    // Free now; its tokens are those of the call that first made the reply (a cached run still shows what it read and wrote).
    u.cached_calls++;
    u.reply_cache_input_tokens += c.input_tokens;
    u.reply_cache_output_tokens += c.output_tokens;
    return u;
  }
  u.calls++;
  u.input_tokens += c.input_tokens;
  u.output_tokens += c.output_tokens;
  u.cached_input_tokens += c.cached_input_tokens ?? 0;
  u.cache_write_input_tokens += c.cache_write_input_tokens ?? 0;
  if (c.cost_usd === null) {
    u.unpriced_calls++;
    if (c.estimate) {
      u.estimated_calls++;
      u.estimated_usd = roundUsd(u.estimated_usd + c.estimate.usd);
      if (!u.estimate_from.includes(c.estimate.from) && u.estimate_from.length < MAX_ESTIMATE_FROM) u.estimate_from.push(c.estimate.from);
    }
  } else u.known_usd = roundUsd(u.known_usd + c.cost_usd);
  u.cost_usd = u.unpriced_calls > 0 ? null : u.known_usd;
  return u;
}

/** Two usages added: the usage of both sets of calls (dollars null once either had an unpriced call). */
export function sumUsage(a: Usage, b: Usage): Usage {
  const unpriced = a.unpriced_calls + b.unpriced_calls;
  const known = roundUsd(a.known_usd + b.known_usd);
  return {
    calls: a.calls + b.calls,
    cached_calls: a.cached_calls + b.cached_calls,
    failed_calls: a.failed_calls + b.failed_calls,
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cached_input_tokens: a.cached_input_tokens + b.cached_input_tokens,
    cache_write_input_tokens: a.cache_write_input_tokens + b.cache_write_input_tokens,
    known_usd: known,
    unpriced_calls: unpriced,
    cost_usd: unpriced > 0 ? null : known,
    reply_cache_input_tokens: a.reply_cache_input_tokens + b.reply_cache_input_tokens,
    reply_cache_output_tokens: a.reply_cache_output_tokens + b.reply_cache_output_tokens,
    estimated_calls: a.estimated_calls + b.estimated_calls,
    estimated_usd: roundUsd(a.estimated_usd + b.estimated_usd),
    estimate_from: [...new Set([...a.estimate_from, ...b.estimate_from])].slice(0, MAX_ESTIMATE_FROM),
  };
}

/** The usage of a list of calls. */
export function usageOf(calls: readonly CallRow[]): Usage {
  return calls.reduce(addCall, emptyUsage());
}

/** A copy of a usage (its list of prices is its own). */
export const copyUsage = (u: Usage): Usage => ({ ...u, estimate_from: [...u.estimate_from] });

/**
 * A ModelCall event as a call row (cost `undefined` in old events is read as unknown); `estimate`
 * prices a network call of unknown price from its tokens.
 */
export function callRow(e: ModelCallEvent & { seq: number }, estimate?: Estimator): CallRow {
  const unpriced = (e.cost_usd ?? null) === null && !e.cached;
  const guess =
    unpriced && estimate
      ? estimate({
          provider: e.provider,
          model: e.model,
          input_tokens: e.input_tokens,
          output_tokens: e.output_tokens,
          cached_input_tokens: e.cached_input_tokens ?? 0,
        })
      : null;
  return {
    seq: e.seq,
    at: e.at,
    issue_id: e.issue_id,
    ...(e.run_id ? { run_id: e.run_id } : {}),
    role: e.role,
    provider: e.provider,
    model: e.model,
    route: e.route,
    cached: e.cached,
    latency_ms: e.latency_ms,
    input_tokens: e.input_tokens,
    output_tokens: e.output_tokens,
    // Events written before prompt caching was counted have neither: none were reported.
    cached_input_tokens: e.cached_input_tokens ?? 0,
    cache_write_input_tokens: e.cache_write_input_tokens ?? 0,
    cost_usd: e.cost_usd ?? null,
    ...(guess ? { estimate: guess } : {}),
    ...(e.error ? { error: e.error } : {}),
    ...(e.stage ? { stage: e.stage } : {}),
    ...(e.round !== undefined ? { round: e.round } : {}),
    ...(e.wiki_entries?.length ? { wiki_entries: e.wiki_entries } : {}),
  };
}
