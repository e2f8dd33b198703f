// node bench/library.mjs [--runs N] [--no-install] [--only SECTIONS] — the library's own cost against the bare AI SDK (issue #14).
//
// The bare AI SDK does the same calls by hand (draft, challenger with a JSON response format, revision)
// on the same instant in-process models. Figures are medians of per-run times within one process:
// machines are shared and noisy, so compare the ratios, which the goals are written in.
// Writes bench/results.library.json and prints a table.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bucket, median, recorder, round, timed } from "./lib.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const RUNS = flag("--runs", 2000);
const onlyAt = args.indexOf("--only");
/** `--only gate,middleware,ttft,heap,install` runs just those sections. */
const only = onlyAt === -1 ? undefined : new Set(args[onlyAt + 1].split(","));
const section = (name) => !only || only.has(name);

// ------------------------------------------------------------------ the workload, shared by every section
const PROMPT = "At what temperature does water boil?";
const DRAFT = "Water boils at 100 degrees Celsius at sea level, always and everywhere, whatever the pressure.";
const REVISED = "Water boils at 100 degrees Celsius at sea level; at lower pressure it boils at a lower temperature.";
const PASS = JSON.stringify({ concerns: [], verdict: "pass" });
const WORK = JSON.stringify({
  concerns: [
    { evidence: "always and everywhere, whatever the pressure", category: "factual_risk", severity: "high", concern: "The boiling point depends on pressure." },
  ],
  verdict: "needs_work",
});
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const result = (text) => ({ content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] });

/**
 * An instant provider-spec v3 model answering from a function of the call. A plain object, not the
 * SDK's MockLanguageModelV3, which records every call (its heap would grow with the runs).
 */
function instant(id, answer, { delayMs = 0, chunk = 8 } = {}) {
  const wait = () => (delayMs ? new Promise((r) => setTimeout(r, delayMs)) : undefined);
  return {
    specificationVersion: "v3",
    provider: "bench",
    modelId: id,
    supportedUrls: {},
    async doGenerate(options) {
      await wait();
      return result(answer(options));
    },
    async doStream(options) {
      const text = answer(options);
      const pieces = text.match(new RegExp(`[\\s\\S]{1,${chunk}}`, "g")) ?? [];
      const parts = [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "0" },
        ...pieces.map((delta) => ({ type: "text-delta", id: "0", delta })),
        { type: "text-end", id: "0" },
        { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
      ];
      let i = 0;
      return {
        stream: new ReadableStream({
          async pull(c) {
            if (i === 0) await wait();
            if (i < parts.length) c.enqueue(parts[i++]);
            else c.close();
          },
        }),
      };
    },
  };
}
/** The executor: the draft first; asked again after a critique (a revision), the revised text. */
const revisingText = (o) => (o.prompt.length > 2 || o.prompt.some((m) => m.role === "assistant") ? REVISED : DRAFT);

const exec = instant("exec", revisingText);
const challengers = { pass: instant("chal", () => PASS), needs_work: instant("chal", () => WORK) };
const common = { temperature: 0, seed: 7, maxRetries: 0 };

/** The JSON Schema of the audit reply as a plain `jsonSchema` (no validation): the minimal floor #14 measured against. */
const MINIMAL_SCHEMA = {
  type: "object",
  properties: {
    concerns: {
      type: "array",
      items: {
        type: "object",
        properties: { evidence: { type: "string" }, category: { type: "string" }, severity: { type: "string" }, concern: { type: "string" } },
      },
    },
    verdict: { type: "string", enum: ["pass", "needs_work"] },
  },
  required: ["concerns", "verdict"],
};

/**
 * The bare AI SDK by hand: the draft, the audit (structured output, parsed), the revision on
 * needs_work. Imports `ai` (and, for the fair floor, zod) only.
 *
 * - `fair` (the goal's floor): what an application writing this gate itself would send and check —
 *   dissent's own prompt files as its prompts (same sizes), the challenger input as the same
 *   pretty-printed JSON, the concerns in a data block of the same length, and the reply validated
 *   against a zod schema of the same shape through `Output.object` (built once, as a careful hand
 *   would: its JSON Schema is converted once).
 * - `minimal`: one-word system prompts and an unvalidated JSON schema (the floor issue #14 measured).
 */
