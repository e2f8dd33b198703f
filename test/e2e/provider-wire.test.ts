import { afterEach, describe, expect, it } from "vitest";
import { dissent, scratch, type CliResult } from "../support/cli.js";
import { errorLine } from "../support/e2e.js";
import { anthropicError, anthropicJson } from "../support/wire/anthropic.js";
import { mistralPartsSse, OLLAMA_MODEL_NOT_FOUND, PLAIN_TEXT_ERROR, VLLM_MODEL_NOT_FOUND } from "../support/wire/local-servers.js";
import { openaiJson, openaiSse, TEMPERATURE_REJECTED } from "../support/wire/openai.js";
import { startWireServer, type WireReply, type WireRequest, type WireServer } from "../support/wire/server.js";

// `dissent run` against servers replaying each provider's own bytes (test/support/wire): stdout
// carries dissent's output and nothing else on every provider, the AI SDK's warnings become
// `dissent: warning:` lines on stderr, and a server's own error text reaches the one-line error.

const DRAFT = "Paris is the capital of France.";
const PASS = '{"concerns": [], "verdict": "pass"}';
const KEYS = { OPENAI_API_KEY: "sk-test-openai-0123456789", ANTHROPIC_API_KEY: "sk-ant-test-0123456789" };

let server: WireServer | undefined;
let dir: ReturnType<typeof scratch> | undefined;
afterEach(async () => {
  await server?.close();
  dir?.cleanup();
  server = undefined;
  dir = undefined;
});

/** Starts a server and a config routing executor and challenger to it; runs `dissent ARGS` there. */
async function setup(provider: string, executor: string, challenger: string, handler: (req: WireRequest, i: number) => WireReply) {
  server = await startWireServer(handler);
  dir = scratch("dissent-wire-");
  const url = server.url;
  dir.write(
    "dissent.config.yaml",
    [
      "providers:",
      `  p: { ${provider}, base_url: "${url}" }`,
      "routes:",
      `  executor: { primary: "p:${executor}" }`,
      `  challenger: { primary: "p:${challenger}" }`,
      "retry_backoff_ms: 1",
      "",
    ].join("\n"),
  );
  const home = `${dir.dir}/home`;
  const cwd = dir.dir;
  return (args: string[]): Promise<CliResult> => dissent(args, { cwd, env: { DISSENT_HOME: home, ...KEYS } });
}

/** stdout of a `--json` run is exactly one JSON document and one newline. */
function oneJson(r: CliResult): { final_output: string; audit_meta: { challenger_status: string; audit_verdict: string | null } } {
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout.endsWith("}\n")).toBe(true);
  expect(r.stdout.trim().split("\n")).toHaveLength(1);
  return JSON.parse(r.stdout) as ReturnType<typeof oneJson>;
}

const warnings = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("dissent: warning: "));

describe("stdout carries only dissent's output, on every provider", () => {
  it("anthropic: seed is unsupported on every call; --json is one JSON document and the warning is one stderr line per model", async () => {
    const run = await setup("type: anthropic", "claude-haiku-4-5", "claude-sonnet-4-5", (req) => {
      if (req.path !== "/v1/messages") return anthropicError(404, "not_found_error", `no route ${req.path}`);
      const model = String(req.body?.model);
      return model === "claude-sonnet-4-5"
        ? anthropicJson("claude-sonnet-4-5-20250929", `Here is my audit.\n\n${PASS}`)
        : anthropicJson("claude-haiku-4-5-20251001", DRAFT, { thinking: "The user asks for a capital. Paris." });
    });
    const r = await run(["run", "--audit", "--json", "What is the capital of France?"]);
    const out = oneJson(r);
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta.challenger_status).toBe("ok");
    expect(r.stdout).not.toContain("AI SDK");
    expect(r.stderr).not.toContain("AI SDK Warning System");
    expect(warnings(r.stderr)).toEqual([
      `dissent: warning: provider 'p' (claude-haiku-4-5) does not support "seed", so the AI SDK left it out`,
      `dissent: warning: provider 'p' (claude-sonnet-4-5) does not support "seed", so the AI SDK left it out`,
    ]);

    // Plain output: the final output and one newline, nothing else; the second run is cached (no calls, no warnings).
    const plain = await run(["run", "--audit", "--no-cache", "What is the capital of France?"]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe(`${DRAFT}\n`);
    const cached = await run(["run", "--audit", "What is the capital of France?"]);
    expect(cached.stdout).toBe(`${DRAFT}\n`);
    expect(cached.stderr).toBe("");
  });

  it("openai reasoning model (o3-mini) that rejects temperature: the SDK leaves it out, says so on stderr, and --json stays one document", async () => {
    const run = await setup("type: openai", "o3-mini", "gpt-4.1", (req) => {
      if (req.path !== "/v1/chat/completions") return TEMPERATURE_REJECTED;
      if (req.body?.model === "o3-mini" && req.body.temperature !== undefined) return TEMPERATURE_REJECTED;
      return req.body?.model === "gpt-4.1"
        ? openaiJson("gpt-4.1-2025-04-14", PASS)
        : openaiJson("o3-mini-2025-01-31", DRAFT, { prompt: 40, completion: 210, reasoning: 192 });
    });
    const r = await run(["run", "--audit", "--json", "What is the capital of France?"]);
    const out = oneJson(r);
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta.audit_verdict).toBe("pass");
    expect(r.stdout).not.toContain("AI SDK");
    const lines = warnings(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^dissent: warning: provider 'p' \(o3-mini\) does not support "temperature", so the AI SDK left it out/);
    expect(server?.requests.find((q) => q.body?.model === "o3-mini")?.body?.temperature).toBeUndefined();
  });

  it("openai-compatible answering SSE to a plain request: one JSON document, no warnings", async () => {
    const run = await setup("type: openai-compatible", "exec", "chal", (req) =>
      req.body?.model === "chal" ? openaiSse("chal", PASS) : openaiSse("exec", DRAFT),
    );
    const r = await run(["run", "--audit", "--json", "What is the capital of France?"]);
    expect(oneJson(r).final_output).toBe(DRAFT);
    expect(r.stderr).toBe("");
  });
});

