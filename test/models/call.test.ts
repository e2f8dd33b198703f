import { APICallError } from "@ai-sdk/provider";
import type { LanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import type { NewEvent } from "../../src/contracts/events.js";
import { BudgetExceeded, ProviderAuthError, ProviderError, ReplayMiss } from "../../src/errors.js";
import { memoryCache } from "../../src/models/cache.js";
import { callModel, requestKey } from "../../src/models/call.js";
import { requestExtras } from "../../src/models/providers.js";
import type { CallContext, ModelRequest, ModelTarget, RoleRoute } from "../../src/models/types.js";
import { callBudget } from "../../src/adversarial/budget.js";
import { redactor } from "../../src/redact.js";
import { MockLanguageModelV3 } from "ai/test";
import { scriptedModel } from "../support/mock-model.js";

const REQUEST: ModelRequest = { system: "You are terse.", messages: [{ role: "user", content: "Say hi." }] };

function target(model: LanguageModel & { modelId: string }, route: "primary" | "secondary", provider = route === "primary" ? "main" : "backup"): ModelTarget {
  return {
    provider,
    model: model.modelId,
    route,
    endpoint: `openai-compatible http://${provider}.test/v1`,
    structured: "json_schema",
    cost: async () => null,
    load: async () => model,
  };
}

function apiError(statusCode: number, message = `status ${statusCode}`, headers?: Record<string, string>) {
  return new APICallError({
    message,
    url: "http://main.test/v1/chat/completions",
    requestBodyValues: {},
    statusCode,
    ...(headers ? { responseHeaders: headers } : {}),
  });
}

function refused() {
  return new APICallError({
    message: "Cannot connect to API: connect ECONNREFUSED 127.0.0.1:9",
    url: "http://main.test/v1/chat/completions",
    requestBodyValues: {},
    cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
    isRetryable: true,
  });
}

interface Harness {
  ctx: CallContext;
  sleeps: number[];
  events: NewEvent[];
}

function harness(route: RoleRoute, extra: Partial<CallContext> = {}): Harness {
  const sleeps: number[] = [];
  const events: NewEvent[] = [];
  const ctx: CallContext = {
    router: () => route,
    cacheMode: "use",
    seed: 42,
    timeoutMs: 5_000,
    maxRetries: 2,
    backoffMs: 100,
    emit: (e) => void events.push(e),
    sleep: async (ms) => void sleeps.push(ms),
    ...extra,
  };
  return { ctx, sleeps, events };
}

describe("callModel: parameters", () => {
  it("sends temperature 0 and the seed, and no tools", async () => {
    const m = scriptedModel("m1", ["hi"]);
    const { ctx } = harness({ primary: target(m, "primary") });
    const reply = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(reply.text).toBe("hi");
    expect(m.doGenerateCalls).toHaveLength(1);
    const call = m.doGenerateCalls[0];
    expect(call?.temperature).toBe(0);
    expect(call?.seed).toBe(42);
    expect(call?.tools ?? []).toEqual([]);
  });

  it("asks for JSON through the response format when the request has a schema", async () => {
    const m = scriptedModel("m1", ['{"ok":true}']);
    const { ctx } = harness({ primary: target(m, "primary") });
    const schema = { name: "thing", jsonSchema: { type: "object", properties: { ok: { type: "boolean" } } } };
    await callModel({ role: "challenger" }, { ...REQUEST, schema }, ctx);
    expect(m.doGenerateCalls[0]?.responseFormat).toMatchObject({ type: "json", schema: schema.jsonSchema });
    expect(m.doGenerateCalls[0]?.tools ?? []).toEqual([]);
  });

  it("records the call: role, provider, model, route, usage", async () => {
    const m = scriptedModel("m1", ["hi"], { input: 33, output: 4 });
    const { ctx, events } = harness({ primary: target(m, "primary") });
    const reply = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(reply.record).toMatchObject({
      role: "executor",
      provider: "main",
      model: "m1",
      route: "primary",
      cached: false,
      input_tokens: 33,
      output_tokens: 4,
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "ModelCall", role: "executor", attempts: 1, request_hash: reply.requestHash });
  });

  it("records hashes and sizes, not content, unless logContent", async () => {
    const m = scriptedModel("m1", ["a reply"]);
    const { ctx, events } = harness({ primary: target(m, "primary") });
    await callModel({ role: "executor" }, REQUEST, ctx);
    expect(JSON.stringify(events)).not.toContain("Say hi.");
    expect(JSON.stringify(events)).not.toContain("a reply");
    const logged = harness({ primary: target(scriptedModel("m1", ["a reply"]), "primary") }, { logContent: true });
    await callModel({ role: "executor" }, REQUEST, logged.ctx);
    expect(JSON.stringify(logged.events)).toContain("a reply");
  });
});

describe("callModel: retries (docs/configuration.md: at most 2, with backoff, honouring Retry-After)", () => {
  it("retries a 5xx at most twice, then fails with a ProviderError naming the provider", async () => {
    const m = scriptedModel("m1", [apiError(500)]);
    const { ctx, sleeps } = harness({ primary: target(m, "primary") });
    const err = await callModel({ role: "executor" }, REQUEST, ctx).catch((e: unknown) => e);
    expect(ProviderError.isInstance(err)).toBe(true);
    expect((err as Error).message).toContain("'main'");
    expect(m.doGenerateCalls).toHaveLength(3);
    expect(sleeps).toEqual([100, 200]);
  });

  it("succeeds when a retry does", async () => {
    const m = scriptedModel("m1", [apiError(503), refused(), "ok"]);
    const { ctx, events } = harness({ primary: target(m, "primary") });
    const reply = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(reply.text).toBe("ok");
    expect(m.doGenerateCalls).toHaveLength(3);
    expect(events.at(-1)).toMatchObject({ attempts: 3 });
  });

  it("honours Retry-After on a 429", async () => {
    const m = scriptedModel("m1", [apiError(429, "slow down", { "retry-after": "3" }), "ok"]);
    const { ctx, sleeps } = harness({ primary: target(m, "primary") });
    expect((await callModel({ role: "executor" }, REQUEST, ctx)).text).toBe("ok");
    expect(sleeps).toEqual([3000]);
  });

  it("a Retry-After beyond a minute is honoured by not retrying early: the call fails and says when to retry", async () => {
    const m = scriptedModel("m1", [apiError(429, "slow down", { "retry-after": "120" }), "too early"]);
    const { ctx, sleeps } = harness({ primary: target(m, "primary") });
    const err = await callModel({ role: "executor" }, REQUEST, ctx).catch((e: unknown) => e);
    expect(ProviderError.isInstance(err)).toBe(true);
    expect((err as Error).message).toContain("retry after 120 s");
    expect(sleeps).toEqual([]);
    expect(m.doGenerateCalls).toHaveLength(1);
  });

  it("a 402 (payment required) is a quota error: not retried, not soft-failed", async () => {
    const m = scriptedModel("m1", [apiError(402, "insufficient balance"), "ok"]);
    const { ctx } = harness({ primary: target(m, "primary") });
    expect(ProviderAuthError.isInstance(await callModel({ role: "executor" }, REQUEST, ctx).catch((e: unknown) => e))).toBe(true);
    expect(m.doGenerateCalls).toHaveLength(1);
  });

  it("does not retry a 401 and throws ProviderAuthError naming the key's variable", async () => {
    const m = scriptedModel("m1", [apiError(401, "Incorrect API key")]);
    const t = { ...target(m, "primary"), keyHint: "MAIN_KEY" };
    const { ctx } = harness({ primary: t });
    const err = await callModel({ role: "executor" }, REQUEST, ctx).catch((e: unknown) => e);
    expect(ProviderAuthError.isInstance(err)).toBe(true);
    expect((err as Error).message).toContain("MAIN_KEY");
    expect(m.doGenerateCalls).toHaveLength(1);
  });

  it("does not retry a 400", async () => {
    const m = scriptedModel("m1", [apiError(400, "bad request")]);
    const { ctx } = harness({ primary: target(m, "primary") });
    await expect(callModel({ role: "executor" }, REQUEST, ctx)).rejects.toThrow(/bad request/);
    expect(m.doGenerateCalls).toHaveLength(1);
  });

  it("bounds each attempt by the timeout, and retries timeouts", async () => {
    const hang = (options: { abortSignal?: AbortSignal }) =>
      new Promise<string>((_resolve, reject) => {
        options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason), { once: true });
      });
    const m = scriptedModel("m1", [hang, hang, "late but fine"]);
    const { ctx } = harness({ primary: target(m, "primary") }, { timeoutMs: 30 });
    expect((await callModel({ role: "executor" }, REQUEST, ctx)).text).toBe("late but fine");
    expect(m.doGenerateCalls).toHaveLength(3);
  });

  it("a call that keeps timing out fails saying so", async () => {
    const hang = (options: { abortSignal?: AbortSignal }) =>
      new Promise<string>((_resolve, reject) => {
        options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason), { once: true });
      });
    const m = scriptedModel("m1", [hang]);
    const { ctx } = harness({ primary: target(m, "primary") }, { timeoutMs: 20 });
    await expect(callModel({ role: "executor" }, REQUEST, ctx)).rejects.toThrow(/timed out/);
    expect(m.doGenerateCalls).toHaveLength(3);
  });

  it("a timed-out call to an in-process model (temperature 0, a seed) is not retried: it would only time out the same way (issue 32)", async () => {
    const hang = (options: { abortSignal?: AbortSignal }) =>
      new Promise<string>((_resolve, reject) => {
        options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason), { once: true });
      });
    const m = scriptedModel("m1", [hang, "never asked"]);
    const { ctx, sleeps, events } = harness({ primary: { ...target(m, "primary"), endpoint: "llama-cpp 0123", local: true } }, { timeoutMs: 20 });
    await expect(callModel({ role: "executor" }, REQUEST, ctx)).rejects.toThrow(
      "provider 'main' (m1) timed out after 20 ms; not retried: this in-process model answers the same request the same way (temperature 0, seed 42): raise call_timeout_ms, or route the role to a faster model",
    );
    expect(m.doGenerateCalls).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(events[0]).toMatchObject({ type: "ModelCall", attempts: 1 });
  });

  it("a reply an in-process model cut off is not retried either; one from a server still is", async () => {
    const cutOff = (raw: string) =>
      new MockLanguageModelV3({
        modelId: "m1",
        doGenerate: async () => ({
          content: [{ type: "text", text: "partial" }],
          finishReason: { unified: "length", raw },
          usage: { inputTokens: { total: 5, noCache: 5, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 3, text: 3, reasoning: 0 } },
          warnings: [],
        }),
      });
    const local = cutOff("context-end:512");
    const { ctx } = harness({ primary: { ...target(local, "primary"), endpoint: "llama-cpp 0123", local: true } });
    // The engine says the context ran out (not a max_tokens of the config): the message names the context and its size.
    await expect(callModel({ role: "executor" }, REQUEST, ctx)).rejects.toThrow(
      "provider 'main' (m1) ran into the end of its context (512 tokens, prompt and reply together) before the reply was done: raise context_size for provider 'main', or shorten the prompt; not retried: this in-process model answers the same request the same way (temperature 0, seed 42)",
    );
    expect(local.doGenerateCalls).toHaveLength(1);
    const remote = cutOff("length");
    const server = harness({ primary: target(remote, "primary") });
    await expect(callModel({ role: "executor" }, REQUEST, server.ctx)).rejects.toThrow(/cut the reply off at its length limit: raise max_tokens/);
    expect(remote.doGenerateCalls).toHaveLength(3);
  });
});

