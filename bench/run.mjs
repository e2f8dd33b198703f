// npm run bench — speed and memory of dissent's own machinery, against the AI SDK's per-call cost.
// Figures are medians within one run (machines are shared and noisy: compare ratios, not absolutes).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { AdversarialRetryLoop } from "../dist/adversarial/retry-loop.js";
import { runAudit } from "../dist/gate/run-audit.js";
import { fixedRouter } from "../dist/models/router.js";
import { planIssue } from "../dist/pipeline/plan-issue.js";
import { PIPELINE_ROLES, STAGES } from "../dist/pipeline/stages.js";
import { memoryStore } from "../dist/store/sqlite.js";
import { localTracker } from "../dist/trackers/local.js";
import { chatCompletion, median, printTable, recorder, round, sleep } from "./lib.mjs";

const BIN = fileURLToPath(new URL("../dist/cli/bin.js", import.meta.url));
async function timeIt(fn, { warmup = 20, runs = 200 } = {}) {
  for (let i = 0; i < warmup; i++) await fn(i);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn(i);
    times.push(performance.now() - t);
  }
  return median(times);
}

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const reply = (text) => ({ content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] });
/** An instant in-process model: the AI SDK's mock, answering from a function. */
const instant = (id, answer, delayMs = 0) =>
  new MockLanguageModelV3({
    provider: "bench",
    modelId: id,
    doGenerate: async (o) => {
      if (delayMs) await sleep(delayMs);
      return reply(typeof answer === "function" ? answer(o) : answer);
    },
  });

const { results, rows, record } = recorder();

// ---------------------------------------------------------------- 1. audit gate overhead (issue #2)
{
  const DRAFT = "Water boils at 100 °C at sea level.";
  const PASS = JSON.stringify({ verdict: "pass", concerns: [] });
  const WORK = JSON.stringify({
    verdict: "needs_work",
    concerns: [{ category: "missing_verification", severity: "low", evidence: "", concern: "cite a source" }],
  });
  const executor = instant("exec", DRAFT);
  // The floor: one bare generateText call on the same instant model.
  const floor = await timeIt(() => generateText({ model: executor, prompt: "Why does water boil?", temperature: 0, seed: 7, maxRetries: 0 }), { runs: 400 });
  record("ai_sdk_call_floor_ms", "AI SDK generateText, instant model (floor)", floor, "ms");
  for (const [mode, audit, challenger, calls] of [
    ["no_audit", false, instant("chal", PASS), 1],
    ["pass", true, instant("chal", PASS), 2],
    ["needs_work", true, instant("chal", WORK), 3],
  ]) {
    const t = await timeIt(() => runAudit({ executor, challenger, prompt: "Why does water boil?", audit }), { runs: 300 });
    const overhead = t - calls * floor;
    record(`gate_overhead_${mode}_ms`, `gate overhead per run, ${mode} (${calls} call${calls > 1 ? "s" : ""})`, overhead, "ms", "< 2 ms", overhead < 2);
  }
}

// ---------------------------------------------------------------- 2. loop overhead and council parallelism (issue #3)
{
  const stage = { stage: "bench", phase: "plan", mustAddressBy: "spec" };
  let n = 0;
  const critics = ["a", "b", "c"].map((role) => ({
    role,
    // a different grounded CRITICAL every round: the loop runs all four rounds
    review: async (a, { round: r }) => ({
      findings: [{ evidence: a, severity: "CRITICAL", concern: `problem number ${r} of kind ${role === "a" ? "alpha" : "beta"}`, category: "x" }],
    }),
  }));
  const loop = new AdversarialRetryLoop(async ({ round }) => ({ artifact: `draft ${round}` }), critics);
  const ctx = () => ({ issueId: null, cycle: 1, concernId: () => `ID-${++n}` });
  const perRun = await timeIt(() => loop.run(stage, ctx()), { runs: 500 });
  record("loop_overhead_per_round_ms", "retry loop overhead per round (3 instant critics)", perRun / 4, "ms", "< 0.5 ms", perRun / 4 < 0.5);

  const slow = ["a", "b", "c"].map((role) => ({ role, review: async () => (await sleep(200), { findings: [] }) }));
  const council = new AdversarialRetryLoop(async () => ({ artifact: "draft" }), slow);
  const wall = await timeIt(() => council.run(stage, ctx()), { warmup: 1, runs: 7 });
  record("council_round_200ms_x3_ms", "council round, 3 critics × 200 ms", wall, "ms", "≤ 230 ms (1.15 × 200)", wall <= 230);
  results.council_round_ratio = { value: round(wall / 200), unit: "× one call" };
}

