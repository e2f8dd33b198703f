import { spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { BIN, dissent, scratch } from "../support/cli.js";
import { frontier, startRealisticDouble, type Scenario } from "../support/double/index.js";
import { council, holdConfig } from "../support/hold.js";
import { startOpenAIServer, type ChatRequest } from "../support/openai-server.js";

/**
 * `dissent mcp` over stdio as Claude Code, Cursor or Codex run it (docs/mcp.md): the SDK's own
 * client spawns the built CLI against model servers these tests start on 127.0.0.1.
 */

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

interface Setup {
  dir: string;
  home: string;
  client: Client;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  call(name: string, args: Record<string, unknown>, opts?: Parameters<Client["callTool"]>[2]): Promise<CallToolResult>;
}

/** A scratch folder with `config`, and an SDK client connected to `dissent mcp` running in it. */
async function connect(config: string, env: Record<string, string> = {}): Promise<Setup> {
  const s = scratch("dissent-mcp-");
  s.write("dissent.config.yaml", config);
  const home = join(s.dir, "home");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    cwd: s.dir,
    env: { PATH: process.env.PATH ?? "", HOME: s.dir, DISSENT_HOME: home, ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const client = new Client({ name: "dissent-test", version: "1.0.0" });
  const errors: Error[] = [];
  client.onerror = (e) => void errors.push(e);
  await client.connect(transport);
  open.push({
    close: async () => {
      await client.close();
      s.cleanup();
      // A frame the client could not read (anything but protocol on stdout) is an error here.
      expect(errors.map((e) => e.message)).toEqual([]);
    },
  });
  return {
    dir: s.dir,
    home,
    client,
    stderr: () => stderr,
    call: async (name, args, opts) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000, ...opts })) as CallToolResult,
  };
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

const PROMPT = "How much paracetamol can I take?";
const BAD = "Adults can safely take up to 8 g of paracetamol a day.";
const DRAFT = `Paracetamol is a common painkiller for mild pain and fever. ${BAD} Always read the label, and ask a pharmacist if you take other medicines.`;
const SCENARIO: Scenario = {
  drafts: {
    [PROMPT]: {
      draft: DRAFT,
      defects: [{ sentence: BAD, category: "factual_risk", severity: "critical", concern: "8 g a day is twice the maximum adult dose." }],
    },
  },
};

