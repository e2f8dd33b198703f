/**
 * Dollars from the maintained price table (@pydantic/genai-prices) and from `prices:` (docs/serve.md):
 * known prices give the expected dollars; an unknown model gives null, never 0. The figures below
 * are the vendors' published list prices (USD per million tokens, input / output).
 */
import { describe, expect, it } from "vitest";
import { costUsd, roundUsd } from "../../src/models/pricing.js";

const IN = 1_000;
const OUT = 500;
const expected = (inPerM: number, outPerM: number) => roundUsd((IN * inPerM + OUT * outPerM) / 1e6);
const priced = async (spec: Parameters<typeof costUsd>[0]) => {
  const usd = await costUsd(spec, IN, OUT);
  return usd === null ? null : roundUsd(usd);
};

describe("the price table", () => {
  it.each([
    ["gpt-4o-mini", 0.15, 0.6],
    ["gpt-4o", 2.5, 10],
    ["gpt-4.1-mini", 0.4, 1.6],
    ["o4-mini", 1.1, 4.4],
  ])("prices OpenAI's %s", async (model, i, o) => {
    expect(await priced({ providerId: "openai", model })).toBe(expected(i, o));
  });

  it.each([
    ["claude-sonnet-4-5", 3, 15],
    ["claude-haiku-4-5", 1, 5],
    ["claude-opus-4-1", 15, 75],
  ])("prices Anthropic's %s", async (model, i, o) => {
    expect(await priced({ providerId: "anthropic", model })).toBe(expected(i, o));
  });

  it.each([
    ["https://openrouter.ai/api/v1", "meta-llama/llama-3.3-70b-instruct", 0.05, 0.24],
    ["https://openrouter.ai/api/v1", "qwen/qwen3-235b-a22b", 0.13, 0.6],
    ["https://api.groq.com/openai/v1", "llama-3.1-8b-instant", 0.05, 0.08],
    ["https://api.groq.com/openai/v1", "llama-3.3-70b-versatile", 0.59, 0.79],
    ["https://api.together.xyz/v1", "meta-llama/Llama-3.3-70B-Instruct-Turbo", 0.88, 0.88],
  ])("prices open models hosted behind an OpenAI-compatible URL (%s %s)", async (apiUrl, model, i, o) => {
    expect(await priced({ apiUrl, model })).toBe(expected(i, o));
  });

  it("gives null, never 0, for a model it does not know", async () => {
    expect(await priced({ providerId: "openai", model: "gpt-that-does-not-exist" })).toBeNull();
    expect(await priced({ apiUrl: "https://api.together.xyz/v1", model: "someone/unlisted-model" })).toBeNull();
    expect(await priced({ model: "qwen3:8b" })).toBeNull(); // an in-process engine, no table
    expect(await priced({ apiUrl: "http://127.0.0.1:11434/v1", model: "llama3.1:8b" })).toBeNull(); // a local server
    expect(await priced({ apiUrl: "http://192.168.1.20:8000/v1", model: "gpt-4o-mini" })).toBeNull(); // a name on a private host is not OpenAI's
  });

  it("takes a provider's prices: over the table, 0 included (a local model)", async () => {
    expect(await priced({ override: { input_per_mtok: 2, output_per_mtok: 8 }, providerId: "openai", model: "gpt-4o" })).toBe(expected(2, 8));
    expect(await priced({ override: { input_per_mtok: 0, output_per_mtok: 0 }, model: "qwen3:8b" })).toBe(0);
  });
});
