// node bench/engine.mjs (after `npm run build`) — the in-process engine (docs/local-engine.md) on a tiny GGUF:
// load time, tokens per second, and the CLI's cold start with and without a llama-cpp route. Figures go
// to bench/results.engine.json. Medians within one run; machines are shared and noisy.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { median, round } from "./lib.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "dist/cli/bin.js");
const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const results = {};
const rows = [];
const record = (key, label, value, unit, note) => {
  results[key] = { value: round(value, unit === "ms" ? 1 : 0), unit, ...(note ? { note } : {}) };
  rows.push([label, `${round(value, unit === "ms" ? 1 : 0)} ${unit}`, note ?? ""]);
};

// The test suite's GGUF writer, bundled for plain Node.
await build({
  entryPoints: [join(ROOT, "test/support/tiny-gguf.ts")],
  outfile: join(ROOT, "bench/.build/tiny-gguf.mjs"),
  format: "esm",
  platform: "node",
  logLevel: "error",
});
const { writeTinyGguf, TINY_CHAT } = await import("./.build/tiny-gguf.mjs");
const dir = mkdtempSync(join(tmpdir(), "dissent-bench-engine-"));
const chat = writeTinyGguf(join(dir, "chat.gguf"), TINY_CHAT);
const _raw = writeTinyGguf(join(dir, "raw.gguf"), { contextLength: 8192 }); // no end token: generates until the limit
const wide = writeTinyGguf(join(dir, "wide.gguf"), { embd: 256, layers: 4, heads: 8, contextLength: 8192, seed: 3 });

// ---------------------------------------------------------------- 1. load time (in process)
const { createLlamaEngines, silentReporter } = await import("../dist/engines/llama-cpp/index.js");
const engines = createLlamaEngines({
  config: { source: "bench", baseDir: dir, modelsDir: join(dir, "models"), offline: false, providers: {} },
  env: {},
  reporter: silentReporter,
});
const provider = (model, extra = {}) => ({ type: "llama-cpp", model, threads: THREADS, gpu: false, context_size: 4096, ...extra });
let t = performance.now();
const first = await engines.create("b", provider("./chat.gguf"), "m");
record("first_load_ms", "first model: import node-llama-cpp + start llama.cpp + load", performance.now() - t, "ms", `${chat.bytes} B model`);
{
  const times = [];
  for (let i = 0; i < 5; i++) {
    // A distinct context size is a distinct loaded model: this times loading alone, the runtime warm.
    t = performance.now();
    await engines.create("b", provider("./chat.gguf", { context_size: 1024 + i * 64 }), "m");
    times.push(performance.now() - t);
  }
  record("model_load_ms", "model load (runtime warm), tiny", median(times), "ms", `${round(chat.bytes / 1024, 0)} KiB`);
  t = performance.now();
  await engines.create("b", provider("./wide.gguf"), "m");
  record("model_load_wide_ms", "model load (runtime warm), wider", performance.now() - t, "ms", `${round(wide.bytes / 1048576, 1)} MiB`);
}

// ---------------------------------------------------------------- 2. tokens per second
const ask = (text, extra = {}) => ({
  prompt: [
    { role: "system", content: "You audit drafts." },
    { role: "user", content: [{ type: "text", text }] },
  ],
  temperature: 0,
  seed: 7,
  ...extra,
});
async function rate(model, options, runs = 5) {
  const perSec = [];
  const prompt = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = await model.doGenerate(options(i));
    const ms = performance.now() - t0;
    perSec.push((r.usage.outputTokens.total ?? 0) / (ms / 1000));
    prompt.push(r.usage.inputTokens.total ?? 0);
  }
  return { perSec: median(perSec), promptTokens: median(prompt) };
}
{
  const rawModel = await engines.create("b", provider("./raw.gguf"), "m");
  const gen = await rate(rawModel, (i) => ask(`Write freely ${i}.`, { maxOutputTokens: 256 }));
  record("decode_tok_s", "generation, free text (256 tokens, prompt included)", gen.perSec, "tok/s", `tiny, ${THREADS} thread`);
  const { auditReplySchema } = await import("../dist/gate/challenge.js");
  const schema = auditReplySchema().jsonSchema;
  const json = await rate(first, (i) => ask(`Draft ${i}: water boils at 100 C.`, { responseFormat: { type: "json", schema } }));
  record("grammar_tok_s", "generation under the audit JSON grammar", json.perSec, "tok/s", "tiny, short JSON replies, prompt included");
  const long = "The draft under review. ".repeat(120);
  const pp = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const r = await rawModel.doGenerate(ask(`${long} ${i}`, { maxOutputTokens: 1 }));
    pp.push((r.usage.inputTokens.total ?? 0) / ((performance.now() - t0) / 1000));
  }
  record("prompt_tok_s", "prompt evaluation (~3000-token prompt)", median(pp), "tok/s", "tiny");
  const wideModel = await engines.create("b", provider("./wide.gguf"), "m");
  const w = await rate(wideModel, (i) => ask(`Write freely ${i}.`, { maxOutputTokens: 128 }), 3);
  record("decode_wide_tok_s", "generation, free text, wider model", w.perSec, "tok/s", `${round(wide.bytes / 1048576, 1)} MiB`);
  // Four requests at once on one model: its two sequences batch into one decode, the rest queue.
  const t0 = performance.now();
  const four = await Promise.all([0, 1, 2, 3].map((i) => rawModel.doGenerate(ask(`Parallel ${i}.`, { maxOutputTokens: 128 }))));
  const tokens = four.reduce((n, r) => n + (r.usage.outputTokens.total ?? 0), 0);
  record("batched_tok_s", "4 concurrent requests, one model (2 sequences)", tokens / ((performance.now() - t0) / 1000), "tok/s", "aggregate");
}
await engines.dispose();

