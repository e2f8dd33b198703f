import { describe, expect, it } from "vitest";
import { defaultsFor, detect, EMBEDDED_MODELS, familyOf, JUDGE_ROUTES, parseTags, pickOllamaModels, probeOllama } from "../../src/config/defaults.js";
import { buildConfig } from "../../src/config/load.js";
import { routeSpecs } from "../../src/models/router.js";
import { STAGES } from "../../src/pipeline/stages.js";
import { startFakeOllama } from "./support.js";
import { closedPort } from "../support/e2e.js";

describe("the no-config resolution order (docs/local-engine.md)", () => {
  const ollama = [{ name: "qwen3:8b", family: "qwen3" }];
  it("Ollama when it answers, else OpenAI's key, else Anthropic's, else the embedded engine", () => {
    expect(detect({ OPENAI_API_KEY: "sk-x", ANTHROPIC_API_KEY: "a" }, ollama).kind).toBe("ollama");
    expect(detect({ OPENAI_API_KEY: "sk-x", ANTHROPIC_API_KEY: "a" }, undefined).kind).toBe("openai");
    expect(detect({ ANTHROPIC_API_KEY: "a" }, undefined).kind).toBe("anthropic");
    expect(detect({}, undefined).kind).toBe("embedded");
    expect(detect({ DISSENT_OLLAMA_URL: "http://127.0.0.1:9/" }, [])).toEqual({ kind: "ollama", url: "http://127.0.0.1:9", models: [] });
  });

  it("the embedded default is two families: a small Qwen drafts, a Llama judges", () => {
    const { providers, routes } = defaultsFor({ kind: "embedded" });
    expect(providers).toEqual({
      drafter: { type: "llama-cpp", model: EMBEDDED_MODELS.executor.ref },
      judge: { type: "llama-cpp", model: EMBEDDED_MODELS.challenger.ref },
    });
    expect(routes.default?.primary).toBe(`drafter:${EMBEDDED_MODELS.executor.label}`);
    expect(routes.challenger?.primary).toBe(`judge:${EMBEDDED_MODELS.challenger.label}`);
    expect(EMBEDDED_MODELS.executor.family).not.toBe(EMBEDDED_MODELS.challenger.family);
  });

  it("every pipeline critic and the reviewer go to the judging model; producers and the gate to the drafting one", () => {
    const config = buildConfig(defaultsFor({ kind: "openai", keyEnv: "OPENAI_API_KEY" }), { source: "defaults", baseDir: "/", env: {}, cwd: "/" });
    const target = (role: string) => {
      const s = routeSpecs(config, role)[0];
      return s ? `${s.provider}:${s.model}` : "";
    };
    const judge = "openai:gpt-4.1";
    const draft = "openai:gpt-4.1-mini";
    for (const stage of STAGES) {
      expect(target(stage.producer)).toBe(draft);
      for (const critic of stage.critics) expect(target(critic), critic).toBe(judge);
    }
    expect(target("challenger")).toBe(judge);
    expect(target("plan_reviewer")).toBe(judge);
    expect(target("executor")).toBe(draft);
    expect(target("complexity_gate")).toBe(draft);
    expect(JUDGE_ROUTES).toContain("challenger");
  });
});

describe("Ollama's models", () => {
  it("prefers qwen3:8b and llama3.1:8b, else two families of what is pulled, else the documented pair", () => {
    expect(
      pickOllamaModels([
        { name: "llama3.1:8b", family: "llama" },
        { name: "qwen3:8b", family: "qwen3" },
      ]),
    ).toEqual({ executor: "qwen3:8b", challenger: "llama3.1:8b" });
    expect(
      pickOllamaModels([
        { name: "mistral:7b", family: "mistral" },
        { name: "nomic-embed-text", family: "nomic-bert" },
        { name: "qwen2.5:7b", family: "qwen2" },
      ]),
    ).toEqual({
      executor: "mistral:7b",
      challenger: "qwen2.5:7b",
    });
    expect(
      pickOllamaModels([
        { name: "qwen3:4b", family: "qwen3" },
        { name: "qwen3:8b", family: "qwen3" },
      ]),
    ).toEqual({ executor: "qwen3:8b", challenger: "qwen3:8b" });
    expect(pickOllamaModels([])).toEqual({ executor: "qwen3:8b", challenger: "llama3.1:8b" });
    expect(familyOf({ name: "llama3.1:8b" })).toBe("llama");
    expect(familyOf({ name: "x", family: "gemma3" })).toBe("gemma");
  });

  it("reads /api/tags, and answers undefined when nothing (or not Ollama) answers", async () => {
    const server = await startFakeOllama({ models: [{ name: "qwen3:8b", family: "qwen3" }] });
    try {
      // A generous timeout: this checks what is read, not how fast a loaded machine answers.
      expect(await probeOllama(server.url, 10_000)).toEqual([{ name: "qwen3:8b", family: "qwen3", size: 1000 }]);
    } finally {
      await server.close();
    }
    expect(await probeOllama(`http://127.0.0.1:${await closedPort()}`)).toBeUndefined();
    expect(parseTags("<html>")).toBeUndefined();
    expect(parseTags('{"data": []}')).toBeUndefined();
  });
});