describe("callModel: fallback to the secondary (docs/configuration.md)", () => {
  it.each([
    ["unreachable", refused],
    ["5xx", () => apiError(502)],
  ])("falls back when the primary is %s after its retries, and records route secondary", async (_name, fail) => {
    const p = scriptedModel("p", [fail()]);
    const s = scriptedModel("s", ["from secondary"]);
    const { ctx, events } = harness({ primary: target(p, "primary"), secondary: target(s, "secondary") });
    const reply = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(reply.text).toBe("from secondary");
    expect(reply.record).toMatchObject({ provider: "backup", model: "s", route: "secondary" });
    expect(p.doGenerateCalls).toHaveLength(3);
    expect(s.doGenerateCalls).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ route: "secondary", fallback_reason: expect.any(String) });
  });

  it.each([
    ["401", () => apiError(401)],
    ["400", () => apiError(400)],
    ["429", () => apiError(429)],
  ])("does not fall back on %s: the primary was reached", async (_name, fail) => {
    const p = scriptedModel("p", [fail()]);
    const s = scriptedModel("s", ["from secondary"]);
    const { ctx } = harness({ primary: target(p, "primary"), secondary: target(s, "secondary") });
    await expect(callModel({ role: "executor" }, REQUEST, ctx)).rejects.toThrow();
    expect(s.doGenerateCalls).toHaveLength(0);
  });

  it("when both fail, the error names the secondary that failed last", async () => {
    const p = scriptedModel("p", [refused()]);
    const s = scriptedModel("s", [apiError(500)]);
    const { ctx } = harness({ primary: target(p, "primary"), secondary: target(s, "secondary") });
    const err = await callModel({ role: "executor" }, REQUEST, ctx).catch((e: unknown) => e);
    expect(ProviderError.isInstance(err)).toBe(true);
    expect((err as Error).message).toContain("'backup'");
  });
});