async function bareWorkload(kind = "fair") {
  const { generateText, jsonSchema, Output } = await import("ai");
  const fair = kind === "fair";
  const prompt = (name) => readFileSync(join(ROOT, "prompts", name), "utf8").trim();
  const execSystem = fair ? prompt("executor.md") : "Answer.";
  const auditSystem = fair ? prompt("challenger.md") : "Audit.";
  const revise = fair ? prompt("revision.md") : "Revise once:";
  let output;
  if (fair) {
    const { z } = await import("zod");
    const concern = z.object({
      evidence: z.string(),
      category: z.enum(["policy_compliance", "boundary_violation", "factual_risk", "unverifiable_claim", "internal_contradiction", "missing_verification"]),
      severity: z.enum(["critical", "high", "medium", "low"]),
      concern: z.string().trim().min(1),
      suggested_fix: z.string().optional(),
    });
    output = Output.object({ schema: z.object({ concerns: z.array(concern), verdict: z.enum(["pass", "needs_work"]) }) });
  }
  // The same bytes as dissent's data block around the concerns, with a fixed tag (an application has no need to hash).
  const block = (json) => `<data kind="audit_concerns" tag="0a1b2c3d">\n${json}\n</data tag="0a1b2c3d">`;
  return (verdict) => async () => {
    const draft = await generateText({ model: exec, system: execSystem, prompt: PROMPT, ...common });
    const input = { prompt: PROMPT, executor_output: draft.text, constraints: [], policies: [] };
    const audit = await generateText({
      model: challengers[verdict],
      system: auditSystem,
      prompt: fair ? JSON.stringify(input, null, 2) : JSON.stringify(input),
      output: fair ? output : Output.object({ schema: jsonSchema(MINIMAL_SCHEMA) }),
      ...common,
    });
    if (audit.output.verdict === "pass") return draft.text;
    const concerns = audit.output.concerns;
    const revision = await generateText({
      model: exec,
      system: execSystem,
      messages: [
        { role: "user", content: PROMPT },
        { role: "assistant", content: draft.text },
        { role: "user", content: fair ? `${revise}\n\n${block(JSON.stringify(concerns, null, 2))}` : `${revise} ${JSON.stringify(concerns)}` },
      ],
      ...common,
    });
    return revision.text;
  };
}

/** `runAudit` from the package entry (or, for the heap figure as issue #14 first measured it, from its own module). */
async function gateWorkload(from = "dissent") {
  const { runAudit } = await import(from === "module" ? "../dist/gate/run-audit.js" : "dissent");
  return (verdict) => () => runAudit({ executor: exec, challenger: challengers[verdict], prompt: PROMPT });
}

/** One generateText through a model wrapped with `auditMiddleware` from `dissent/ai-sdk`. */
async function middlewareWorkload() {
  const { generateText, wrapLanguageModel } = await import("ai");
  const { auditMiddleware } = await import("dissent/ai-sdk");
  const wrapped = {
    pass: wrapLanguageModel({ model: exec, middleware: auditMiddleware({ challenger: challengers.pass, onAudit: () => undefined }) }),
    needs_work: wrapLanguageModel({ model: exec, middleware: auditMiddleware({ challenger: challengers.needs_work, onAudit: () => undefined }) }),
  };
  return (verdict) => () => generateText({ model: wrapped[verdict], prompt: PROMPT, ...common });
}

async function workloads() {
  return { bare: await bareWorkload("fair"), minimal: await bareWorkload("minimal"), gate: await gateWorkload(), middleware: await middlewareWorkload() };
}

// ------------------------------------------------------------------ statistics
const summary = (b, runs) => ({ wall: median(b.wall), cpu: b.cpu / runs });

