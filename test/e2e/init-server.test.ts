import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/load.js";
import { dissent, scratch } from "../support/cli.js";
import { closedPort, errorLine } from "../support/e2e.js";
import { startFakeOllama, type FakeOllama } from "../engines/support.js";

// `dissent init --base-url URL [--model M]` (docs/local-engine.md#an-openai-compatible-server) against
// OpenAI-compatible servers the tests start, shaped like vLLM (Hugging Face ids, no Ollama listing):
// one serving two model families, one serving one, one that wants a key, and a port nobody answers.
let s: ReturnType<typeof scratch>;
let two: FakeOllama;
let one: FakeOllama;
let keyed: FakeOllama;
let nobody: string;
const QWEN = "Qwen/Qwen2.5-7B-Instruct";
const LLAMA = "meta-llama/Llama-3.1-8B-Instruct";
beforeAll(async () => {
  s = scratch("dissent-init-server-");
  two = await startFakeOllama({
    models: [{ name: QWEN }, { name: "BAAI/bge-m3-embedding" }, { name: LLAMA }, { name: "Qwen/Qwen2.5-14B-Instruct" }],
    tags: false,
  });
  one = await startFakeOllama({ models: [{ name: QWEN }], tags: false });
  keyed = await startFakeOllama({ models: [{ name: QWEN }], tags: false, key: "gw-secret-000" });
  nobody = `http://127.0.0.1:${await closedPort()}`;
});
afterAll(async () => {
  await Promise.all([two.close(), one.close(), keyed.close()]);
  s.cleanup();
});

let n = 0;
/** `dissent init …` in a fresh folder, with no Ollama, no key and (in the repo) the engine installed: only --base-url decides. */
async function init(args: string[]) {
  const dir = join(s.dir, `d${++n}`);
  mkdirSync(dir, { recursive: true });
  const r = await dissent(["init", ...args], { cwd: dir, env: { DISSENT_HOME: join(dir, "home"), DISSENT_OLLAMA_URL: nobody }, timeoutMs: 60_000 });
  const file = join(dir, "dissent.config.yaml");
  return { ...r, dir, file, text: existsSync(file) ? readFileSync(file, "utf8") : undefined };
}