describe("callModel: cache (docs/run.md determinism)", () => {
  it("an identical second call is answered from the cache without touching the model", async () => {
    const m = scriptedModel("m1", ["first", "second"]);
    const cache = memoryCache();
    const { ctx } = harness({ primary: target(m, "primary") }, { cache });
    const a = await callModel({ role: "executor" }, REQUEST, ctx);
    const b = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(b.text).toBe(a.text);
    expect(b.record.cached).toBe(true);
    expect(b.record.input_tokens).toBe(a.record.input_tokens);
    expect(m.doGenerateCalls).toHaveLength(1);
  });

  it("a different request is not a hit", async () => {
    const m = scriptedModel("m1", ["first", "second"]);
    const { ctx } = harness({ primary: target(m, "primary") }, { cache: memoryCache() });
    await callModel({ role: "executor" }, REQUEST, ctx);
    const b = await callModel({ role: "executor" }, { ...REQUEST, messages: [{ role: "user", content: "Say bye." }] }, ctx);
    expect(b.text).toBe("second");
  });

  it("bypass (--no-cache) does not read the cache: it asks again and replaces the cached reply", async () => {
    const m = scriptedModel("m1", ["first", "second"]);
    const cache = memoryCache();
    const { ctx } = harness({ primary: target(m, "primary") }, { cache });
    await callModel({ role: "executor" }, REQUEST, ctx);
    const b = await callModel({ role: "executor" }, REQUEST, { ...ctx, cacheMode: "bypass" });
    expect(b.text).toBe("second");
    expect(b.record.cached).toBe(false);
    expect(cache.size()).toBe(1);
    const after = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(after).toMatchObject({ text: "second", record: { cached: true } });
    expect(m.doGenerateCalls).toHaveLength(2);
  });

  it("replay answers from the cache", async () => {
    const m = scriptedModel("m1", ["first"]);
    const cache = memoryCache();
    const { ctx } = harness({ primary: target(m, "primary") }, { cache });
    await callModel({ role: "executor" }, REQUEST, ctx);
    const b = await callModel({ role: "executor" }, REQUEST, { ...ctx, cacheMode: "replay" });
    expect(b).toMatchObject({ text: "first", record: { cached: true } });
    expect(m.doGenerateCalls).toHaveLength(1);
  });

  it("replay never touches the network and fails with ReplayMiss on a miss", async () => {
    const p = scriptedModel("p", ["never"]);
    const s = scriptedModel("s", ["never"]);
    const { ctx } = harness({ primary: target(p, "primary"), secondary: target(s, "secondary") }, { cache: memoryCache(), cacheMode: "replay" });
    const err = await callModel({ role: "executor" }, REQUEST, ctx).catch((e: unknown) => e);
    expect(ReplayMiss.isInstance(err)).toBe(true);
    expect(p.doGenerateCalls.length + s.doGenerateCalls.length).toBe(0);
  });

  it("transport failures are never cached", async () => {
    const m = scriptedModel("m1", [apiError(500), apiError(500), apiError(500), "recovered"]);
    const cache = memoryCache();
    const { ctx } = harness({ primary: target(m, "primary") }, { cache });
    await expect(callModel({ role: "executor" }, REQUEST, ctx)).rejects.toThrow();
    expect(cache.size()).toBe(0);
    expect((await callModel({ role: "executor" }, REQUEST, ctx)).text).toBe("recovered");
  });

  it("a reply served by the secondary is reused by an identical second call without calling the primary again", async () => {
    const p = scriptedModel("p", [apiError(500)]);
    const s = scriptedModel("s", ["from secondary"]);
    const cache = memoryCache();
    const { ctx } = harness({ primary: target(p, "primary"), secondary: target(s, "secondary") }, { cache });
    await callModel({ role: "executor" }, REQUEST, ctx);
    const callsAfterFirst = p.doGenerateCalls.length;
    const again = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(again).toMatchObject({ text: "from secondary", record: { cached: true, route: "secondary" } });
    expect(p.doGenerateCalls.length).toBe(callsAfterFirst);
  });

  it("the budget is charged for network calls only, not cache hits", async () => {
    const budget = callBudget(1);
    const m = scriptedModel("m1", ["a", "b"]);
    const { ctx } = harness({ primary: target(m, "primary") }, { cache: memoryCache(), budget });
    await callModel({ role: "executor" }, REQUEST, ctx);
    await callModel({ role: "executor" }, REQUEST, ctx);
    await expect(callModel({ role: "executor" }, { ...REQUEST, system: "other" }, ctx)).rejects.toThrow(BudgetExceeded);
    expect(budget.used()).toBe(1);
  });

  it("a failed call spends its unit too, and its ModelCall event carries the error", async () => {
    const budget = callBudget(5);
    const m = scriptedModel("m1", [apiError(400, "bad request")]);
    const { ctx, events } = harness({ primary: target(m, "primary") }, { budget });
    await expect(callModel({ role: "executor" }, REQUEST, ctx)).rejects.toThrow();
    expect(budget.used()).toBe(1);
    expect(events).toEqual([expect.objectContaining({ type: "ModelCall", error: expect.stringContaining("bad request") })]);
  });
});

