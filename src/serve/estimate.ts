import { UsageError } from "../errors.js";
import type { Estimator, PriceEstimate } from "../read-models/types.js";

const perM = (v: unknown) => (typeof v === "number" ? `$${Number(v.toPrecision(3))}` : "?");

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
  const labels = new Map<string, string>();
  const label = (provider: string, model: string, price: Record<string, unknown>, same: boolean) => {
    const key = `${provider}:${model}`;
    let l = labels.get(key);
    if (!l) {
      l = `${same ? "the same model's price at " : ""}${key}: ${perM(price.input_mtok)} in / ${perM(price.output_mtok)} out per M tokens`;
      labels.set(key, l);
    }
    return l;
  };
  return (c): PriceEstimate | null => {
    const usage = {
      input_tokens: c.input_tokens,
      output_tokens: c.output_tokens,
      ...(c.cached_input_tokens ? { cache_read_tokens: Math.min(c.cached_input_tokens, c.input_tokens) } : {}),
    };
    const same = calcPrice(usage, c.model);
    if (same) return { usd: same.total_price, from: label(same.provider.id, same.model.id, same.model_price, true) };
    const r = calcPrice(usage, ref.model, { providerId: ref.providerId });
    return r ? { usd: r.total_price, from: label(r.provider.id, r.model.id, r.model_price, false) } : null;
  };
}
