import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMBEDDED_MODELS } from "../../src/config/defaults.js";
import { dissent, scratch } from "../support/cli.js";
import { closedPort, errorLine, parseJsonOut } from "../support/e2e.js";
import { TINY_CHAT, writeTinyGguf } from "../support/tiny-gguf.js";
import { startFakeHuggingFace, startFakeOllama } from "../engines/support.js";

// With no config at all (docs/local-engine.md): Ollama when it answers, else an API key that is set (OpenAI,
// then Anthropic), else the embedded engine's pair — announced, with sizes, before it is downloaded.
// Ollama's address and the Hugging Face endpoint point at servers the tests start.
let s: ReturnType<typeof scratch>;
let nobody: string;
beforeAll(async () => {
  s = scratch("dissent-noconfig-");
  nobody = `http://127.0.0.1:${await closedPort()}`;
});
afterAll(() => s.cleanup());

const run = (args: string[], env: Record<string, string>, timeoutMs = 60_000) =>
  dissent(args, { cwd: s.dir, env: { DISSENT_HOME: join(s.dir, "home"), ...env }, timeoutMs });

describe("no config: the resolution order", () => {
  it("Ollama answering: its own models, drafting and judging on two families", async () => {
    const ollama = await startFakeOllama({
      models: [
        { name: "qwen3:8b", family: "qwen3" },
        { name: "gemma3:4b", family: "gemma3" },
      ],
    });
    try {
      const out = parseJsonOut(
        await run(["run", "--audit", "--json", "What is 2+2?"], { DISSENT_OLLAMA_URL: ollama.url, OPENAI_API_KEY: "sk-not-used-here-0000" }),
      );
      expect(out.run.calls.map((c) => `${c.role} ${c.provider}:${c.model}`)).toEqual(["executor ollama:qwen3:8b", "challenger ollama:gemma3:4b"]);
      expect(out.audit_meta.challenger_status).toBe("ok");
      expect(ollama.chats.map((c) => c.model)).toEqual(["qwen3:8b", "gemma3:4b"]);
      expect(ollama.hits).toContain("GET /api/tags");
    } finally {
      await ollama.close();
    }
  });

  it("no Ollama: OPENAI_API_KEY, then ANTHROPIC_API_KEY (the routes, read back by --replay without a call)", async () => {
    const openai = await run(["run", "--replay", "q"], {
      DISSENT_OLLAMA_URL: nobody,
      OPENAI_API_KEY: "sk-test-0000000000",
      ANTHROPIC_API_KEY: "ant-test-00000000",
    });
    expect(openai.code).toBe(1);
    expect(errorLine(openai)).toBe("dissent: error: --replay: no cached reply for role 'executor' (openai:gpt-4.1-mini); run once without --replay");
    const anthropic = await run(["run", "--replay", "q"], { DISSENT_OLLAMA_URL: nobody, ANTHROPIC_API_KEY: "ant-test-00000000" });
    expect(errorLine(anthropic)).toBe("dissent: error: --replay: no cached reply for role 'executor' (anthropic:claude-haiku-4-5); run once without --replay");
  });

  it("nothing at all, offline: the embedded engine names both files to place and their folder, exit 1 (no config of the user's is wrong), downloading nothing", async () => {
    const r = await run(["run", "--audit", "q"], { DISSENT_OLLAMA_URL: nobody, DISSENT_OFFLINE: "1" });
    expect(r.code).toBe(1);
    const dir = join(s.dir, ".cache", "dissent", "models");
    expect(errorLine(r)).toBe(
      `dissent: error: offline: 2 models are not in ${dir}: place ${EMBEDDED_MODELS.executor.ref} as hf_Qwen_Qwen2.5-1.5B-Instruct.Q4_K_M.gguf (from https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF) and ${EMBEDDED_MODELS.challenger.ref} as hf_bartowski_Llama-3.2-3B-Instruct.Q4_K_M.gguf (from https://huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF) in that folder, or turn offline off to download them`,
    );
  });

  it("nothing at all: the embedded pair is announced with its sizes, downloaded once, and runs the audit", async () => {
    // The default download, faked: both default references resolve to a tiny GGUF.
    const bytes = readFileSync(writeTinyGguf(join(s.dir, "tiny.gguf"), TINY_CHAT).path);
    const hf = await startFakeHuggingFace((user) => (user === "Qwen" || user === "bartowski" ? bytes : undefined));
    const env = { DISSENT_OLLAMA_URL: nobody, HF_ENDPOINT: hf.url, DISSENT_LLAMA_THREADS: "1" };
    try {
      const first = await run(["run", "--audit", "--json", "What is 2+2?"], env);
      const out = parseJsonOut(first);
      expect(out.audit_meta.challenger_status).toBe("ok");
      expect(out.run.calls.map((c) => `${c.role} ${c.provider}:${c.model}`)).toEqual([
        "executor drafter:qwen2.5-1.5b-instruct",
        "challenger judge:llama-3.2-3b-instruct",
      ]);
      const lines = first.stderr.split("\n");
      expect(lines[0]).toBe(
        `dissent: no config file, no Ollama at ${nobody} and neither OPENAI_API_KEY nor ANTHROPIC_API_KEY set: using the embedded engine (\`dissent init\` writes a config to change this)`,
      );
      expect(lines[1]).toBe(
        `dissent: downloading 2 models once into ${join(s.dir, ".cache", "dissent", "models")} (~3.1 GB in all): Qwen2.5-1.5B-Instruct Q4_K_M for the executor and producers (~1.1 GB); Llama-3.2-3B-Instruct Q4_K_M for the challenger and critics (~2.0 GB)`,
      );
      expect(lines[2]).toMatch(/^dissent: downloading hf:Qwen\/Qwen2\.5-1\.5B-Instruct-GGUF:Q4_K_M \(470 KB\) into /);
      expect(hf.hits.filter((h) => h.includes("/manifests/"))).toEqual([
        "GET /v2/Qwen/Qwen2.5-1.5B-Instruct-GGUF/manifests/Q4_K_M",
        "GET /v2/bartowski/Llama-3.2-3B-Instruct-GGUF/manifests/Q4_K_M",
      ]);

      const asked = hf.hits.length;
      const second = await run(["run", "--audit", "--json", "Another question?"], env);
      expect(parseJsonOut(second).audit_meta.challenger_status).toBe("ok");
      expect(second.stderr).toBe("");
      expect(hf.hits.length).toBe(asked);
    } finally {
      await hf.close();
    }
  }, 90_000);
});
