// node bench/eval.mjs (after npm run build) — `dissent eval gate` over the bundled set with an instant
// scripted model: wall time and dissent's own overhead per item. Goal: under 10 s for 60 items.
// Writes bench/results.eval.json. Figures are medians of a few runs (shared machines are noisy).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { runGateEval } from "../dist/eval/run-gate.js";
import { loadGateSet } from "../dist/eval/sets.js";
import { memoryCache } from "../dist/models/cache.js";
import { fixedRouter } from "../dist/models/router.js";
import { chatCompletion, median, recorder } from "./lib.mjs";

const BIN = fileURLToPath(new URL("../dist/cli/bin.js", import.meta.url));
const OUT = fileURLToPath(new URL("./results.eval.json", import.meta.url));
const GOAL_S_PER_60 = 10;

const set = loadGateSet();
const byDraft = new Map(set.items.map((i) => [i.draft, i]));
/** The perfect challenger: exactly the planted defects. */
const perfectReply = (auditInput) => {
  const item = byDraft.get(auditInput.executor_output);
  const defects = item?.expected.defects ?? [];
  return JSON.stringify({
    concerns: defects.map((d) => ({ evidence: d.evidence, category: d.category, severity: d.min_severity ?? "high", concern: d.note ?? d.category })),
    verdict: item?.expected.verdict ?? "pass",
  });
};
const revisionReply = (draft) => {
  let out = draft;
  for (const d of byDraft.get(draft)?.expected.defects ?? []) if (d.evidence) out = out.split(d.evidence).join("");
  return out;
};
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const textOf = (m) => (m.role === "system" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join(""));
const instant = (id, answer) =>
  new MockLanguageModelV3({
    provider: "bench",
    modelId: id,
    doGenerate: async (o) => ({ content: [{ type: "text", text: answer(o) }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] }),
  });

const { results, rows, record } = recorder();

// ------------------------------------------------------------------ 1. in process (the library)
{
  const challenger = instant("chal", (o) => perfectReply(JSON.parse(textOf(o.prompt.find((m) => m.role === "user")))));
  const executor = instant("exec", (o) => {
    const draft = o.prompt.find((m) => m.role === "assistant");
    return draft ? revisionReply(textOf(draft)) : "An instant answer.";
  });
  const floorTimes = [];
  for (let i = 0; i < 300; i++) {
    const t = performance.now();
    await generateText({ model: executor, prompt: "x", temperature: 0, seed: 7, maxRetries: 0 });
    floorTimes.push(performance.now() - t);
  }
  const floor = median(floorTimes.slice(50));
  const walls = [];
  let calls = 0;
  // Run 0 warms the JIT (the CLI's first-run figure below is the cold number a user sees).
  for (let run = 0; run < 8; run++) {
    const ctx = {
      router: fixedRouter({ challenger, executor }),
      cache: memoryCache(),
      cacheMode: "use",
      seed: 7,
      timeoutMs: 5000,
      maxRetries: 0,
      backoffMs: 1,
    };
    const t = performance.now();
    const report = await runGateEval(set, { calls: ctx });
    if (run > 0) walls.push(performance.now() - t);
    calls = report.metrics.usage.calls;
    if (report.metrics.recall.value !== 1) throw new Error("the perfect challenger should score recall 1");
  }
  const wall = median(walls);
  record("library_items", "items in the bundled set", set.items.length, "items");
  record("library_calls", "model calls (challenger + revisions)", calls, "calls");
  record("library_wall_ms", "library: eval gate, bundled set, instant model", wall, "ms");
  record("library_per_item_ms", "library: per item", wall / set.items.length, "ms");
  record("library_overhead_per_item_ms", "library: overhead per item (beyond the AI SDK's own call)", (wall - calls * floor) / set.items.length, "ms");
}

// ------------------------------------------------------------------ 2. the CLI, end to end over HTTP
const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const assistant = body.messages.find((m) => m.role === "assistant");
  const content =
    body.model === "chal" ? perfectReply(JSON.parse(body.messages.find((m) => m.role === "user").content)) : revisionReply(assistant?.content ?? "");
  res.writeHead(200, { "content-type": "application/json" });
  res.end(chatCompletion(body.model, content, { prompt_tokens: 800, completion_tokens: 120 }));
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/v1`;
const cli = (dir, args) =>
  new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: dir, DISSENT_HOME: join(dir, "home") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve({ ms: performance.now() - t, out }) : reject(new Error(`exit ${code}: ${err}`))));
  });
const cold = [];
const warm = [];
let cliCalls = 0;
for (let run = 0; run < 3; run++) {
  const dir = mkdtempSync(join(tmpdir(), "dissent-bench-eval-"));
  try {
    writeFileSync(
      join(dir, "dissent.config.yaml"),
      `providers:\n  local: { type: openai-compatible, base_url: "${url}" }\nroutes:\n  executor: { primary: "local:exec" }\n  challenger: { primary: "local:chal" }\n`,
    );
    const first = await cli(dir, ["eval", "gate", "--json"]);
    cold.push(first.ms);
    cliCalls = JSON.parse(first.out).metrics.usage.network_calls;
    const again = await cli(dir, ["eval", "gate", "--json"]);
    warm.push(again.ms);
    if (JSON.parse(again.out).metrics.usage.network_calls !== 0) throw new Error("the rerun should be answered from the cache");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const version = await cli(tmpdir(), ["--version"]).catch(() => ({ ms: 0 }));
server.close();
const coldMs = median(cold);
const warmMs = median(warm);
const per60 = (coldMs / set.items.length) * 60;
record("cli_calls", "CLI: network calls, first run", cliCalls, "calls");
record("cli_cold_ms", "CLI: eval gate, bundled set, first run (HTTP, SQLite cache)", coldMs, "ms");
record("cli_cold_per_60_items_s", "CLI: first run, per 60 items", per60 / 1000, "s", `< ${GOAL_S_PER_60} s`, per60 / 1000 < GOAL_S_PER_60);
record("cli_warm_ms", "CLI: rerun from the cache (no request)", warmMs, "ms");
record("cli_startup_ms", "CLI: process start (dissent --version)", version.ms, "ms");
record("cli_overhead_per_item_ms", "CLI: per item, first run, process start excluded", (coldMs - version.ms) / set.items.length, "ms");

const doc = { measured_at: new Date().toISOString(), node: process.version, cpus: cpus().length, set: { name: set.name, items: set.items.length }, results };
writeFileSync(OUT, `${JSON.stringify(doc, null, 2)}\n`);
const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => String(r[i]).length)));
for (const r of rows)
  console.log(
    r
      .map((c, i) => String(c).padEnd(widths[i]))
      .join("  ")
      .trimEnd(),
  );
console.log(`\nwritten to ${OUT}`);
if (Object.values(results).some((r) => r.pass === false)) process.exitCode = 1;
