import type { Prices } from "../contracts/config.js";

/** Where a model's price comes from: the provider's `prices:`, else the maintained table (@pydantic/genai-prices). */
export interface PriceSpec {
  override?: Prices;
  /** The table's provider id (`openai`, `anthropic`) for a provider type that has one. */
  providerId?: string;
  /** An OpenAI-compatible endpoint: the table knows hosted ones (OpenRouter, Groq, Together …) by URL. */
  apiUrl?: string;
  model: string;
}

type Table = typeof import("@pydantic/genai-prices");
let table: Promise<Table> | undefined;

/** A loopback or private address serves a local model: no table prices it (set `prices:` to count it, e.g. 0). */
function isLocal(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return /^(localhost|127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|::1$|0\.0\.0\.0$)/.test(host) || host.endsWith(".local");
  } catch {
    return true;
  }
}

/** Of a call's input tokens, those the provider's prompt cache served (`read`) or stored (`write`): each has its own price. */
export interface CacheTokens {
  read: number;
  write: number;
}

/**
 * The USD price of a call's tokens, or null when the model's price is unknown (docs/serve.md: never 0
 * for unknown). `inputTokens` counts every input token; those of `cache` are priced at the cached rates.
 */
export async function costUsd(spec: PriceSpec, inputTokens: number, outputTokens: number, cache?: CacheTokens): Promise<number | null> {
  const read = Math.min(cache?.read ?? 0, inputTokens);
  const write = Math.min(cache?.write ?? 0, inputTokens - read);
  const o = spec.override;
  if (o) {
    const fresh = inputTokens - read - write;
    return (
      (fresh * o.input_per_mtok +
        read * (o.cached_input_per_mtok ?? o.input_per_mtok) +
        write * (o.cache_write_per_mtok ?? o.input_per_mtok) +
        outputTokens * o.output_per_mtok) /
      1e6
    );
  }
  if (!spec.providerId && (!spec.apiUrl || isLocal(spec.apiUrl))) return null;
  table ??= import("@pydantic/genai-prices");
  const { calcPrice } = await table;
  const options = spec.providerId ? { providerId: spec.providerId } : { providerApiUrl: spec.apiUrl };
  const usage = {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    ...(read ? { cache_read_tokens: read } : {}),
    ...(write ? { cache_write_tokens: write } : {}),
  };
  const result = calcPrice(usage, spec.model, options);
  return result ? result.total_price : null;
}

/** Rounds a dollar amount for display and records (micro-dollars). */
export const roundUsd = (usd: number) => Math.round(usd * 1e6) / 1e6;

/** Sums dollars that may be unknown: null as soon as one is (docs/serve.md: unknown is never 0). */
export function sumUsd(values: readonly (number | null | undefined)[]): number | null {
  let total = 0;
  for (const v of values) {
    if (v === null || v === undefined) return null;
    total += v;
  }
  return roundUsd(total);
}
