import { afterEach, describe, expect, it } from "vitest";
import type { CliResult } from "../support/cli.js";
import { audit, byRole, errorLine, filesUnder, parseJsonOut, world, type World } from "../support/e2e.js";

const PROMPT = "What is 2 + 2?";
const DRAFT = "2 + 2 = 4.";
const KEY_ENV = "LOCAL_API_KEY";

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

/** Asserts the key appears nowhere a user or a later reader could find it. */
function expectNoLeak(key: string, r: CliResult, home: string) {
  expect(r.stdout).not.toContain(key);
  expect(r.stderr).not.toContain(key);
  const files = filesUnder(home);
  expect(files.map((f) => f.path).some((p) => p.endsWith("dissent.db"))).toBe(true);
  for (const f of files) {
    // The sqlite db, its WAL and shared memory, read as raw bytes.
    expect(f.bytes.includes(Buffer.from(key, "utf8")), `${f.path} holds the API key`).toBe(false);
  }
}

const authFailure = (key: string) => ({
  status: 401,
  raw: JSON.stringify({
    error: {
      message: `Incorrect API key provided: ${key}. You can find your API key at https://example.test.`,
      type: "invalid_request_error",
      code: "invalid_api_key",
    },
  }),
});

describe.each([
  ["a provider-shaped key", "sk-test-SECRET123456"],
  ["a key of no known shape", "hunter2-correct-horse-battery"],
])("API keys never appear in output, logs or the cache (%s)", (_name, key) => {
  it("a successful audited run: the key is sent to the provider, and stored nowhere", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }), { apiKeyEnv: KEY_ENV });
    const r = await w.run(["run", "--audit", "--json", "--verbose", PROMPT], { env: { [KEY_ENV]: key } });
    expect(parseJsonOut(r).final_output).toBe(DRAFT);
    expect(w.server.requests[0]?.headers.authorization).toBe(`Bearer ${key}`);
    expectNoLeak(key, r, w.home);
  });

  it("the executor answering 401 with a message echoing the key: exit 1, one error line, no key", async () => {
    w = await world(byRole({ executor: authFailure(key) }), { apiKeyEnv: KEY_ENV });
    const r = await w.run(["run", PROMPT], { env: { [KEY_ENV]: key } });
    expect(r.code).toBe(1);
    const line = errorLine(r);
    expect(line).toContain("'local'");
    expect(line).toContain(KEY_ENV);
    expect(w.server.requests).toHaveLength(1);
    expectNoLeak(key, r, w.home);
  });

  it("the same 401 with --verbose (stack trace) still shows no key", async () => {
    w = await world(byRole({ executor: authFailure(key) }), { apiKeyEnv: KEY_ENV });
    const r = await w.run(["run", "--verbose", PROMPT], { env: { [KEY_ENV]: key } });
    expect(r.code).toBe(1);
    expectNoLeak(key, r, w.home);
  });

  it("the challenger answering 401 echoing the key: fail-open warning and challenger_error, no key", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: authFailure(key) }), { apiKeyEnv: KEY_ENV });
    const r = await w.run(["run", "--audit", "--json", PROMPT], { env: { [KEY_ENV]: key } });
    const out = parseJsonOut(r);
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta.challenger_status).toBe("failed");
    expect(out.audit_meta.challenger_error).toMatch(/401/);
    expect(r.stderr).toMatch(/^dissent: warning: /);
    expectNoLeak(key, r, w.home);
  });

  it("with log_content: true, the cache and the event log still hold no key", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: authFailure(key) }), { apiKeyEnv: KEY_ENV, extra: "log_content: true\n" });
    const r = await w.run(["run", "--audit", PROMPT], { env: { [KEY_ENV]: key } });
    expect(r.code).toBe(0);
    expectNoLeak(key, r, w.home);
  });
});

describe("prompts are not written under DISSENT_HOME unless log_content: true (docs/errors.md)", () => {
  const prompt = "What is the airspeed velocity of an unladen swallow-7f3a9c?";

  function holds(home: string, text: string): boolean {
    return filesUnder(home).some((f) => f.bytes.includes(Buffer.from(text, "utf8")));
  }

  it("by default the store holds no prompt text", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }));
    const r = await w.run(["run", "--audit", prompt]);
    expect(r.code).toBe(0);
    expect(holds(w.home, prompt)).toBe(false);
  });

  it("with log_content: true it does", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }), { extra: "log_content: true\n" });
    const r = await w.run(["run", "--audit", prompt]);
    expect(r.code).toBe(0);
    expect(holds(w.home, prompt)).toBe(true);
  });
});
