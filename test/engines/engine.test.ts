import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditReply } from "../../src/contracts/audit.js";
import type { ProviderConfig } from "../../src/contracts/config.js";
import { FindingsReply } from "../../src/contracts/concern.js";
import { createLlamaEngines, DEFAULT_SEQUENCES, withEngineLimits, type DownloadReporter, type LlamaEngines } from "../../src/engines/llama-cpp/index.js";
import { ConfigError, DissentError } from "../../src/errors.js";
import { auditReplySchema } from "../../src/gate/challenge.js";
import { scratch } from "../support/cli.js";
import { TINY_CHAT, writeTinyGguf, type TinyGguf } from "../support/tiny-gguf.js";
import { flipByte, startFakeHuggingFace } from "./support.js";
import { z } from "zod";

// One engine for the file: importing node-llama-cpp and starting llama.cpp is the slow part (~1.5 s).
let s: ReturnType<typeof scratch>;
let tiny: TinyGguf;
let engines: LlamaEngines;
const events: string[] = [];
const reporter: DownloadReporter = {
  notice: (l) => events.push(`notice ${l}`),
  start: (n, total) => events.push(`start ${n} ${total}`),
  progress: (n, done, total) => events.push(`progress ${n} ${done}/${total}`),
  done: (n, _p, bytes) => events.push(`done ${n} ${bytes}`),
};
const provider = (model: string, extra: Partial<ProviderConfig> = {}): ProviderConfig =>
  ({ type: "llama-cpp", model, threads: 1, gpu: false, ...extra }) as ProviderConfig;
const modelsDir = () => join(s.dir, "models");
const v3 = async (e: LlamaEngines, name: string, p: ProviderConfig, model = "m"): Promise<LanguageModelV3> =>
  (await e.create(name, p, model)) as LanguageModelV3;
const ask = (text: string, extra: Partial<LanguageModelV3CallOptions> = {}): LanguageModelV3CallOptions => ({
  prompt: [
    { role: "system", content: "You audit drafts." },
    { role: "user", content: [{ type: "text", text }] },
  ],
  temperature: 0,
  seed: 7,
  ...extra,
});
const textOf = (r: { content: { type: string; text?: string }[] }) => r.content.map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("");

beforeAll(() => {
  s = scratch("dissent-engine-");
  tiny = writeTinyGguf(join(s.dir, "tiny.gguf"), TINY_CHAT);
  engines = createLlamaEngines({ config: { source: "test.yaml", baseDir: s.dir, modelsDir: modelsDir(), offline: false, providers: {} }, env: {}, reporter });
});
afterAll(async () => {
  await engines.dispose();
  s.cleanup();
});

