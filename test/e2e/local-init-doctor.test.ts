import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/load.js";
import { dissent, scratch } from "../support/cli.js";
import { closedPort, errorLine } from "../support/e2e.js";
import { TINY_CHAT, writeTinyGguf } from "../support/tiny-gguf.js";
import { startFakeOllama, type FakeOllama } from "../engines/support.js";

// `dissent init` and `dissent doctor` (docs/local-engine.md) against servers the tests start: an
// OpenAI-compatible one that answers (with Ollama's /api/tags), a port that refuses connections, and a
// provider whose key is not set.
let s: ReturnType<typeof scratch>;
let ollama: FakeOllama;
let nobody: string;
beforeAll(async () => {
  s = scratch("dissent-init-");
  ollama = await startFakeOllama({
    models: [
      { name: "qwen3:8b", family: "qwen3" },
      { name: "llama3.1:8b", family: "llama" },
      { name: "nomic-embed-text", family: "nomic-bert" },
    ],
  });
  nobody = `http://127.0.0.1:${await closedPort()}`;
});
afterAll(async () => {
  await ollama.close();
  s.cleanup();
});

const cli = (dir: string, args: string[], env: Record<string, string> = {}) =>
  dissent(args, { cwd: dir, env: { DISSENT_HOME: join(dir, "home"), ...env }, timeoutMs: 60_000 });
