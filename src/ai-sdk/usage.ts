import type { LanguageModelV3Usage } from "@ai-sdk/provider";
import type { CallRecord } from "../contracts/audit.js";

const plus = (a: number | undefined, b: number | undefined) => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0));

/** The sum of two calls' usage, field by field (a field neither call reports stays unreported); `raw` is per call and dropped. */
export function addUsage(a: LanguageModelV3Usage, b: LanguageModelV3Usage): LanguageModelV3Usage {
  return {
    inputTokens: {
      total: plus(a.inputTokens.total, b.inputTokens.total),
      noCache: plus(a.inputTokens.noCache, b.inputTokens.noCache),
      cacheRead: plus(a.inputTokens.cacheRead, b.inputTokens.cacheRead),
      cacheWrite: plus(a.inputTokens.cacheWrite, b.inputTokens.cacheWrite),
    },
    outputTokens: {
      total: plus(a.outputTokens.total, b.outputTokens.total),
      text: plus(a.outputTokens.text, b.outputTokens.text),
      reasoning: plus(a.outputTokens.reasoning, b.outputTokens.reasoning),
    },
  };
}

/** A call record's tokens as usage; a reply served from the cache spent none. */
export function usageOfRecord(r: CallRecord): LanguageModelV3Usage {
  const input = r.cached ? 0 : r.input_tokens;
  const output = r.cached ? 0 : r.output_tokens;
  const read = r.cached ? undefined : r.cached_input_tokens;
  const write = r.cached ? undefined : r.cache_write_input_tokens;
  return {
    inputTokens: { total: input, noCache: undefined, cacheRead: read, cacheWrite: write },
    outputTokens: { total: output, text: undefined, reasoning: undefined },
  };
}

/** The call record of one of the wrapped model's own calls (the draft, the revision). */
export function wrappedRecord(
  role: "executor" | "revision",
  model: { provider: string; modelId: string },
  started: number,
  usage: LanguageModelV3Usage | undefined,
): CallRecord {
  return {
    role,
    provider: model.provider,
    model: model.modelId,
    route: "primary",
    cached: false,
    latency_ms: Math.round((performance.now() - started) * 100) / 100,
    input_tokens: usage?.inputTokens.total ?? 0,
    output_tokens: usage?.outputTokens.total ?? 0,
    cached_input_tokens: usage?.inputTokens.cacheRead ?? 0,
    ...(usage?.inputTokens.cacheWrite ? { cache_write_input_tokens: usage.inputTokens.cacheWrite } : {}),
  };
}