describe("the llama-cpp engine on a tiny GGUF", () => {
  it("loads the model and answers free text, with usage and a stop finish", async () => {
    const m = await v3(engines, "tiny", provider("./tiny.gguf"));
    expect(m.specificationVersion).toBe("v3");
    const r = await m.doGenerate(ask("What is 2+2?"));
    expect(textOf(r)).toBe('"');
    expect(r.finishReason.unified).toBe("stop");
    expect(r.usage.inputTokens.total).toBeGreaterThan(10);
    expect(r.usage.outputTokens.total).toBeGreaterThan(0);
  });

  it("a structured request is grammar-constrained: the audit reply is schema-valid JSON", async () => {
    const m = await v3(engines, "tiny", provider("./tiny.gguf"));
    const r = await m.doGenerate(ask("Draft: 4.", { responseFormat: { type: "json", schema: auditReplySchema().jsonSchema as never, name: "audit" } }));
    const parsed = AuditReply.safeParse(JSON.parse(textOf(r)));
    expect(parsed.success).toBe(true);
    expect(r.finishReason.unified).toBe("stop");
  });

  it("every reply schema the pipeline sends compiles to a grammar and yields valid JSON", async () => {
    const m = await v3(engines, "tiny", provider("./tiny.gguf"));
    const schema = z.toJSONSchema(FindingsReply, { io: "input", unrepresentable: "any" });
    const r = await m.doGenerate(ask("Plan: ship it.", { responseFormat: { type: "json", schema: schema as never } }));
    expect(FindingsReply.safeParse(JSON.parse(textOf(r))).success).toBe(true);
    // No schema: any JSON object (a random model may nest on and on, so the reply is bounded here).
    const any = await m.doGenerate(ask("Any JSON.", { responseFormat: { type: "json" }, maxOutputTokens: 40 }));
    expect(textOf(any).trimStart().startsWith("{")).toBe(true);
  });

  it("a reply cut off at maxOutputTokens finishes with 'length'", async () => {
    const m = await v3(engines, "tiny", provider("./tiny.gguf"));
    const r = await m.doGenerate(ask("Draft: 4.", { maxOutputTokens: 3, responseFormat: { type: "json", schema: auditReplySchema().jsonSchema as never } }));
    expect(r.finishReason.unified).toBe("length");
    expect(r.usage.outputTokens.total).toBeLessThanOrEqual(3);
  });

  it("streams text deltas and a finish part", async () => {
    const m = await v3(engines, "tiny", provider("./tiny.gguf"));
    const { stream } = await m.doStream(ask("Draft: 4.", { responseFormat: { type: "json", schema: auditReplySchema().jsonSchema as never } }));
    const parts: LanguageModelV3StreamPart[] = [];
    for await (const p of stream as unknown as AsyncIterable<LanguageModelV3StreamPart>) parts.push(p);
    const text = parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : [])).join("");
    expect(AuditReply.safeParse(JSON.parse(text)).success).toBe(true);
    expect(parts.at(-1)?.type).toBe("finish");
  });

  it("a request that starts as an earlier one did reuses its evaluated prefix: the shared tokens are reported as cached and not evaluated again (docs/serve.md)", async () => {
    const m = await v3(engines, "tiny", provider("./tiny.gguf"));
    const shared = "The project, the issue and the draft under review, shared by every critic of a round. ".repeat(6);
    const first = await m.doGenerate(ask(`${shared}Role: one`));
    const second = await m.doGenerate(ask(`${shared}Role: two`));
    const total = second.usage.inputTokens.total ?? 0;
    const cached = second.usage.inputTokens.cacheRead ?? 0;
    expect(cached).toBeGreaterThan(total / 2);
    expect(cached).toBeGreaterThan(first.usage.inputTokens.cacheRead ?? 0);
    expect(second.usage.inputTokens.noCache).toBe(total - cached);
    // The same prompt again gives the same reply from the reused state as from a fresh one.
    expect(textOf(await m.doGenerate(ask(`${shared}Role: one`)))).toBe(textOf(first));
  });

  it("one loaded model serves every role; requests beyond its sequences wait instead of failing", async () => {
    const p = provider("./tiny.gguf");
    const [a, b] = [await v3(engines, "tiny", p, "executor"), await v3(engines, "tiny", p, "challenger")];
    const schema = { type: "json" as const, schema: auditReplySchema().jsonSchema as never };
    const replies = await Promise.all([1, 2, 3, 4, 5].map((i) => (i % 2 ? a : b).doGenerate(ask(`Draft ${i}.`, { responseFormat: schema }))));
    for (const r of replies) expect(AuditReply.safeParse(JSON.parse(textOf(r))).success).toBe(true);
    expect(withEngineLimits({ providers: { t: p } }).providers.t?.max_concurrency).toBe(DEFAULT_SEQUENCES);
  });
});

describe("a router built without the engines (configRouter(config, env))", () => {
  it("still runs the model, through the provider registry's fallback", async () => {
    const { configRouter } = await import("../../src/models/router.js");
    const { buildConfig } = await import("../../src/config/load.js");
    const config = buildConfig(
      { providers: { tiny: { type: "llama-cpp", model: "./tiny.gguf", threads: 1, gpu: false } }, routes: { default: { primary: "tiny:m" } } },
      { source: "t.yaml", baseDir: s.dir, env: {}, cwd: s.dir },
    );
    const target = configRouter(config, {})("executor").primary;
    expect(target.endpoint).toBe("llama-cpp ./tiny.gguf");
    expect(target.structured).toBe("grammar");
    const m = (await target.load()) as LanguageModelV3;
    expect(textOf(await m.doGenerate(ask("hi")))).toBe('"');
  });
});

describe("the cache identity is the model file's sha256", () => {
  it("names the hash, follows a copy to another path, and changes with one byte", () => {
    const id = engines.identity("tiny", provider("./tiny.gguf"), "m");
    expect(id).toBe(`llama-cpp ${tiny.sha256}`);
    copyFileSync(tiny.path, join(s.dir, "copy.gguf"));
    expect(engines.identity("tiny", provider("./copy.gguf"), "m")).toBe(id);
    writeTinyGguf(join(s.dir, "changed.gguf"), TINY_CHAT);
    flipByte(join(s.dir, "changed.gguf"));
    expect(engines.identity("tiny", provider("./changed.gguf"), "m")).not.toBe(id);
  });

  it("is remembered in a sidecar keyed by path, size and mtime", () => {
    const sidecar = JSON.parse(readFileSync(join(modelsDir(), ".dissent-sha256.json"), "utf8")) as Record<string, { sha256: string; size: number }>;
    expect(Object.values(sidecar).some((e) => e.sha256 === tiny.sha256 && e.size === tiny.bytes)).toBe(true);
  });
});