const sub = (name: string) => {
  const dir = join(s.dir, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};

interface DoctorJson {
  config: string;
  ok: boolean;
  routes: { route: string; which: string; target: string; ok: boolean; detail: string }[];
}

describe("dissent init", () => {
  it("finds Ollama and writes a commented config of its models, which loads; never overwrites without --force", async () => {
    const dir = sub("with-ollama");
    const r = await cli(dir, ["init"], { DISSENT_OLLAMA_URL: ollama.url });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `wrote dissent.config.yaml: Ollama at ${ollama.url} (3 models pulled): drafting qwen3:8b, judging llama3.1:8b\ncheck it with: dissent doctor\n`,
    );
    const text = readFileSync(join(dir, "dissent.config.yaml"), "utf8");
    expect(text).toMatch(/^# dissent\.config\.yaml, written by `dissent init`/);
    expect(text).toContain(`ollama: { type: openai-compatible, base_url: "${ollama.url}/v1", max_concurrency: 1 }`);
    const file = parseConfigText(text, "dissent.config.yaml");
    expect(file.routes?.default?.primary).toBe("ollama:qwen3:8b");
    expect(file.routes?.challenger?.primary).toBe("ollama:llama3.1:8b");
    expect(file.routes?.plan?.primary).toBe("ollama:llama3.1:8b");

    const again = await cli(dir, ["init"], { DISSENT_OLLAMA_URL: ollama.url });
    expect(again.code).toBe(2);
    expect(errorLine(again)).toBe("dissent: error: dissent.config.yaml already exists: dissent init --force replaces it");
    const forced = await cli(dir, ["init", "--force", "--json"], { DISSENT_OLLAMA_URL: nobody, OPENAI_API_KEY: "sk-test-0000000000" });
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({
      found: "openai",
      providers: { openai: { type: "openai" } },
      routes: { default: { primary: "openai:gpt-4.1-mini" } },
    });
    expect(readFileSync(join(dir, "dissent.config.yaml"), "utf8")).not.toContain("sk-test");
  });

  it("with nothing found, the embedded engine's pair", async () => {
    const dir = sub("embedded");
    const r = await cli(dir, ["init", "--json"], { DISSENT_OLLAMA_URL: nobody });
    expect(JSON.parse(r.stdout)).toMatchObject({ found: "embedded", providers: { drafter: { type: "llama-cpp" }, judge: { type: "llama-cpp" } } });
    const text = readFileSync(join(dir, "dissent.config.yaml"), "utf8");
    expect(text).toContain('drafter: { type: llama-cpp, model: "hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M" }');
    expect(text).toContain("# offline: false");
    expect(() => parseConfigText(text, "dissent.config.yaml")).not.toThrow();
  });
});

describe("dissent doctor", () => {
  it("a config init wrote for Ollama: every route ok — reachable, model present, JSON mode — exit 0", async () => {
    const dir = sub("doctor-ok");
    expect((await cli(dir, ["init"], { DISSENT_OLLAMA_URL: ollama.url })).code).toBe(0);
    const before = ollama.chats.length;
    const r = await cli(dir, ["doctor", "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as DoctorJson;
    expect(out.ok).toBe(true);
    expect(out.routes.length).toBe(11);
    expect(out.routes[0]).toEqual({
      route: "default",
      which: "primary",
      target: "ollama:qwen3:8b",
      ok: true,
      detail: "reachable · model present · JSON mode ok (json_schema)",
    });
    // One probe per distinct target, one token each, asking for JSON.
    const probes = ollama.chats.slice(before);
    expect(probes.map((c) => c.model).sort()).toEqual(["llama3.1:8b", "qwen3:8b"]);
    for (const p of probes) {
      expect(p.max_tokens ?? p.max_completion_tokens).toBe(1);
      expect(p.response_format?.type).toBe("json_schema");
    }
  });

  it("one row per route, a failing one says why: refused, no key, model missing — exit 1", async () => {
    const dir = sub("doctor-fail");
    s.write(
      "doctor-fail/dissent.config.yaml",
      [
        "providers:",
        `  good: { type: openai-compatible, base_url: "${ollama.url}/v1" }`,
        `  down: { type: openai-compatible, base_url: "${nobody}/v1" }`,
        `  keyless: { type: openai, base_url: "${ollama.url}/v1", api_key_env: DOCTOR_TEST_KEY }`,
        "routes:",
        '  default: { primary: "good:qwen3:8b" }',
        '  challenger: { primary: "down:llama3.1:8b", secondary: "good:llama3.1:8b" }',
        '  plan: { primary: "keyless:qwen3:8b" }',
        '  spec.judge: { primary: "good:mistral:7b" }',
      ].join("\n"),
    );
    const r = await cli(dir, ["doctor"]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("config: dissent.config.yaml");
    expect(lines[1]).toMatch(/^ROUTE\s+TARGET\s+STATUS\s+CHECKS$/);
    const row = (route: string) => lines.find((l) => l.startsWith(`${route} `)) ?? "";
    expect(row("default")).toMatch(/good:qwen3:8b\s+ok\s+reachable · model present · JSON mode ok \(json_schema\)$/);
    expect(row("challenger")).toMatch(new RegExp(`down:llama3\\.1:8b\\s+FAIL\\s+unreachable: ${nobody}/v1 \\(.*ECONNREFUSED.*\\)$`));
    expect(row("challenger (secondary)")).toMatch(/good:llama3\.1:8b\s+ok\s+/);
    expect(row("plan")).toMatch(/keyless:qwen3:8b\s+FAIL\s+no API key: set DOCTOR_TEST_KEY$/);
    expect(row("spec.judge")).toMatch(
      /good:mistral:7b\s+FAIL\s+reachable · model 'mistral:7b' not found at .* \(it has qwen3:8b, llama3\.1:8b, nomic-embed-text\)$/,
    );

    const json = await cli(dir, ["doctor", "--json"], { DOCTOR_TEST_KEY: "wrong-key-000000" });
    const out = JSON.parse(json.stdout) as DoctorJson;
    expect(out.ok).toBe(false);
    expect(out.routes.find((x) => x.route === "plan")).toMatchObject({
      ok: true,
      detail: "key DOCTOR_TEST_KEY set · reachable · model present · JSON mode ok (json_schema)",
    });
  });

  it("a key the server refuses is named", async () => {
    const guarded = await startFakeOllama({ models: [{ name: "m1" }], key: "right-key-0000" });
    try {
      const dir = sub("doctor-key");
      s.write(
        "doctor-key/dissent.config.yaml",
        `providers:\n  p: { type: openai-compatible, base_url: "${guarded.url}/v1", api_key_env: GUARD_KEY }\nroutes:\n  default: { primary: "p:m1" }\n`,
      );
      const r = await cli(dir, ["doctor", "--json"], { GUARD_KEY: "wrong-key-0000" });
      expect(r.code).toBe(1);
      expect((JSON.parse(r.stdout) as DoctorJson).routes[0]?.detail).toBe("key GUARD_KEY set · reachable · the key was refused (401): check GUARD_KEY");
      expect(r.stdout).not.toContain("wrong-key-0000");
    } finally {
      await guarded.close();
    }
  });

  it("llama-cpp routes: the file and a grammar-constrained one-token probe; a model not yet downloaded fails", async () => {
    const dir = sub("doctor-local");
    writeTinyGguf(join(dir, "tiny.gguf"), TINY_CHAT);
    s.write(
      "doctor-local/dissent.config.yaml",
      [
        "providers:",
        "  tiny: { type: llama-cpp, model: ./tiny.gguf, threads: 1, gpu: false }",
        "  later: { type: llama-cpp, model: hf:acme/later-GGUF:Q4_K_M }",
        "models_dir: models",
        "routes:",
        '  default: { primary: "tiny:drafter" }',
        '  challenger: { primary: "later:judge" }',
      ].join("\n"),
    );
    const r = await cli(dir, ["doctor", "--json"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as DoctorJson;
    expect(out.routes[0]).toEqual({
      route: "default",
      which: "primary",
      target: "tiny:drafter",
      ok: true,
      detail: `model file present (${join(dir, "tiny.gguf")}) · JSON mode ok (grammar)`,
    });
    expect(out.routes[1]).toMatchObject({
      ok: false,
      detail: `hf:acme/later-GGUF:Q4_K_M not downloaded yet: the first run downloads it, or place it at ${join(dir, "models", "hf_acme_later.Q4_K_M.gguf")}`,
    });
    expect(r.stderr).toBe("");
  });
});
