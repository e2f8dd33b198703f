/**
 * Issue #9 defect 12 — the secret suite. Servers echo the API key (sent as `Authorization: Bearer`)
 * in error bodies AND in successful replies: the executor's draft, the challenger's concern, the
 * revision, a producer's artifact, a critic's CRITICAL finding (which ships to the wiki, and whose
 * text becomes a wiki file name), the planner's plan, the acceptance criteria, the reviewer's
 * finding. Every command runs; stdout, stderr, every byte under DISSENT_HOME (dissent.db, its WAL,
 * the wiki files and their names) and every trace exported to an OTLP receiver are searched for the
 * key, case-insensitively.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CliResult } from "../support/cli.js";
import type { ChatRequest } from "../support/openai-server.js";
import { filesUnder } from "../support/e2e.js";
import { findings, holdWorld, ok, type Answer, type HoldWorld } from "../support/hold.js";
import { startReceiver, type Receiver } from "../telemetry/receiver.js";

vi.setConfig({ testTimeout: 240_000 });

const KEY_ENV = "LOCAL_API_KEY";
const OTHER_ENV = "OTHER_API_KEY";

let w: HoldWorld | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await w?.close();
  await receiver?.close();
  w = undefined;
  receiver = undefined;
});

const keyOf = (req: ChatRequest) => String(req.headers.authorization ?? "").replace(/^Bearer\s+/i, "");

/** Every role echoes the key it was sent, in the places a real model would repeat it. */
function echoing(extraKey?: string): Partial<Record<string, Answer>> {
  const k = (req: ChatRequest) => (extraKey ? `${keyOf(req)} ${extraKey}` : keyOf(req));
  return {
    executor: (req) => `Use the token ${k(req)} to call the API. The answer is 4.`,
    challenger: (req) =>
      JSON.stringify({
        concerns: [
          {
            evidence: `Use the token ${k(req)} to call the API`,
            category: "boundary_violation",
            severity: "high",
            concern: `The draft leaks the credential ${k(req)}`,
            suggested_fix: `Remove ${k(req)}`,
          },
        ],
        verdict: "needs_work",
      }),
    revision: (req) => `The answer is 4. (Credential ${k(req)} removed.)`,
    complexity_gate: "LOAD-BEARING",
    "discover.brief": (req) => `# Brief\n\nThe service authenticates with ${k(req)} on every request.\n`,
    "discovery.problem_sharpener": (req) =>
      findings([
        {
          severity: "CRITICAL",
          category: "problem",
          evidence: `authenticates with ${k(req)} on every request`,
          concern: `${k(req)} is hard-coded in the brief and must be rotated`,
        },
      ]),
    "shape.tech_lead": (req) => ({
      status: 400,
      raw: JSON.stringify({ error: { message: `Invalid API key ${k(req)} for model shape.tech_lead`, type: "invalid_request_error" } }),
    }),
    "plan.tester": (req) => ({ status: 500, raw: JSON.stringify({ error: { message: `upstream rejected key ${k(req)}`, type: "server_error" } }) }),
    planner: (req) => `# Plan\n\n1. Store ${k(req)} in the vault.\n2. Rotate it monthly.\n`,
    "spec.ac_generator": (req) => JSON.stringify({ acceptance_criteria: [`Rotating ${k(req)} is covered by a test`] }),
    plan_reviewer: (req) =>
      findings([{ severity: "MEDIUM", category: "security", dimension: "security", concern: `The plan still names ${k(req)} in step 1` }]),
  };
}

/** Asserts a secret is nowhere: the command's output, every file under the home, and the file names. */
function expectNowhere(secret: string, results: CliResult[], home: string) {
  const needle = secret.toLowerCase();
  for (const r of results) {
    expect(r.stdout.toLowerCase().includes(needle), `stdout holds the key:\n${r.stdout.slice(0, 2000)}`).toBe(false);
    expect(r.stderr.toLowerCase().includes(needle), `stderr holds the key:\n${r.stderr.slice(0, 2000)}`).toBe(false);
  }
  const files = filesUnder(home);
  expect(files.some((f) => f.path.endsWith("dissent.db"))).toBe(true);
  for (const f of files) {
    expect(f.path.toLowerCase().includes(needle), `a file name holds the key: ${f.path}`).toBe(false);
    expect(f.bytes.toString("latin1").toLowerCase().includes(needle), `${f.path} holds the key`).toBe(false);
  }
}