describe("a model that cannot be used is one line naming the file and what to do", () => {
  const failure = async (p: ProviderConfig, e = engines): Promise<Error> => {
    try {
      await e.create("tiny", p, "m");
    } catch (err) {
      expect(DissentError.isInstance(err)).toBe(true);
      expect((err as Error).message).not.toContain("\n");
      return err as Error;
    }
    throw new Error("expected a failure");
  };

  it("missing, not GGUF, corrupt, unknown architecture", async () => {
    expect((await failure(provider("./nope.gguf"))).message).toMatch(/model file not found: .*nope\.gguf/);
    writeFileSync(join(s.dir, "text.gguf"), "hello, not a model");
    expect((await failure(provider("./text.gguf"))).message).toMatch(/text\.gguf is not a GGUF file/);
    writeTinyGguf(join(s.dir, "cut.gguf"), { truncateTo: 200_000 });
    expect((await failure(provider("./cut.gguf"))).message).toMatch(/cut\.gguf is corrupt or incomplete: delete it and download it again/);
    writeTinyGguf(join(s.dir, "foo.gguf"), { architecture: "foo" });
    expect((await failure(provider("./foo.gguf"))).message).toMatch(/foo\.gguf has architecture 'foo'.*not support/);
  });

  it("not enough memory for the context says what to lower", async () => {
    const err = await failure(provider("./tiny.gguf", { context_size: 1_048_576, max_concurrency: 10_000 }));
    expect(err.message).toBe(
      `not enough memory to run ${tiny.path} with context_size 1048576: lower providers.tiny.context_size or providers.tiny.max_concurrency, or choose a smaller model`,
    );
  });

  it("a provider with no model says how to name one", async () => {
    const err = await failure({ type: "llama-cpp" } as ProviderConfig);
    expect(ConfigError.isInstance(err)).toBe(true);
    expect(err.message).toMatch(/providers\.tiny \(llama-cpp\) names no model/);
  });

  it("offline, an hf: model that is not here names the file to place", async () => {
    const offline = createLlamaEngines({ config: { source: "t", baseDir: s.dir, modelsDir: modelsDir(), offline: true, providers: {} }, env: {}, reporter });
    const err = await failure(provider("hf:acme/absent-GGUF:Q8_0"), offline);
    expect(err.message).toBe(
      `offline: hf:acme/absent-GGUF:Q8_0 is not in ${modelsDir()}: place its .gguf file at ${join(modelsDir(), "hf_acme_absent.Q8_0.gguf")} (from https://huggingface.co/acme/absent-GGUF), or turn offline off to download it`,
    );
  });
});

describe("an hf: model is downloaded once, with progress, then reused", () => {
  it("downloads from the Hugging Face endpoint, verifies it, and never asks again", async () => {
    const served = readFileSync(tiny.path);
    const hf = await startFakeHuggingFace((user, repo) => (user === "acme" && repo === "tiny-GGUF" ? served : undefined));
    try {
      const dir = join(s.dir, "dl");
      const make = () =>
        createLlamaEngines({
          config: { source: "t", baseDir: s.dir, modelsDir: dir, offline: false, providers: {} },
          env: { HF_ENDPOINT: `${hf.url}/` },
          reporter,
        });
      const first = make();
      const p = provider("hf:acme/tiny-GGUF:Q4_K_M");
      events.length = 0;
      await first.prepare([{ name: "tiny", p, model: "m" }]);
      expect(hf.hits[0]).toBe("GET /v2/acme/tiny-GGUF/manifests/Q4_K_M");
      expect(events[0]).toBe(`start hf:acme/tiny-GGUF:Q4_K_M ${tiny.bytes}`);
      expect(events).toContain(`progress hf:acme/tiny-GGUF:Q4_K_M ${tiny.bytes}/${tiny.bytes}`);
      expect(events.at(-1)).toBe(`done hf:acme/tiny-GGUF:Q4_K_M ${tiny.bytes}`);
      expect(existsSync(join(dir, "hf_acme_tiny.Q4_K_M.gguf"))).toBe(true);
      expect(first.identity("tiny", p, "m")).toBe(`llama-cpp ${tiny.sha256}`);
      const r = await (await v3(first, "tiny", p)).doGenerate(ask("x", { responseFormat: { type: "json", schema: auditReplySchema().jsonSchema as never } }));
      expect(AuditReply.safeParse(JSON.parse(textOf(r))).success).toBe(true);
      await first.dispose();

      const hits = hf.hits.length;
      const second = make();
      await second.prepare([{ name: "tiny", p, model: "m" }]);
      await second.create("tiny", p, "m");
      await second.dispose();
      expect(hf.hits.length).toBe(hits);
    } finally {
      await hf.close();
    }
  });

  it("a repository or quantisation that does not exist is a configuration error naming it", async () => {
    const hf = await startFakeHuggingFace(() => undefined);
    try {
      const e = createLlamaEngines({
        config: { source: "t", baseDir: s.dir, modelsDir: join(s.dir, "dl2"), offline: false, providers: {} },
        env: { HF_ENDPOINT: hf.url },
        reporter,
      });
      const err = await e.prepare([{ name: "tiny", p: provider("hf:acme/nope-GGUF:Q4_K_M"), model: "m" }]).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(ConfigError.isInstance(err)).toBe(true);
      expect((err as Error).message).toMatch(/^hf:acme\/nope-GGUF:Q4_K_M was not found on Hugging Face/);
    } finally {
      await hf.close();
    }
  });
});