// ---------------------------------------------------------------- 3. a full load-bearing issue (issue #4)
const ROLES = [...PIPELINE_ROLES];
const answer = (role) => {
  if (["discover.brief", "shape.writer", "planner"].includes(role)) return `# ${role}\n\nArtifact by ${role}.`;
  if (role === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: ["works", "fails cleanly"] });
  return JSON.stringify({ findings: [] });
};
async function fullIssue(delayMs) {
  const store = await memoryStore();
  const tracker = localTracker(store);
  const models = Object.fromEntries(ROLES.map((r) => [r, instant(r, answer(r), delayMs)]));
  const calls = { router: fixedRouter(models), cache: store.cache, cacheMode: "use", seed: 7, timeoutMs: 10_000, maxRetries: 0, backoffMs: 1 };
  const { id } = await tracker.create({ title: "Add retries to the HTTP client", body: "Retry 503s", labels: ["dissent-load-bearing", "dissent-find"] });
  const t = performance.now();
  const result = await planIssue(id, { store, tracker, calls, maxCalls: 30 });
  const wall = performance.now() - t;
  await store.close();
  return { wall, calls: result.calls };
}
{
  const floor = results.ai_sdk_call_floor_ms.value;
  const walls = [];
  let calls = 0;
  for (let i = 0; i < 25; i++) {
    const r = await fullIssue(0);
    if (i >= 5) walls.push(r.wall);
    calls = r.calls;
  }
  const wall = median(walls);
  record("issue_instant_wall_ms", `full load-bearing issue, instant model (${calls} calls)`, wall, "ms");
  const overhead = wall - calls * floor;
  record("issue_framework_overhead_ms", "  framework overhead beyond the AI SDK floor", overhead, "ms", "< 30 ms", overhead < 30);

  const DELAY = 100;
  // Critical path: 4 stages × (producer, then critics in parallel) + the reviewer, each one call deep.
  const critical = (STAGES.length * 2 + 1) * DELAY;
  const slowWalls = [];
  for (let i = 0; i < 3; i++) slowWalls.push((await fullIssue(DELAY)).wall);
  const slowWall = median(slowWalls);
  record(
    "issue_100ms_wall_ms",
    `full issue, 100 ms per call (critical path ${critical} ms)`,
    slowWall,
    "ms",
    `≤ ${Math.round(critical * 1.1)} ms (1.1×)`,
    slowWall <= critical * 1.1,
  );
  results.issue_100ms_ratio = { value: round(slowWall / critical), unit: "× critical path" };
}

// ---------------------------------------------------------------- 4. the CLI (issue #2)
function runCli(args, cwd, env = {}) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH, HOME: cwd, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, ms: performance.now() - t, out }));
  });
}
{
  const dir = mkdtempSync(join(tmpdir(), "dissent-bench-"));
  try {
    const cold = [];
    for (let i = 0; i < 21; i++) cold.push((await runCli(["--version"], dir)).ms);
    const coldMs = median(cold.slice(1));
    record("cli_version_cold_ms", "CLI cold start: dissent --version", coldMs, "ms", "< 300 ms", coldMs < 300);
    const node = [];
    for (let i = 0; i < 11; i++) {
      const t = performance.now();
      await new Promise((r) => spawn(process.execPath, ["-e", "0"]).on("close", r));
      node.push(performance.now() - t);
    }
    results.node_startup_ms = { value: round(median(node)), unit: "ms" };

    const server = createServer(async (req, res) => {
      let body = "";
      for await (const c of req) body += c;
      const model = JSON.parse(body).model;
      const content = model === "chal" ? JSON.stringify({ verdict: "pass", concerns: [] }) : "Water boils at 100 °C at sea level.";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(chatCompletion(model, content, { prompt_tokens: 5, completion_tokens: 5 }));
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const port = server.address().port;
    writeFileSync(
      join(dir, "dissent.config.yaml"),
      `providers:\n  local: { type: openai-compatible, base_url: "http://127.0.0.1:${port}/v1" }\nroutes:\n  default: { primary: "local:exec" }\n  challenger: { primary: "local:chal" }\n`,
    );
    const first = await runCli(["run", "--audit", "Why does water boil?"], dir);
    if (first.code !== 0) throw new Error("cached-run setup failed");
    const cached = [];
    for (let i = 0; i < 15; i++) cached.push((await runCli(["run", "--audit", "Why does water boil?"], dir)).ms);
    server.close();
    const cachedMs = median(cached);
    record("cli_cached_run_audit_ms", "fully cached dissent run --audit, end to end", cachedMs, "ms", "< 400 ms", cachedMs < 400);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- 5. the sub-benchmarks of wave 2
// Each is its own script (bench/<topic>.mjs) writing bench/results.<topic>.json; they run here in turn
// and their figures join results.json. `npm run bench -- --only core` skips them.
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
const SUBS = [
  "judgment",
  "councils",
  "cost",
  "library",
  "peer",
  "eval",
  "factory",
  "dashboard",
  "engine",
  "chaos",
  "mcp",
  "implement",
  "codemap",
  "context",
  "signals",
];
for (const topic of only === "core" ? [] : SUBS.filter((t) => !only || t === only)) {
  const script = fileURLToPath(new URL(`./${topic}.mjs`, import.meta.url));
  if (!existsSync(script)) continue;
  console.error(`bench: ${topic}…`);
  const code = await new Promise((r) => spawn(process.execPath, [script], { stdio: ["ignore", "inherit", "inherit"] }).on("close", r));
  const file = new URL(`./results.${topic}.json`, import.meta.url);
  if (code === 0 && existsSync(file)) results[topic] = JSON.parse(readFileSync(file, "utf8"));
  else rows.push([`${topic} benchmark`, `failed (exit ${code})`, "", "MISSED"]);
}

// ---------------------------------------------------------------- memory
results.bench_peak_rss_mb = { value: round(process.memoryUsage().rss / 2 ** 20, 1), unit: "MiB" };
rows.push(["bench process RSS at end", `${results.bench_peak_rss_mb.value} MiB`, "", ""]);

printTable(rows);

writeFileSync(
  new URL("./results.json", import.meta.url),
  `${JSON.stringify({ measured_at: new Date().toISOString(), node: process.version, cpus: cpus().length, results }, null, 2)}\n`,
);
console.log("\nwritten: bench/results.json");