describe("requestKey", () => {
  const m = scriptedModel("m1", ["x"]);
  const t = target(m, "primary");
  const key = requestKey(t, REQUEST, 7);

  it("is stable for the same request", () => {
    expect(requestKey(t, { system: REQUEST.system, messages: [{ content: "Say hi.", role: "user" }] }, 7)).toBe(key);
  });

  it("changes with endpoint, model, messages, seed and schema", () => {
    expect(requestKey({ ...t, endpoint: "openai-compatible http://other/v1" }, REQUEST, 7)).not.toBe(key);
    expect(requestKey({ ...t, model: "m2" }, REQUEST, 7)).not.toBe(key);
    expect(requestKey(t, { ...REQUEST, system: "x" }, 7)).not.toBe(key);
    expect(requestKey(t, REQUEST, 8)).not.toBe(key);
    expect(requestKey(t, { ...REQUEST, schema: { name: "s", jsonSchema: {} } }, 7)).not.toBe(key);
  });

  it("changes with what the provider adds to every request (extra_body, headers); a provider adding nothing keys as before", () => {
    const extra = requestKey({ ...t, requestExtras: { extra_body: { options: { num_ctx: 2048 } } } }, REQUEST, 7);
    expect(extra).not.toBe(key);
    expect(requestKey({ ...t, requestExtras: { extra_body: { options: { num_ctx: 8192 } } } }, REQUEST, 7)).not.toBe(extra);
    expect(requestKey({ ...t, requestExtras: { headers: { "x-variant": "fast" } } }, REQUEST, 7)).not.toBe(key);
    expect(requestKey({ ...t, requestExtras: undefined }, REQUEST, 7)).toBe(key);
  });
});