/**
 * Runs of each workload before any is timed: V8 tiers code up over the first ~1,000 calls, and a
 * ratio taken while one side is still warming measures the JIT, not the work (the solo figure ran
 * first after 100 and read ~0.15× above the interleaved one for it).
 */
const WARMUP = 1000;

/** Solo: each workload alone, in alternating blocks of 100 runs (so drift in the machine's load hits both alike). */
async function solo(a, b, runs) {
  const ta = bucket();
  const tb = bucket();
  for (let i = 0; i < WARMUP; i++) await a(), await b();
  for (let done = 0; done < runs; done += 100) {
    for (let i = 0; i < 100; i++) await timed(a, ta);
    for (let i = 0; i < 100; i++) await timed(b, tb);
  }
  return { a: summary(ta, runs), b: summary(tb, runs) };
}

/** Interleaved: one run of each in turn, the order swapped every run. */
async function interleaved(a, b, runs) {
  const ta = bucket();
  const tb = bucket();
  for (let i = 0; i < WARMUP; i++) await a(), await b();
  for (let i = 0; i < runs; i++) {
    if (i % 2) await timed(b, tb), await timed(a, ta);
    else await timed(a, ta), await timed(b, tb);
  }
  return { a: summary(ta, runs), b: summary(tb, runs) };
}

/** Records a comparison: the ratio by CPU time (the goal) and by median wall time (shown beside it). */
function compare(key, label, r, goal) {
  const ratio = r.b.cpu / r.a.cpu;
  put(key, `${label} (CPU; wall ${round(r.b.wall / r.a.wall, 2)}×)`, ratio, "×", goal, goal ? ratio <= 1.2 : undefined);
  results[key].wall_ratio = round(r.b.wall / r.a.wall);
  results[key].ms = { bare_cpu: round(r.a.cpu), ours_cpu: round(r.b.cpu), bare_wall: round(r.a.wall), ours_wall: round(r.b.wall) };
}

// ------------------------------------------------------------------ a child process: heap after GC, timers left
if (args[0] === "--heap-child") {
  const which = args[1];
  const make =
    which === "bare" || which === "bare+gate-module"
      ? () => bareWorkload("fair")
      : which === "bare-minimal"
        ? () => bareWorkload("minimal")
        : which === "middleware"
          ? middlewareWorkload
          : () => gateWorkload(which === "gate-module" ? "module" : "dissent");
  // `bare+gate-module`: the floor's runs in a process that has also imported the gate's module (never
  // called): what the imported code alone costs the floor's runs (bench/gate-instructions.mjs).
  if (which === "bare+gate-module") await import("../dist/gate/run-audit.js");
  const fn = (await make())("needs_work");
  for (let i = 0; i < RUNS; i++) await fn();
  const timers = process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await new Promise((r) => setImmediate(r));
  }
  process.stdout.write(JSON.stringify({ heap_mb: process.memoryUsage().heapUsed / 1e6, timers }));
  process.exit(0);
}

/** Heap after GC in a fresh process that imports only what it uses (the bare SDK: `ai`; dissent: the package): the median of 3 processes. */
function heapOf(which) {
  const runs = [heapOnce(which), heapOnce(which), heapOnce(which)];
  return { heap_mb: median(runs.map((r) => r.heap_mb)), timers: Math.max(...runs.map((r) => r.timers)) };
}