// ---------------------------------------------------------------- 3. CLI cold start
function cli(args, cwd, env = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`dissent ${args.join(" ")} exited ${code}: ${err}`))));
  });
}
async function coldStart(args, cwd, env, runs = 11) {
  await cli(args, cwd, env);
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await cli(args, cwd, env));
  return median(times);
}
{
  const plain = mkdtempSync(join(tmpdir(), "dissent-bench-plain-"));
  const local = mkdtempSync(join(tmpdir(), "dissent-bench-local-"));
  writeTinyGguf(join(local, "tiny.gguf"), TINY_CHAT);
  writeFileSync(
    join(local, "dissent.config.yaml"),
    `providers:\n  tiny: { type: llama-cpp, model: ./tiny.gguf, threads: ${THREADS}, gpu: false, context_size: 8192 }\nroutes:\n  executor: { primary: "tiny:drafter" }\n  challenger: { primary: "tiny:judge" }\n`,
  );
  // Interleaved, so load on a shared machine falls on both alike.
  await cli(["--version"], plain, {});
  await cli(["--version"], local, {});
  const a = [];
  const b = [];
  for (let i = 0; i < 21; i++) {
    a.push(await cli(["--version"], plain, {}));
    b.push(await cli(["--version"], local, {}));
  }
  const without = median(a);
  const withLocal = median(b);
  record("cli_version_ms", "dissent --version, no config", without, "ms");
  record("cli_version_llama_route_ms", "dissent --version, llama-cpp route configured", withLocal, "ms", `${round(withLocal - without, 1)} ms difference`);
  const env = { DISSENT_HOME: join(local, "home") };
  const args = ["run", "--audit", "What is 2+2?"];
  record("cli_audit_first_ms", "dissent run --audit, first (engine loads, tiny model)", await cli(args, local, env), "ms");
  record("cli_audit_cached_ms", "dissent run --audit, cached (engine never loads)", await coldStart(args, local, env, 5), "ms");
  // With no config at all, loading it asks Ollama first (docs/local-engine.md): what that costs when nothing answers.
  const { probeOllamaSync } = await import("../dist/config/defaults.js");
  const probes = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    probeOllamaSync("http://127.0.0.1:9");
    probes.push(performance.now() - t0);
  }
  record("noconfig_ollama_probe_ms", "no-config Ollama probe, nothing listening", median(probes), "ms", "worker thread; 300 ms timeout");
  rmSync(plain, { recursive: true, force: true });
  rmSync(local, { recursive: true, force: true });
}
rmSync(dir, { recursive: true, force: true });

const out = { measured_at: new Date().toISOString(), node: process.version, cpus: cpus().length, threads: THREADS, results };
writeFileSync(join(ROOT, "bench/results.engine.json"), `${JSON.stringify(out, null, 2)}\n`);
const w0 = Math.max(...rows.map((r) => r[0].length));
const w1 = Math.max(...rows.map((r) => r[1].length));
for (const [a, b, c] of rows) console.log(`${a.padEnd(w0)}  ${b.padStart(w1)}  ${c}`);
console.log("\nwritten to bench/results.engine.json");