describe.each([
  ["a provider-shaped key", "sk-test-SECRET123456abcdef", false],
  ["a provider-shaped key, log_content: true", "sk-test-SECRET123456abcdef", true],
  ["a key of no known shape", "hunter2correcthorsebattery", false],
  ["a key of no known shape, log_content: true", "hunter2correcthorsebattery", true],
] as const)("defect 12: the key never leaves the request (%s)", (_name, key, logContent) => {
  it("every command, against servers echoing the key in errors and in replies", async () => {
    receiver = await startReceiver();
    const telemetry = `telemetry: { otlp_endpoint: "${receiver.url}" }\n`;
    w = await holdWorld(echoing(), { apiKeyEnv: KEY_ENV, extra: `${telemetry}${logContent ? "log_content: true\n" : ""}` }, { [KEY_ENV]: key });
    const results: CliResult[] = [];
    const run = async (args: string[], expectCode: number | null = 0) => {
      const r = await (w as HoldWorld).run(args);
      results.push(r);
      if (expectCode !== null) expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(expectCode);
      return r;
    };

    // the gate, every way
    await run(["run", "--audit", "How do I call the API?"]);
    await run(["run", "--audit", "--json", "How do I call the API?"]);
    await run(["run", "--audit", "--json", "--verbose", "--no-cache", "How do I call the API?"]);
    await run(["run", "--verbose", "--no-cache", "How do I call the API?"]);
    expect(w.server.requests[0]?.headers.authorization).toBe(`Bearer ${key}`); // the key was sent, so it could be echoed

    // the pipeline, every way
    const created = await run(["issue", "new", "--title", "Rotate the service credential", "--body", "The credential must be rotated every month.", "--json"]);
    const id = (JSON.parse(created.stdout) as { id: string }).id;
    await run(["issue", "plan", id, "--verbose"]);
    const twin = (JSON.parse((await run(["issue", "new", "--title", "Rotate the backup credential", "--json"])).stdout) as { id: string }).id;
    const planned = await run(["issue", "plan", twin, "--json", "--verbose"]);
    expect((JSON.parse(planned.stdout) as { status: string }).status).toMatch(/ready|needs_replan|hitl/);
    await run(["issue", "show", id]);
    await run(["issue", "show", id, "--json"]);
    for (const a of ["brief", "shape", "plan", "acceptance_criteria"]) await run(["issue", "show", id, "--artifact", a]);
    await run(["issue", "list"]);
    await run(["issue", "list", "--json"]);
    await run(["issue", "merged", id, "--pr", "7"]);
    await run(["issue", "merged", twin, "--pr", "8", "--json"]);
    await run(["events"]);
    await run(["events", "--json"]);
    await run(["events", "--issue", id, "--json"]);
    const list = await run(["wiki", "list", "--json"]);
    await run(["wiki", "list"]);
    const entries = JSON.parse(list.stdout) as { id: string }[];
    // the CRITICAL that echoed the key shipped: the wiki is not vacuously clean
    expect(entries.length).toBeGreaterThanOrEqual(1);
    const shown: string[] = [];
    for (const e of entries) {
      shown.push((await run(["wiki", "show", e.id])).stdout);
      await run(["wiki", "show", e.id, "--json"]);
    }
    // the concern that quoted the key is the one that shipped (so the search below is not vacuous)
    expect(shown.join("\n")).toContain("is hard-coded in the brief and must be rotated");
    expect(readdirSync(join(w.home, "wiki")).length).toBeGreaterThanOrEqual(1);

    expectNowhere(key, results, w.home);
    // the traces: exported, carrying the replies' text with log_content, and never the key
    const traces = receiver.bodies.join("\n");
    expect(traces).toContain("gen_ai.usage.input_tokens");
    if (logContent) expect(traces).toContain("must be rotated");
    expect(traces.toLowerCase().includes(key.toLowerCase()), "an exported trace holds the key").toBe(false);
  });
});

describe("defect 12: every configured key is a secret from load, whichever provider is called", () => {
  const KEY = "sk-local-AAAAbbbbCCCC1111";
  const OTHER = "sk-other-ZZZZyyyyXXXX9999";

  it("a reply echoing the key of a provider this command never called is still redacted", async () => {
    w = await holdWorld(
      echoing(OTHER),
      {
        apiKeyEnv: KEY_ENV,
        providers: ['  other: { type: openai-compatible, base_url: "http://127.0.0.1:9/v1", api_key_env: OTHER_API_KEY }'],
        routes: { challenger: "other:chal-model", "plan.risk_skeptic": "other:risk-model" },
      },
      { [KEY_ENV]: KEY, [OTHER_ENV]: OTHER },
    );
    const results: CliResult[] = [];
    // no --audit: the `other` provider is never called, yet its key is known
    const r = await w.run(["run", "How do I call the API?"]);
    results.push(r);
    expect(r.code, r.stderr).toBe(0);
    const j = await w.run(["run", "--json", "--verbose", "--no-cache", "How do I call the API?"]);
    results.push(j);
    expect(j.code, j.stderr).toBe(0);
    expect(w.server.requests.every((q) => q.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expectNowhere(OTHER, results, w.home);
    expectNowhere(KEY, results, w.home);
  });
});

describe("defect 12: a key typed into an issue never reaches output, the store or the wiki", () => {
  const KEY = "sk-pasted-QQQQwwwwEEEE7777";

  it("issue new with the key in its body and title; plan, show, list, merged, events, wiki", async () => {
    w = await holdWorld(echoing(), { apiKeyEnv: KEY_ENV }, { [KEY_ENV]: KEY });
    const results: CliResult[] = [];
    const created = await w.run(["issue", "new", "--title", `Rotate ${KEY} now`, "--body", `The credential ${KEY} was pasted in chat.`, "--json"]);
    results.push(created);
    const id = (JSON.parse(ok(created, "issue new").stdout) as { id: string }).id;
    for (const args of [
      ["issue", "plan", id, "--json"],
      ["issue", "show", id],
      ["issue", "show", id, "--json"],
      ["issue", "list"],
      ["issue", "merged", id, "--pr", "9"],
      ["events", "--json"],
      ["wiki", "list"],
    ]) {
      const r = await w.run(args);
      results.push(r);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
    expectNowhere(KEY, results, w.home);
  });
});
