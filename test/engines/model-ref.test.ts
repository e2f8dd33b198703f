import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isModelRef, parseModelRef } from "../../src/engines/llama-cpp/index.js";
import { toGrammarSchema } from "../../src/engines/llama-cpp/json-schema.js";
import { auditReplySchema } from "../../src/gate/challenge.js";

describe("model references (docs/local-engine.md)", () => {
  it("reads hf: references with a quant, without one, and naming a file", () => {
    expect(parseModelRef("hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF:q4_k_m", "/x")).toEqual({
      kind: "hf",
      uri: "hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M",
      user: "Qwen",
      repo: "Qwen2.5-1.5B-Instruct-GGUF",
      quant: "Q4_K_M",
      localName: "hf_Qwen_Qwen2.5-1.5B-Instruct.Q4_K_M.gguf",
    });
    expect(parseModelRef("hf:acme/tiny-GGUF", "/x")).toMatchObject({ uri: "hf:acme/tiny-GGUF:Q4_K_M", localName: "hf_acme_tiny.Q4_K_M.gguf" });
    expect(parseModelRef("hf:acme/tiny/sub/model-f16.gguf", "/x")).toMatchObject({
      uri: "hf:acme/tiny/sub/model-f16.gguf",
      file: "sub/model-f16.gguf",
      localName: "hf_acme_tiny_model-f16.gguf",
    });
  });

  it("reads file paths relative to the config's folder, ~ as the home folder", () => {
    expect(parseModelRef("models/a.gguf", "/conf")).toEqual({ kind: "file", path: "/conf/models/a.gguf" });
    expect(parseModelRef("/abs/b.gguf", "/conf")).toEqual({ kind: "file", path: "/abs/b.gguf" });
    expect(parseModelRef("~/m/c.gguf", "/conf")).toEqual({ kind: "file", path: join(homedir(), "m/c.gguf") });
  });

  it("refuses what cannot be a reference, in words", () => {
    expect(parseModelRef("hf:onlyuser", "/x")).toMatchObject({ error: expect.stringMatching(/hf:<user>\/<repo>:<quant>/) });
    expect(parseModelRef("hf:a/b/readme.md", "/x")).toMatchObject({ error: expect.stringMatching(/not a \.gguf file/) });
  });

  it("tells a model reference from a route label", () => {
    expect(isModelRef("hf:a/b:Q8_0")).toBe(true);
    expect(isModelRef("./m.gguf")).toBe(true);
    expect(isModelRef("qwen2.5-1.5b-instruct")).toBe(false);
  });
});

describe("JSON Schema to the grammar's subset", () => {
  it("keeps the audit schema's shape: enums, nullable strings, lengths, property order", () => {
    const g = toGrammarSchema(auditReplySchema().jsonSchema);
    expect(g).toEqual({
      type: "object",
      additionalProperties: false,
      properties: {
        concerns: {
          type: "array",
          items: {
            type: "object",
            additionalProperties: false,
            properties: {
              evidence: { type: "string" },
              category: { enum: expect.arrayContaining(["policy_compliance", "factual_risk"]) },
              severity: { enum: ["critical", "high", "medium", "low"] },
              concern: { type: "string", minLength: 1 },
              suggested_fix: { type: ["string", "null"] },
            },
          },
        },
        verdict: { enum: ["pass", "needs_work"] },
      },
    });
    expect(Object.keys((g.properties as Record<string, unknown>) ?? {})).toEqual(["concerns", "verdict"]);
  });

  it("inlines $refs, turns anyOf into oneOf, splits constrained type lists, and reads {} as any value", () => {
    const g = toGrammarSchema({
      $defs: { Item: { type: "string", maxLength: 5 } },
      type: "object",
      properties: {
        a: { $ref: "#/$defs/Item" },
        b: { anyOf: [{ type: "number" }, { type: "null" }] },
        c: { type: ["string", "integer"], minLength: 2 },
        d: {},
      },
    });
    const props = g.properties as Record<string, Record<string, unknown>>;
    expect(props.a).toEqual({ type: "string", maxLength: 5 });
    expect(props.b).toEqual({ oneOf: [{ type: "number" }, { type: "null" }] });
    expect(props.c).toEqual({ oneOf: [{ type: "string", minLength: 2 }, { type: "integer" }] });
    expect(props.d).toHaveProperty("oneOf");
  });
});

describe("reasoning is off for structured roles (chat-wrapper settings)", () => {
  it("a Qwen 3 answer starts after an empty thought, so the grammar applies to the JSON", async () => {
    const { resolveChatWrapper } = await import("node-llama-cpp");
    const { REASONING_OFF } = await import("../../src/engines/llama-cpp/loaded-model.js");
    const history = [
      { type: "system" as const, text: "s" },
      { type: "user" as const, text: "u" },
      { type: "model" as const, response: [] },
    ];
    const off = resolveChatWrapper({ type: "qwen", customWrapperSettings: { qwen: REASONING_OFF.qwen } });
    expect(off?.generateContextState({ chatHistory: history }).contextText.toString().endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toBe(true);
    const auto = resolveChatWrapper({ type: "qwen" });
    expect(auto?.generateContextState({ chatHistory: history }).contextText.toString().endsWith("<|im_start|>assistant\n")).toBe(true);
  });
});

describe("download progress on stderr", () => {
  it("on a terminal: one line rewritten in place, with a bar; in a log: a start and an end line only", async () => {
    const { streamReporter, formatBytes } = await import("../../src/engines/llama-cpp/progress.js");
    let clock = 0;
    const tty: string[] = [];
    const r = streamReporter({ write: (t: string) => tty.push(t), isTTY: true, columns: 120 }, () => clock);
    r.start("hf:a/b:Q4_K_M", 2_000_000, "/models");
    clock = 1000;
    r.progress("hf:a/b:Q4_K_M", 1_000_000, 2_000_000);
    clock = 1050; // throttled: not redrawn within 100 ms
    r.progress("hf:a/b:Q4_K_M", 1_100_000, 2_000_000);
    r.done("hf:a/b:Q4_K_M", "/models/x.gguf", 2_000_000);
    expect(tty).toEqual([
      "dissent: downloading hf:a/b:Q4_K_M (2.0 MB) into /models\n",
      "\r\u001b[2Kdissent: hf:a/b:Q4_K_M [##########..........] 50% 1.0 MB / 2.0 MB (1.0 MB/s)",
      "\r\u001b[2K",
      "dissent: downloaded hf:a/b:Q4_K_M (2.0 MB) to /models/x.gguf\n",
    ]);
    const log: string[] = [];
    const l = streamReporter({ write: (t: string) => log.push(t) });
    l.start("m", 10, "/d");
    l.progress("m", 5, 10);
    l.done("m", "/d/m", 10);
    expect(log).toEqual(["dissent: downloading m (10 B) into /d\n", "dissent: downloaded m (10 B) to /d/m\n"]);
    expect([formatBytes(469_984), formatBytes(1_120_000_000), formatBytes(999)]).toEqual(["470 KB", "1.1 GB", "999 B"]);
  });
});
