import { spawn } from "node:child_process";
import { join } from "node:path";
import { type CallToolResult, Client, type Progress } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, test } from "vitest";
import { BIN, dissent, scratch } from "../support/cli.js";
import { frontier, startRealisticDouble, type Scenario } from "../support/double/index.js";
import { council, findings, holdConfig, roleOf } from "../support/hold.js";
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
  call(name: string, args: Record<string, unknown>, opts?: Parameters<Client["callTool"]>[1]): Promise<CallToolResult>;
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
    call: (name, args, opts) => client.callTool({ name, arguments: args }, { timeout: 60_000, ...opts }),
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

  test("plan_issue reports progress at each step and after each model call, naming stage and round; cancelled midway it clears its labels, and a second call resumes from the cache", async () => {
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
          if (p.message === "shape stage, round 1: shape.writer writing") stop.abort("the user pressed stop");
        },
      },
    );
    await expect(cancelled).rejects.toThrow(/stop/);
    const said = first.map((p) => p.message);
    expect(said[0]).toBe("complexity gate: asking the complexity gate");
    expect(said).toContain("discover stage, round 1: discover.brief writing");
    expect(said).toContain("discover stage, round 1: discover.brief answered");
    expect(said).toContain("discover stage: converged after 1 round");
    expect(said.at(-1)).toBe("shape stage, round 1: shape.writer writing");
    // Each discover-stage model call said it ended, by its role.
    const discoverRoles = models.requests.map(roleOf).filter((r) => r.startsWith("discover") || r.startsWith("discovery") || r === "assumption_surfacer");
    for (const role of discoverRoles) expect(said, role).toContain(`discover stage, round 1: ${role} answered`);
    // Progress only grows; a plan's length is not known up front, so no total.
    expect(first.map((p) => p.progress)).toEqual(first.map((_, i) => i + 1));
    expect(first.every((p) => p.total === undefined)).toBe(true);

    const status = (await call("issue_status", { issue: "1" })).structuredContent as { labels: string[]; status: string; artifacts: string[] };
    // As after Ctrl-C: the transient label is gone, the cycle waits to resume (docs/issue.md).
    expect(status.labels.filter((l) => l.endsWith("-running"))).toEqual([]);
    expect(status.labels).toContain("dissent-plan");
    expect(status.status).toBe("planning");
    expect(status.artifacts).toEqual(["brief"]);
    release();

    const before = models.requests.length;
    const second: Progress[] = [];
    const r = await call("plan_issue", { issue: "1" }, { onprogress: (p) => void second.push(p) });
    expect(r.isError, textOf(r)).toBeFalsy();
    const out = r.structuredContent as { status: string; labels: string[]; acceptance_criteria: string[] };
    expect(out.status).toBe("ready");
    expect(out.labels).toContain("dissent-ready");
    expect(out.acceptance_criteria.length).toBeGreaterThan(0);
    // The discover stage was committed before the cancel: the resumed cycle starts at shape.
    const resumed = second.map((p) => p.message ?? "");
    expect(resumed[0]).toBe("shape stage, round 1: shape.writer writing");
    expect(resumed.filter((m) => m.startsWith("discover"))).toEqual([]);
    // The plan reviewer's answer is the result itself: its step is the last message.
    expect(resumed.at(-1)).toBe("plan review: asking the plan reviewer");
    // At least one message per model call: every request the models got before the review has its "answered".
    const answered = resumed.filter((m) => / answered$/.test(m));
    expect(answered).toHaveLength(models.requests.length - before - 1);
    const plan = await client.readResource({ uri: "dissent://issue/1/plan" });
    expect(plan.contents[0]).toMatchObject({ mimeType: "text/markdown", text: expect.stringContaining("planner artifact") });
  });

  test("a plan longer than the client's timeout finishes when the timeout resets on progress (the SDK's resetTimeoutOnProgress)", async () => {
    // A slow model: every shape-stage call takes 1.5 s, and the stage needs two rounds (a CRITICAL in
    // round 1), so the stage alone takes four calls' time in a row — longer than the client's 4 s
    // timeout. Only progress between the calls keeps the request alive.
    const CRITICAL = {
      severity: "CRITICAL",
      category: "scope",
      concern: "The shape never says how many retries are allowed.",
      evidence: "Retry each upload",
    };
    const slow = (a: (n: number) => string) => (_req: ChatRequest, n: number) => ({ content: a(n), delayMs: 1500 });
    const models = await startOpenAIServer(
      council({
        "shape.writer": slow((n) => (n === 0 ? "# Shape\n\nRetry each upload.\n" : "# Shape\n\nRetry each upload three times, then give up.\n")),
        "shape.challenger": slow((n) => findings(n === 0 ? [CRITICAL] : [])),
        "shape.user_advocate": slow(() => findings([])),
        "shape.tech_lead": slow(() => findings([])),
        "shape.product_strategist": slow(() => findings([])),
      }),
    );
    open.push(models);
    const { call } = await connect(holdConfig(models.url));
    const said: string[] = [];
    const r = await call(
      "plan_issue",
      { title: "Retry failed uploads", body: "Uploads fail on flaky networks.", labels: ["dissent-load-bearing"] },
      { timeout: 4000, resetTimeoutOnProgress: true, onprogress: (p) => void said.push(p.message ?? "") },
    );
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ status: "ready" });
    expect(said).toContain("shape stage, round 2: shape.writer answered");
    expect(said).toContain("shape stage: converged after 2 rounds");
  });

  test("resolve_concern sent again after a lost answer returns the resolution recorded, not 'already resolved'; a different one is refused", async () => {
    const models = await startOpenAIServer(
      council({ "plan.tester": findings([{ severity: "MEDIUM", category: "test_strategy", concern: "No test covers a retry after a timeout." }]) }),
    );
    open.push(models);
    const { call } = await connect(holdConfig(models.url));
    const planned = await call("plan_issue", { title: "Retry failed uploads", body: "Uploads fail.", labels: ["dissent-load-bearing"] });
    const pending = (planned.structuredContent as { pending_concerns: { id: string }[] }).pending_concerns;
    expect(pending).toHaveLength(1);
    const args = { issue: 1, concern: pending[0]?.id, kind: "deferred", note: "tracked in #99" };
    const first = await call("resolve_concern", args);
    expect(first.isError, textOf(first)).toBeFalsy();
    // The agent never saw that answer (a timeout, a dropped connection) and sends the same call again.
    const retry = await call("resolve_concern", args);
    expect(retry.isError, textOf(retry)).toBeFalsy();
    expect(retry.structuredContent).toEqual(first.structuredContent);
    const other = await call("resolve_concern", { ...args, kind: "ignored" });
    expect(other.isError).toBe(true);
    expect(textOf(other)).toMatch(/^dissent: error: concern \S+ of issue 1 is already resolved/);
    const status = (await call("issue_status", { issue: 1 })).structuredContent as { pending_concerns: unknown[] };
    expect(status.pending_concerns).toEqual([]);
  });

  test("text content is terminal-safe: a model's escape sequences, BEL and OSC 52 clipboard write are shown, not sent", async () => {
    const HOSTILE = "Clears the screen \u001b[2J, writes the clipboard \u001b]52;c;cm0gLXJmIC8=\u0007 and rings \u0007.";
    const models = await startOpenAIServer(
      council({
        challenger: JSON.stringify({
          concerns: [{ evidence: "It is 5.", category: "factual_risk", severity: "high", concern: HOSTILE }],
          verdict: "needs_work",
        }),
      }),
    );
    open.push(models);
    const { call } = await connect(holdConfig(models.url));
    const r = await call("challenge", { prompt: "What is 2 + 2?", draft: "It is 5." });
    expect(r.isError, textOf(r)).toBeFalsy();
    const text = textOf(r);
    expect(text, JSON.stringify(text)).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain("Clears the screen \\x1b[2J, writes the clipboard \\x1b]52;c;cm0gLXJmIC8=\\x07 and rings \\x07.");
    // The structured result is data, as the model wrote it (JSON escapes it on the wire).
    expect((r.structuredContent as { concerns: { concern: string }[] }).concerns[0]?.concern).toBe(HOSTILE);
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

/** A message as the SDK client frames it: `id` after the params, so an over-size one shows it only at its end. */
const frame = (id: number | string, params: Record<string, unknown>) => `${JSON.stringify({ method: "tools/call", params, jsonrpc: "2.0", id })}\n`;

describe("a message over mcp.max_message_bytes", () => {
  test("is answered with a JSON-RPC error naming the setting, and the server goes on serving (default 8 MiB)", async () => {
    const models = await startOpenAIServer(council());
    open.push(models);
    const s = scratch("dissent-mcp-big-");
    open.push({ close: async () => s.cleanup() });
    s.write("dissent.config.yaml", holdConfig(models.url));
    const { child, exited, out, seen } = rawMcp(s.dir, { name: "known_gaps", arguments: { text: "retry uploads" } }, '"id":2');
    await seen;
    const replyTo = (id: number) =>
      new Promise<{ error?: { code: number; message: string }; result?: unknown }>((resolve) => {
        const look = () => {
          const line = out.stdout.split("\n").find((l) => l.includes(`"id":${id}`));
          if (line) resolve(JSON.parse(line) as { error?: { code: number; message: string } });
          else child.stdout.once("data", look);
        };
        look();
      });
    // 9 MiB of prompt: over the default bound. The SDK's own buffer (10 MB) closed the server here.
    child.stdin.write(frame(3, { name: "challenge", arguments: { prompt: "p".repeat(9 * 1024 * 1024), draft: "d" } }));
    const refused = await replyTo(3);
    expect(refused.error?.code).toBe(-32600);
    expect(refused.error?.message).toMatch(/^dissent: error: the message is \d+ bytes, over the limit of 8388608 \(mcp\.max_message_bytes/);
    child.stdin.write(frame(4, { name: "known_gaps", arguments: { text: "retry uploads" } }));
    expect((await replyTo(4)).result).toMatchObject({ structuredContent: { gaps: [] } });
    expect(child.exitCode).toBeNull();
    expect(out.stderr).toMatch(/^dissent: warning: refused an MCP message of \d+ bytes: over mcp\.max_message_bytes \(8388608\)$/m);
    child.stdin.end();
    expect(await exited).toBe(0);
  });

  test("is bounded by the setting: one over it is refused by its id at the start, one under it is answered", async () => {
    const models = await startOpenAIServer(council());
    open.push(models);
    const s = scratch("dissent-mcp-big-");
    open.push({ close: async () => s.cleanup() });
    s.write("dissent.config.yaml", holdConfig(models.url, { extra: "mcp: { max_message_bytes: 65536 }\n" }));
    const { child, out, seen } = rawMcp(s.dir, { name: "known_gaps", arguments: { text: "retry uploads" } }, '"id":2');
    await seen;
    const lines = () =>
      out.stdout
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { id: unknown; error?: { message: string }; result?: unknown });
    const until = (id: unknown) =>
      new Promise<ReturnType<typeof lines>[number]>((resolve) => {
        const look = () => {
          const hit = lines().find((m) => m.id === id);
          if (hit) resolve(hit);
          else child.stdout.once("data", look);
        };
        look();
      });
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: "big", method: "tools/call", params: { name: "known_gaps", arguments: { text: "x".repeat(70_000) } } })}\n`,
    );
    expect((await until("big")).error?.message).toMatch(/over the limit of 65536 \(mcp\.max_message_bytes/);
    child.stdin.write(frame(5, { name: "known_gaps", arguments: { text: `retry uploads ${"y".repeat(60_000)}` } }));
    expect((await until(5)).result).toMatchObject({ structuredContent: { gaps: [] } });
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
      '"message":"shape stage, round 1: shape.writer writing"',
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