function heapOnce(which) {
  const r = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--heap-child", which, "--runs", String(RUNS)], {
    cwd: ROOT,
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`heap child ${which} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// ------------------------------------------------------------------ install size
function du(dir) {
  let bytes = 0;
  let packages = 0;
  const walk = (d, depth) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isSymbolicLink()) continue;
      if (e.isDirectory()) {
        if (d.endsWith("node_modules") && !e.name.startsWith("@") && !e.name.startsWith(".")) packages++;
        if (d.endsWith("node_modules") && e.name.startsWith("@")) {
          for (const s of readdirSync(p, { withFileTypes: true })) if (s.isDirectory()) packages++;
        }
        walk(p, depth + 1);
      } else bytes += statSync(p).size;
    }
  };
  walk(dir, 0);
  return { mb: bytes / 1e6, packages };
}

/**
 * `npm pack`, then a user's install of the tarball into a scratch folder, from the registry: the
 * default install (`npm install dissent`: required and optional dependencies, ADR-024) and the
 * library's minimum (`--omit=optional`). Scripts are off (no native build is timed or measured).
 */
function installSize() {
  const work = mkdtempSync(join(tmpdir(), "dissent-install-"));
  try {
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
        cwd: ROOT,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }),
    )[0];
    const measure = (name, spec, omitOptional = true) => {
      const dir = join(work, name);
      execFileSync("mkdir", ["-p", dir]);
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `scratch-${name}`, private: true }));
      const started = performance.now();
      execFileSync(
        "npm",
        [
          "install",
          spec,
          ...(omitOptional ? ["--omit=optional"] : []),
          "--omit=dev",
          "--ignore-scripts",
          "--no-audit",
          "--no-fund",
          "--loglevel=error",
          "--fetch-timeout=30000",
          "--fetch-retries=1",
        ],
        { cwd: dir, stdio: ["ignore", "ignore", "pipe"], timeout: 300_000 },
      );
      return { ...du(join(dir, "node_modules")), seconds: (performance.now() - started) / 1000 };
    };
    const whole = measure("dissent-default", join(work, packed.filename), false);
    const dissent = measure("dissent", join(work, packed.filename));
    const sdk = measure(
      "ai",
      "ai@" + JSON.parse(execFileSync("node", ["-p", "JSON.stringify(require('./node_modules/ai/package.json').version)"], { cwd: ROOT, encoding: "utf8" })),
    );
    return { whole, dissent, sdk, tarball_mb: packed.size / 1e6, unpacked_mb: packed.unpackedSize / 1e6 };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ the run
const { results, rows, record: put } = recorder({ runs: RUNS, node: process.version, date: new Date().toISOString() }, { digits: 3 });

const w = section("gate") || section("middleware") ? await workloads() : undefined;

// 1. runAudit against the bare SDK doing the same three calls by hand (needs_work: draft, audit, revision).
if (section("gate")) {
  const s = await solo(w.bare("needs_work"), w.gate("needs_work"), RUNS);
  put("bare_sdk_3_calls_ms", "bare AI SDK, 3 calls by hand (CPU per run)", s.a.cpu, "ms");
  put("run_audit_3_calls_ms", "runAudit, needs_work, 3 calls (CPU per run)", s.b.cpu, "ms");
  compare("run_audit_ratio_solo", "runAudit / bare SDK, solo", s, "≤ 1.2");
  compare("run_audit_ratio_interleaved", "runAudit / bare SDK, interleaved", await interleaved(w.bare("needs_work"), w.gate("needs_work"), RUNS), "≤ 1.2");
  compare("run_audit_ratio_pass", "runAudit / bare SDK, pass (2 calls), interleaved", await interleaved(w.bare("pass"), w.gate("pass"), Math.min(RUNS, 1000)));
  // Against #14's minimal floor (one-word prompts, no validation), for comparison with the earlier figures: no goal.
  compare(
    "run_audit_ratio_minimal_floor",
    "runAudit / minimal floor (#14's), interleaved",
    await interleaved(w.minimal("needs_work"), w.gate("needs_work"), RUNS),
  );
}

// 2. The middleware: one generateText through the wrapped model against the same calls by hand.
for (const verdict of section("middleware") ? ["pass", "needs_work"] : []) {
  // The middleware's own draft has no system prompt: it stays against the minimal floor, as #14 measured it.
  const r = await interleaved(w.minimal(verdict), w.middleware(verdict), RUNS);
  compare(`middleware_${verdict}_ratio`, `middleware generateText / bare SDK, ${verdict}`, r, "≤ 1.2");
  put(`middleware_${verdict}_overhead_ms`, `middleware overhead per generateText, ${verdict} (CPU)`, r.b.cpu - r.a.cpu, "ms");
}

// 3. Time to first token of streamText, audited and not, with a 100 ms model (and a 100 ms challenger).
if (section("ttft")) {
  const { streamText, wrapLanguageModel } = await import("ai");
  const { auditMiddleware } = await import("dissent/ai-sdk");
  const slow = instant("slow", revisingText, { delayMs: 100 });
  const ttft = async (model) => {
    const times = [];
    for (let k = 0; k < 7; k++) {
      const t = performance.now();
      const s = streamText({ model, prompt: PROMPT, maxRetries: 0 });
      for await (const _ of s.textStream) {
        times.push(performance.now() - t);
        break;
      }
      await s.consumeStream?.();
    }
    return median(times);
  };
  const plain = await ttft(slow);
  put("ttft_unaudited_ms", "streamText TTFT, unaudited (100 ms model)", plain, "ms");
  for (const verdict of ["pass", "needs_work"]) {
    const challenger = instant("chal", () => (verdict === "pass" ? PASS : WORK), { delayMs: 100 });
    const audited = await ttft(wrapLanguageModel({ model: slow, middleware: auditMiddleware({ challenger, onAudit: () => undefined }) }));
    put(`ttft_audited_${verdict}_ms`, `streamText TTFT, audited, ${verdict} (100 ms models)`, audited, "ms");
  }
}

// 4. Heap after GC after the runs, each in a fresh process that imports only what it uses; timers left alive.
if (section("heap")) {
  const bare = heapOf("bare");
  put("heap_bare_mb", `heap after GC, ${RUNS} bare SDK runs, the fair floor (imports ai and zod)`, bare.heap_mb, "MB");
  put("heap_bare_minimal_mb", `heap after GC, ${RUNS} bare SDK runs, #14's minimal floor (imports ai)`, heapOf("bare-minimal").heap_mb, "MB");
  const heaps = [
    ["gate", `${RUNS} runAudit runs (imports "dissent")`],
    ["gate-module", `${RUNS} runAudit runs (imports the gate's module, as #14 measured)`],
    ["middleware", `${RUNS} middleware runs (imports "dissent/ai-sdk")`],
  ];
  for (const [which, what] of heaps) {
    const h = heapOf(which);
    const key = which.replace("-", "_");
    put(`heap_${key}_mb`, `heap after GC, ${what}`, h.heap_mb, "MB");
    // The import-heap goal (1.1× the floor) is withdrawn (issue 31 item 9): the exported schemas are ordinary zod objects, built at import. The figure stays.
    put(`heap_${key}_ratio`, `  … / bare SDK`, h.heap_mb / bare.heap_mb, "×");
    put(`timers_left_${key}`, `  timers alive after the last call`, h.timers, "", "0", h.timers === 0);
  }
}