describe("dissent mcp over stdio", () => {
  test("lists six tools whose input and output schemas are what docs/mcp.md says", async () => {
    const models = await startOpenAIServer(council());
    open.push(models);
    const { client } = await connect(holdConfig(models.url));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["audit", "challenge", "issue_status", "known_gaps", "plan_issue", "resolve_concern"]);
    const byName = new Map(tools.map((t) => [t.name, t]));
    const challenge = byName.get("challenge");
    expect(challenge?.inputSchema.required?.sort()).toEqual(["draft", "prompt"]);
    expect(Object.keys(challenge?.inputSchema.properties ?? {}).sort()).toEqual(["constraints", "draft", "policies", "prompt"]);
    expect(Object.keys(challenge?.outputSchema?.properties ?? {}).sort()).toEqual(
      ["challenger_status", "challenger_error", "concerns", "run_id", "ungrounded", "verdict"].sort(),
    );
    expect(byName.get("resolve_concern")?.inputSchema.properties?.kind).toMatchObject({
      enum: ["trivial", "deferred", "addressed-in-code", "addressed-in-test", "ignored"],
    });
    expect(Object.keys(byName.get("plan_issue")?.outputSchema?.properties ?? {})).toEqual(
      expect.arrayContaining(["status", "plan", "acceptance_criteria", "pending_concerns"]),
    );
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(["dissent://issue/{id}", "dissent://issue/{id}/{artifact}"]);
  });

  test("challenge finds the planted defect in a draft, quoting it near-verbatim through fences and think blocks, and passes the clean draft", async () => {
    const double = await startRealisticDouble({ seed: 7, quirks: frontier, scenario: SCENARIO });
    open.push(double);
    const { call, dir, home } = await connect(holdConfig(double.url));
    const r = await call("challenge", { prompt: PROMPT, draft: DRAFT, policies: ["No medical dosing advice."] });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as { verdict: string; concerns: { category: string; severity: string; evidence: string }[]; challenger_status: string };
    expect(out.challenger_status).toBe("ok");
    expect(out.verdict).toBe("needs_work");
    expect(out.concerns).toHaveLength(1);
    expect(out.concerns[0]).toMatchObject({ category: "factual_risk", severity: "critical" });
    expect(out.concerns[0]?.evidence.toLowerCase()).toContain("8 g of paracetamol");
    expect(textOf(r)).toContain("verdict: needs_work");
    // The executor is never called: the agent already has the draft.
    expect(double.byRole("executor")).toHaveLength(0);
    // ADR-009 §2's four fields, nothing else, with the policy given.
    const sent = JSON.parse(double.byRole("challenger")[0]?.body.messages.at(-1)?.content ?? "{}") as Record<string, unknown>;
    expect(Object.keys(sent).sort()).toEqual(["constraints", "executor_output", "policies", "prompt"]);
    expect(sent.policies).toEqual(["No medical dosing advice."]);

    const clean = DRAFT.replace(`${BAD} `, "");
    const passed = (await call("challenge", { prompt: PROMPT, draft: clean })).structuredContent as { verdict: string; concerns: unknown[] };
    expect(passed).toMatchObject({ verdict: "pass", concerns: [] });

    // Same cache and event log as the CLI: the challenger's ModelCall events are in `dissent events`.
    const events = await dissent(["events", "--json"], { cwd: dir, env: { DISSENT_HOME: home } });
    const calls = events.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; role?: string })
      .filter((e) => e.type === "ModelCall");
    expect(calls.map((e) => e.role)).toEqual(["challenger", "challenger"]);
    const again = (await call("challenge", { prompt: PROMPT, draft: DRAFT, policies: ["No medical dosing advice."] })).structuredContent as { verdict: string };
    expect(again.verdict).toBe("needs_work");
    expect(double.byRole("challenger")).toHaveLength(2); // the third is the first, from the cache
  });

  test("plan_issue reports a progress notification per stage; cancelled midway it clears its labels, and a second call resumes from the cache", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The shape stage's first draft never comes back until the test lets it: the cancel lands mid-stage.
    const models = await startOpenAIServer(
      council({
        "shape.writer": async (_req: ChatRequest, n: number) => {
          if (n === 0) await held;
          return "# Shape\n\nRetry each upload three times with backoff.\n";
        },
      }),
    );
    open.push({ close: async () => (release(), await models.close()) });
    const { call, client } = await connect(holdConfig(models.url));

    const first: Progress[] = [];
    const stop = new AbortController();
    const cancelled = call(
      "plan_issue",
      { title: "Retry failed uploads", body: "Uploads fail on flaky networks; retry them.", labels: ["dissent-load-bearing"] },
      {
        signal: stop.signal,
        onprogress: (p) => {
          first.push(p);
          if (p.message === "shape stage") stop.abort("the user pressed stop");
        },
      },
    );
    await expect(cancelled).rejects.toThrow(/stop/);
    expect(first.map((p) => p.message)).toEqual(["complexity gate", "discover stage", "shape stage"]);
    expect(first.map((p) => p.progress)).toEqual([1, 2, 3]);
    expect(first.every((p) => p.total === 6)).toBe(true);

    const status = (await call("issue_status", { issue: "1" })).structuredContent as { labels: string[]; status: string; artifacts: string[] };
    // As after Ctrl-C: the transient label is gone, the cycle waits to resume (docs/issue.md).
    expect(status.labels.filter((l) => l.endsWith("-running"))).toEqual([]);
    expect(status.labels).toContain("dissent-plan");
    expect(status.status).toBe("planning");
    expect(status.artifacts).toEqual(["brief"]);
    release();

    const discoverCalls = models.requests.filter((r) => r.body.model === "discover.brief").length;
    const second: Progress[] = [];
    const r = await call("plan_issue", { issue: "1" }, { onprogress: (p) => void second.push(p) });
    expect(r.isError, textOf(r)).toBeFalsy();
    const out = r.structuredContent as { status: string; labels: string[]; acceptance_criteria: string[] };
    expect(out.status).toBe("ready");
    expect(out.labels).toContain("dissent-ready");
    expect(out.acceptance_criteria.length).toBeGreaterThan(0);
    // The discover stage was committed before the cancel: the resumed cycle starts at shape.
    expect(models.requests.filter((r) => r.body.model === "discover.brief")).toHaveLength(discoverCalls);
    expect(second.map((p) => p.message)).toEqual(["shape stage", "plan stage", "spec stage", "plan review"]);
    const plan = await client.readResource({ uri: "dissent://issue/1/plan" });
    expect(plan.contents[0]).toMatchObject({ mimeType: "text/markdown", text: expect.stringContaining("planner artifact") });
  });

  test("a config that does not load is every tool call's one-line error, and the server still answers", async () => {
    const { call } = await connect("providers:\n  local: { type: openai-compatible, base_url: [unclosed\n");
    const r = await call("challenge", { prompt: "p", draft: "d" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^dissent: error: .*dissent\.config\.yaml:\d+:\d+: invalid YAML/);
    expect(textOf(r).split("\n")).toHaveLength(1);
    expect(textOf(r)).not.toMatch(/\bat \S+ \(|node_modules/); // never a stack
  });

  test("a missing key is a tool error naming the variable, never a key, and the next call still works", async () => {
    const models = await startOpenAIServer(council());
    open.push(models);
    const { call } = await connect(holdConfig(models.url, { apiKeyEnv: "LOCAL_KEY" }));
    const r = await call("challenge", { prompt: "p", draft: "The answer is 4." });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^dissent: error: .*LOCAL_KEY/);
    const gaps = await call("known_gaps", { text: "retry uploads with backoff" });
    expect(gaps.structuredContent).toEqual({ gaps: [] });
  });

  test("a key the model echoes never reaches a tool result", async () => {
    const KEY = "sk-proj-mcpTESTkey0123456789abcdef";
    const models = await startOpenAIServer(
      council({
        executor: `Sure. Your key is ${KEY}, and the answer is 4.`,
        challenger: JSON.stringify({
          concerns: [{ evidence: `Your key is ${KEY}`, category: "policy_compliance", severity: "high", concern: `The draft leaks the key ${KEY}.` }],
          verdict: "needs_work",
        }),
        revision: `The answer is 4 (key ${KEY}).`,
      }),
    );
    open.push(models);
    const { call } = await connect(holdConfig(models.url, { apiKeyEnv: "LOCAL_KEY" }), { LOCAL_KEY: KEY });
    const audited = await call("audit", { prompt: "What is 2 + 2?" });
    const challenged = await call("challenge", { prompt: "What is 2 + 2?", draft: `Sure. Your key is ${KEY}, and the answer is 4.` });
    for (const r of [audited, challenged]) {
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(JSON.stringify(r)).not.toContain(KEY);
      expect(JSON.stringify(r.structuredContent)).toContain("[redacted]");
    }
    // The model was really sent the key (it reached the wire), and really echoed it.
    expect(models.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});

/**
 * `dissent mcp` spawned in `dir` with a hand-written JSON-RPC client (no SDK framing in between, so
 * stdout is seen byte for byte): initialized, then `call` sent as request 2; `until` resolves when
 * stdout holds the text.
 */
function rawMcp(dir: string, call: Record<string, unknown>, until: string) {
  const env = { PATH: process.env.PATH ?? "", HOME: dir, DISSENT_HOME: join(dir, "home") };
  const child = spawn(process.execPath, [BIN, "mcp"], { cwd: dir, env, stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const out = { stdout: "", stderr: "" };
  child.stderr.on("data", (d: Buffer) => (out.stderr += d.toString("utf8")));
  const seen = new Promise<void>((resolve) =>
    child.stdout.on("data", (d: Buffer) => {
      out.stdout += d.toString("utf8");
      if (out.stdout.includes(until)) resolve();
    }),
  );
  const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call });
  return { child, exited, seen, out };
}

describe("stdout carries only protocol frames", () => {
  test("a failing challenger's warning goes to stderr; every stdout line is a JSON-RPC message", async () => {
    const models = await startOpenAIServer(council({ challenger: { status: 503 } }));
    open.push(models);
    const s = scratch("dissent-mcp-raw-");
    open.push({ close: async () => s.cleanup() });
    s.write("dissent.config.yaml", holdConfig(models.url));
    const { child, exited, seen, out } = rawMcp(s.dir, { name: "challenge", arguments: { prompt: "What is 2 + 2?", draft: "It is 4." } }, '"id":2');
    await seen;
    child.stdin.end(); // the client hangs up: the server exits 0
    expect(await exited).toBe(0);
    const lines = out.stdout.split("\n").filter((l) => l !== "");
    for (const l of lines) expect((JSON.parse(l) as { jsonrpc: string }).jsonrpc).toBe("2.0");
    const reply = JSON.parse(lines.find((l) => l.includes('"id":2')) ?? "{}") as {
      result: { structuredContent: { challenger_status: string; verdict: null } };
    };
    expect(reply.result.structuredContent).toMatchObject({ challenger_status: "failed", verdict: null });
    expect(out.stderr).toMatch(/^dissent: warning: the challenger failed, the draft is unaudited: .*503/m);
  });
});

describe("stopping", () => {
  test("SIGTERM during plan_issue exits 143 after the plan has cleared its running label", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const models = await startOpenAIServer(
      council({
        "shape.writer": async () => {
          await held;
          return "# Shape\n\nRetry each upload.\n";
        },
      }),
    );
    open.push({ close: async () => (release(), await models.close()) });
    const s = scratch("dissent-mcp-term-");
    open.push({ close: async () => s.cleanup() });
    s.write("dissent.config.yaml", holdConfig(models.url));
    const { child, exited, seen } = rawMcp(
      s.dir,
      {
        name: "plan_issue",
        arguments: { title: "Retry failed uploads", body: "Uploads fail.", labels: ["dissent-load-bearing"] },
        _meta: { progressToken: "p" },
      },
      '"message":"shape stage"',
    );
    await seen;
    child.kill("SIGTERM");
    expect(await exited).toBe(143);
    const shown = await dissent(["issue", "show", "1", "--json"], { cwd: s.dir, env: { DISSENT_HOME: join(s.dir, "home") } });
    const labels = (JSON.parse(shown.stdout) as { labels: string[] }).labels;
    expect(labels.filter((l) => l.endsWith("-running"))).toEqual([]);
    expect(labels).toContain("dissent-plan");
  });
});
