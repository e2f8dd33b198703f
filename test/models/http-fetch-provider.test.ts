/**
 * The model transport (src/models/http-fetch.ts) as dissent uses it: the openai-compatible provider
 * built by PROVIDERS (which loads the transport) and the call door, against real servers on
 * 127.0.0.1 — a connection reset mid-reply retried as unreachable, a 429's Retry-After honoured, a
 * reply past max_reply_bytes failed once, and the API key never in an error or event. Nothing here
 * loads the transport by hand: these requests take the transport only if the provider set it up.
 */
import type { LanguageModel } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import type { NewEvent } from "../../src/contracts/events.js";
import { ProviderError } from "../../src/errors.js";
import { callModel } from "../../src/models/call.js";
import { PROVIDERS } from "../../src/models/providers.js";
import type { CallContext, ModelTarget } from "../../src/models/types.js";
import { redactor } from "../../src/redact.js";
import { closeServers, completion, pour, serve } from "../support/plain-server.js";

afterEach(closeServers);

const MiB = 1024 * 1024;
const KEY = "sk-transport-test-0123456789abcdef";

/** Through the real provider stack: the openai-compatible provider built as dissent builds it, and the call door. */
async function realTarget(url: string): Promise<ModelTarget> {
  const model = (await PROVIDERS["openai-compatible"].create({ type: "openai-compatible", base_url: `${url}/v1` } as never, {
    name: "main",
    model: "m",
    apiKey: KEY,
    headers: {},
    baseDir: ".",
    env: {},
    maxReplyBytes: MiB,
  })) as LanguageModel;
  return {
    provider: "main",
    model: "m",
    route: "primary",
    endpoint: `openai-compatible ${url}/v1`,
    structured: "json_schema",
    cost: async () => null,
    load: async () => model,
  };
}

function ctxFor(t: ModelTarget, extra: Partial<CallContext> = {}) {
  const sleeps: number[] = [];
  const events: NewEvent[] = [];
  const ctx: CallContext = {
    router: () => ({ primary: t }),
    cacheMode: "use",
    seed: 42,
    timeoutMs: 10_000,
    maxRetries: 2,
    backoffMs: 1,
    emit: (e) => void events.push(e),
    sleep: async (ms) => void sleeps.push(ms),
    redact: redactor([KEY]),
    ...extra,
  };
  return { ctx, sleeps, events };
}

const REQUEST = { system: "You are terse.", messages: [{ role: "user" as const, content: "Say hi." }] };

describe("the model transport under the call door (the openai-compatible provider as dissent builds it)", () => {
  it("a connection reset half way through a reply is unreachable: retried, and the retry's answer is the call's", async () => {
    const { url, seen } = await serve((req, res, _body, n) => {
      if (n > 0) {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(completion("second time lucky"));
      }
      res.writeHead(200, { "content-type": "application/json", "content-length": "4000" });
      res.write('{"id":"chatcmpl-t","object":"chat.completion",', () => req.socket.destroy());
    });
    const { ctx, events } = ctxFor(await realTarget(url));
    const reply = await callModel({ role: "executor" }, REQUEST, ctx);
    expect(reply.text).toBe("second time lucky");
    expect(seen).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ attempts: 2 });
  });

  it("a 429 with Retry-After is retried after the time it asked for; a reset on every attempt fails naming the provider, never the key", async () => {
    const { url: limited, seen } = await serve((_req, res, _body, n) => {
      if (n === 0) {
        res.writeHead(429, { "content-type": "application/json", "retry-after": "2" });
        return void res.end(JSON.stringify({ error: { message: "Rate limit reached, slow down" } }));
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(completion("after the wait"));
    });
    const first = ctxFor(await realTarget(limited));
    expect((await callModel({ role: "executor" }, REQUEST, first.ctx)).text).toBe("after the wait");
    expect(first.sleeps).toEqual([2000]);
    expect(seen).toHaveLength(2);
    // the provider's requests went through the transport, not Node's fetch (which adds Fetch-standard headers)
    expect(seen[0]?.headers["sec-fetch-mode"]).toBeUndefined();

    const { url: resetting } = await serve((req) => void req.socket.destroy());
    const second = ctxFor(await realTarget(resetting));
    const err = await callModel({ role: "executor" }, REQUEST, second.ctx).catch((e: unknown) => e);
    expect(ProviderError.isInstance(err)).toBe(true);
    expect((err as Error).message).toContain("'main'");
    expect(second.sleeps).toHaveLength(2); // three attempts: unreachable is retried
    expect(`${(err as Error).message} ${(err as Error).stack} ${JSON.stringify(second.events)}`).not.toContain(KEY);
  });

  it("a reply past max_reply_bytes through the provider is reply_too_large: one request, not retried", async () => {
    const { url, seen } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      void pour(res, Buffer.alloc(64 * 1024, 0x20), 8 * MiB);
    });
    const { ctx, events } = ctxFor(await realTarget(url));
    const err = await callModel({ role: "executor" }, REQUEST, ctx).catch((e: unknown) => e);
    expect((err as Error).message).toContain("max_reply_bytes");
    expect(seen).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ attempts: 1, error: expect.stringContaining("max_reply_bytes") });
  });
});
