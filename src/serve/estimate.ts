import { UsageError } from "../errors.js";
import type { Estimator, PriceEstimate } from "../read-models/types.js";

const dollars = (v: number) => `$${Number(v.toPrecision(3))}`;
/** A rate per M tokens in words: flat, or a tiered one's base ("$3 (tiered)"). */
const perM = (v: unknown) => {
  if (typeof v === "number") return dollars(v);
  const base = typeof v === "object" && v !== null ? (v as { base?: unknown }).base : undefined;
  return typeof base === "number" ? `${dollars(base)} (tiered)` : "?";
};

/**
 * What the dashboard estimates a call of unknown price at (docs/serve.md "Cost"): the price table's
 * (@pydantic/genai-prices) price for a model of the same name at any provider it knows, else the
 * reference `serve.estimate_at` ("provider:model"). Always named as an estimate, with the price it
 * used; never added to the dollars of priced calls. Null reference: no estimates.
 */
export async function priceEstimator(reference: string | null): Promise<Estimator | undefined> {
  if (reference === null) return undefined;
  const { calcPrice } = await import("@pydantic/genai-prices");
  const at = reference.indexOf(":");
  const ref = { providerId: reference.slice(0, at), model: reference.slice(at + 1) };
  if (!calcPrice({ input_tokens: 1, output_tokens: 1 }, ref.model, { providerId: ref.providerId }))
    throw new UsageError(
      `serve.estimate_at '${reference}' names no model of the price table (@pydantic/genai-prices): give provider:model, e.g. openai:gpt-4o-mini, or false for no estimates`,
    );
  /** A price found once per model name: its rates per M tokens when they are flat (tiered ones are asked each time). */
  type Found = { label: string; flat?: { input: number; cacheRead: number; output: number }; ask: (u: Usage) => number | null };
  const found = new Map<string, Found | null>();
  const rate = (v: unknown) => (typeof v === "number" ? v : undefined);
  const find = (model: string): Found | null => {
    let f = found.get(model);
    if (f !== undefined) return f;
    const probe = { input_tokens: 1000, output_tokens: 1000 };
    const same = calcPrice(probe, model);
    const hit = same ?? calcPrice(probe, ref.model, { providerId: ref.providerId });
    if (!hit) f = null;
    else {
      const price = hit.model_price;
      const opts = same ? {} : { providerId: ref.providerId };
      const name = same ? model : ref.model;
      const [input, output, cacheRead] = [rate(price.input_mtok), rate(price.output_mtok), rate(price.cache_read_mtok) ?? rate(price.input_mtok)];
      f = {
        label: `${same ? "the same model's price at " : ""}${hit.provider.id}:${hit.model.id}: ${perM(price.input_mtok)} in / ${perM(price.output_mtok)} out per M tokens`,
        ...(input !== undefined && output !== undefined && cacheRead !== undefined ? { flat: { input, cacheRead, output } } : {}),
        ask: (u) => calcPrice(u, name, opts)?.total_price ?? null,
      };
    }
    found.set(model, f);
    return f;
  };
  return (c): PriceEstimate | null => {
    const f = find(c.model);
    if (!f) return null;
    const cached = Math.min(c.cached_input_tokens, c.input_tokens);
    if (f.flat) {
      const usd = ((c.input_tokens - cached) * f.flat.input + cached * f.flat.cacheRead + c.output_tokens * f.flat.output) / 1e6;
      return { usd, from: f.label };
    }
    const usd = f.ask({ input_tokens: c.input_tokens, output_tokens: c.output_tokens, ...(cached ? { cache_read_tokens: cached } : {}) });
    return usd === null ? null : { usd, from: f.label };
  };
}

type Usage = { input_tokens: number; output_tokens: number; cache_read_tokens?: number };