describe("requestExtras: what a provider's config adds to every request", () => {
  it("extra_body as configured, header names lower-cased and values as written (a ${VAR} by name, never its value); nothing when neither is set", () => {
    const base = { type: "openai-compatible" as const, base_url: "http://x.test/v1" };
    expect(requestExtras(base)).toBeUndefined();
    expect(requestExtras({ ...base, extra_body: {}, headers: {} })).toBeUndefined();
    expect(requestExtras({ ...base, extra_body: { options: { num_ctx: 4096 } }, headers: { "X-Org": "acme", Authorization: "Bearer ${TOKEN}" } })).toEqual({
      extra_body: { options: { num_ctx: 4096 } },
      headers: { "x-org": "acme", authorization: "Bearer ${TOKEN}" },
    });
  });
});

describe("callModel: secrets", () => {
  it("never puts a known secret into an error message or event", async () => {
    const secret = "hunter2-very-secret-value";
    const m = scriptedModel("m1", [apiError(401, `Incorrect API key provided: ${secret}`)]);
    const { ctx, events } = harness({ primary: target(m, "primary") }, { redact: redactor([secret]) });
    const err = await callModel({ role: "executor" }, REQUEST, ctx).catch((e: unknown) => e);
    expect(ProviderAuthError.isInstance(err)).toBe(true);
    expect((err as Error).message).not.toContain(secret);
    expect(JSON.stringify(events)).not.toContain(secret);
  });
});