// 5. A library user's install: the package with its required dependencies (optional ones omitted).
if (section("install") && !args.includes("--no-install")) {
  try {
    const s = installSize();
    put("install_default_mb", `install: npm install dissent, the default (${s.whole.packages} packages)`, s.whole.mb, "MB", "≤ 100", s.whole.mb <= 100);
    put("install_default_s", "  … its time, from the registry", s.whole.seconds, "s");
    put("install_mb", `install: dissent + required deps (${s.dissent.packages} packages)`, s.dissent.mb, "MB");
    put("install_sdk_mb", `install: ai alone (${s.sdk.packages} packages)`, s.sdk.mb, "MB");
    put("tarball_mb", "npm pack tarball", s.tarball_mb, "MB");
    results.install_packages = s.dissent.packages;
  } catch (e) {
    put("install_mb", `install size (not measured: ${String(e.message).split("\n")[0]})`, null, "MB");
  }
}

if (!only) writeFileSync(join(ROOT, "bench/results.library.json"), `${JSON.stringify(results, null, 2)}\n`);
const width = Math.max(...rows.map((r) => r[0].length));
for (const [label, value, goal, ok] of rows) console.log(`${label.padEnd(width)}  ${value.padStart(12)}  ${goal.padEnd(7)} ${ok}`);