describe("a stream whose delta.content is a list of parts (Mistral's thinking models)", () => {
  it("thinking parts are reasoning, never the answer: the draft is the text parts alone", async () => {
    const run = await setup("type: openai-compatible", "magistral-medium-2506", "chal", (req) =>
      req.body?.model === "chal"
        ? openaiSse("chal", PASS)
        : mistralPartsSse("magistral-medium-2506", ["The user wants ", "the capital. ", "It is Paris."], ["Paris is the capital ", "of France."]),
    );
    const r = await run(["run", "--audit", "--json", "What is the capital of France?"]);
    const out = oneJson(r);
    expect(out.final_output).toBe(DRAFT);
    expect(r.stdout).not.toContain("[object Object]");
    expect(r.stdout).not.toContain("It is Paris.");
  });

  it("a reply that is all thinking is an empty reply (a failed call), never a draft", async () => {
    const run = await setup("type: openai-compatible", "magistral-medium-2506", "chal", () =>
      mistralPartsSse("magistral-medium-2506", ["Thinking about it ", "at length"], []),
    );
    const r = await run(["run", "What is the capital of France?"]);
    expect(r.code).toBe(1);
    expect(errorLine(r)).toMatch(/replied with nothing/);
    expect(r.stdout).toBe("");
  });
});

describe("the server's own error text reaches the one-line error", () => {
  const cases: [string, WireReply, string][] = [
    ["Ollama", OLLAMA_MODEL_NOT_FOUND, "model 'qwen3:8b' not found (404 Not Found)"],
    ["vLLM", VLLM_MODEL_NOT_FOUND, "The model `qwen3-8b` does not exist. (404 Not Found)"],
    ["a plain-text body", PLAIN_TEXT_ERROR, "Invalid request: context length of 4096 tokens exceeded (prompt has 5210 tokens) (400 Bad Request)"],
  ];
  for (const [who, reply, text] of cases) {
    it(`${who}: ${text}`, async () => {
      const run = await setup("type: openai-compatible", "qwen3:8b", "chal", () => reply);
      const r = await run(["run", "--json", "What is the capital of France?"]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(errorLine(r)).toBe(`dissent: error: provider 'p' (qwen3:8b) failed: ${text}`);
    });
  }

  it("a huge body is cut to a bounded line, and a key it echoes is redacted", async () => {
    const body = `upstream said: bad key ${KEYS.OPENAI_API_KEY} ${"x".repeat(1_000_000)}`;
    const run = await setup("type: openai-compatible, api_key_env: OPENAI_API_KEY", "m", "chal", () => ({
      status: 400,
      headers: { "content-type": "text/plain" },
      body,
    }));
    const r = await run(["run", "What is the capital of France?"]);
    const line = errorLine(r);
    expect(line).toContain("upstream said: bad key [redacted]");
    expect(line).not.toContain(KEYS.OPENAI_API_KEY);
    expect(line.length).toBeLessThan(500);
  });
});