describe("callModel: latency is the request's own time, queue time apart (docs/run.md)", () => {
  it("a call that waited for a max_concurrency slot records the wait as queue_ms, not latency", async () => {
    let clock = 1_000;
    // The model takes 40 ms of the clock; the limiter holds the call 700 ms before it may send.
    const m = scriptedModel("m1", [
      () => {
        clock += 40;
        return "hi";
      },
    ]);
    const t: ModelTarget = {
      ...target(m, "primary"),
      limiter: async (fn) => {
        clock += 700;
        return fn();
      },
    };
    const { ctx, events } = harness({ primary: t }, { now: () => clock });
    const reply = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(reply.record).toMatchObject({ latency_ms: 40, queue_ms: 700 });
    expect(events[0]).toMatchObject({ type: "ModelCall", latency_ms: 40, queue_ms: 700 });
  });

  it("each attempt's wait is added up; without a limiter queue_ms is 0; a cache hit has none", async () => {
    let clock = 0;
    const m = scriptedModel("m1", [
      () => {
        clock += 10;
        return apiError(500);
      },
      () => {
        clock += 10;
        return "ok";
      },
    ]);
    const cache = memoryCache();
    const limited: ModelTarget = {
      ...target(m, "primary"),
      limiter: async (fn) => {
        clock += 100;
        return fn();
      },
    };
    const { ctx } = harness({ primary: limited }, { now: () => clock, cache });
    const reply = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(reply.record).toMatchObject({ latency_ms: 20, queue_ms: 200 });

    const free = harness({ primary: target(scriptedModel("m2", ["ok"]), "primary") }, { now: () => clock });
    expect((await callModel({ role: "executor" }, REQUEST, free.ctx)).record.queue_ms).toBe(0);
    const hit = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(hit.record.cached).toBe(true);
    expect(hit.record.queue_ms).toBeUndefined();
  });
});