describe("dissent init --base-url", () => {
  it("lists the server's models, drafts with one family and judges with another, and the config passes doctor", async () => {
    const r = await init(["--base-url", `${two.url}/v1/`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      `wrote dissent.config.yaml: the OpenAI-compatible server at ${two.url}/v1 (3 models served): drafting ${QWEN}, judging ${LLAMA}\ncheck it with: dissent doctor\n`,
    );
    expect(r.text).toContain(`local: { type: openai-compatible, base_url: "${two.url}/v1" }`);
    const file = parseConfigText(r.text ?? "", "dissent.config.yaml");
    expect(file.routes?.default?.primary).toBe(`local:${QWEN}`);
    expect(file.routes?.challenger?.primary).toBe(`local:${LLAMA}`);
    expect(file.routes?.plan_reviewer?.primary).toBe(`local:${LLAMA}`);
    const doctor = await dissent(["doctor", "--json"], { cwd: r.dir, env: { DISSENT_HOME: join(r.dir, "home") }, timeoutMs: 60_000 });
    expect(doctor.code, doctor.stdout).toBe(0);
    expect((JSON.parse(doctor.stdout) as { ok: boolean }).ok).toBe(true);
  });

  it("a URL without /v1 finds the listing under /v1 and writes that; --model picks the drafter", async () => {
    const r = await init(["--base-url", two.url, "--model", LLAMA, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      found: "server",
      providers: { local: { type: "openai-compatible", base_url: `${two.url}/v1` } },
      routes: { default: { primary: `local:${LLAMA}` }, challenger: { primary: `local:${QWEN}` } },
      server: { url: `${two.url}/v1`, reached: true, models: [QWEN, LLAMA, "Qwen/Qwen2.5-14B-Instruct"] },
    });
  });

  it("one model family served: written, with the same-model warning on stdout and in the file", async () => {
    const r = await init(["--base-url", `${one.url}/v1`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`warning: ${QWEN} drafts and judges itself (the server serves one model family): a model reviewing itself is weak dissent\n`);
    expect(r.text).toContain(`# It serves one model family: ${QWEN} drafts and judges itself, which is weak dissent.`);
    expect(parseConfigText(r.text ?? "", "x").routes?.challenger?.primary).toBe(`local:${QWEN}`);
  });

  it("a model the server does not serve, a server that wants a key, nobody listening without --model: one line each, exit 2, nothing written", async () => {
    const missing = await init(["--base-url", `${two.url}/v1`, "--model", "qwen3:8b"]);
    expect(missing.code).toBe(2);
    expect(errorLine(missing)).toBe(
      `dissent: error: --model qwen3:8b: ${two.url}/v1 does not serve it (it serves ${QWEN}, BAAI/bge-m3-embedding, ${LLAMA}, Qwen/Qwen2.5-14B-Instruct)`,
    );
    const key = await init(["--base-url", `${keyed.url}/v1`]);
    expect(key.code).toBe(2);
    expect(errorLine(key)).toBe(
      `dissent: error: --base-url ${keyed.url}/v1: could not list its models (it answered 401: it needs a key (set api_key_env in the file)): start the server, or name its model with --model M`,
    );
    const down = await init(["--base-url", `${nobody}/v1`]);
    expect(down.code).toBe(2);
    expect(errorLine(down)).toMatch(
      new RegExp(
        `^dissent: error: --base-url ${nobody}/v1: could not list its models \\(.*ECONNREFUSED.*\\): start the server, or name its model with --model M$`,
      ),
    );
    for (const r of [missing, key, down]) expect(r.text).toBeUndefined();
  });

  it("nobody listening, with --model: written for that model, saying it was not checked", async () => {
    const r = await init(["--base-url", `${nobody}/v1`, "--model", "qwen3:8b"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^wrote dissent.config.yaml: the OpenAI-compatible server at ${nobody}/v1 \\(not reached: .*; the model is not checked\\)`),
    );
    expect(r.stdout).toContain("check it with: dissent doctor (once the server is up)\n");
    expect(parseConfigText(r.text ?? "", "x").routes?.default?.primary).toBe("local:qwen3:8b");
  });

  it("a URL that is not http(s), holds a password or a query, and --model alone: refused before anything is asked", async () => {
    const cases: [string[], string][] = [
      [["--base-url", "localhost:8000"], "dissent: error: --base-url must be an http or https URL, not localhost:"],
      [["--base-url", "not a url"], "dissent: error: --base-url must be the URL of an OpenAI-compatible server (http://host:port/v1), not 'not a url'"],
      [
        ["--base-url", `http://me:hunter2@127.0.0.1:9/v1`],
        "dissent: error: --base-url must not hold a user or password: the config names the variable holding a key (api_key_env), never the key",
      ],
      [
        ["--base-url", `${two.url}/v1?key=1`],
        "dissent: error: --base-url must not have a query or a fragment: give the server's base URL (http://host:port/v1)",
      ],
      [["--model", "qwen3:8b"], "dissent: error: --model needs --base-url: it names a model of that server (for Ollama and the APIs, init picks the models)"],
      [
        ["--base-url", `${two.url}/v1`, "--model", "two words"],
        "dissent: error: --model must be the server's name for a model (one word, at most 200 characters), not 'two words'",
      ],
    ];
    const before = two.chats.length;
    for (const [args, line] of cases) {
      const r = await init(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(errorLine(r)).toBe(line);
      expect(r.text).toBeUndefined();
      expect(r.stderr).not.toContain("hunter2");
    }
    expect(two.chats.length).toBe(before);
  });
});
