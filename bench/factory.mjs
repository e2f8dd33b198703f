// node bench/factory.mjs — `dissent factory` (issue #12): throughput on PostgreSQL with one and two
// workers, framework overhead per issue on SQLite vs PostgreSQL, takeover after kill -9, and wall
// time against the critical-path floor with a 100 ms model. Real CLI processes (dist/, so build
// first: npm run build), a model server on 127.0.0.1, a private PostgreSQL (or
// DISSENT_BENCH_DATABASE_URL pointing at an empty server you own). Figures to bench/results.factory.json.
// Machines are shared and noisy: compare ratios within one run, not absolutes across runs.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PIPELINE_ROLES, STAGES } from "../dist/pipeline/stages.js";
import { openPostgresStore } from "../dist/store/postgres.js";
import { openSqliteStore } from "../dist/store/sqlite.js";
import { chatCompletion, median, recorder, sleep } from "./lib.mjs";

/** The CLI under test: this checkout's build, or another's (`DISSENT_BENCH_BIN`, a baseline to alternate with). */
const BIN = process.env.DISSENT_BENCH_BIN ?? fileURLToPath(new URL("../dist/cli/bin.js", import.meta.url));
const OUT = fileURLToPath(new URL("./results.factory.json", import.meta.url));
/** Preloaded into each factory process: its CPU time, written on exit (bench/cpu-on-exit.cjs). */
const CPU_HOOK = fileURLToPath(new URL("./cpu-on-exit.cjs", import.meta.url));

const onlyAt = process.argv.indexOf("--only");
/** `--only throughput,overhead,takeover,floor` runs just those sections (the results file is written only by a whole run). */
const only = onlyAt === -1 ? undefined : new Set(process.argv[onlyAt + 1].split(","));
const section = (name) => !only || only.has(name);

// --- a model server: an agreeable council, every reply after `delayMs` ---------------------------
function agreeable(model) {
  if (model === "complexity_gate") return "LOAD-BEARING";
  if (["discover.brief", "shape.writer", "planner"].includes(model)) return `# ${model}\n\nArtifact written by ${model}.`;
  if (model === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: ["A user sees the retry succeed"] });
  return JSON.stringify({ findings: [] });
}
async function modelServer() {
  let delayMs = 0;
  let requests = 0;
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    requests++;
    if (delayMs) await sleep(delayMs);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(chatCompletion(body.model, agreeable(body.model), { prompt_tokens: 11, completion_tokens: 7 }));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    setDelay: (ms) => void (delayMs = ms),
    requests: () => requests,
    close: () => new Promise((r) => server.close(r)),
  };
}

// --- PostgreSQL: the tests' private cluster (bundled from test/support/postgres.ts), or yours -----
async function postgres() {
  if (process.env.DISSENT_BENCH_DATABASE_URL) {
    const base = process.env.DISSENT_BENCH_DATABASE_URL;
    let n = 0;
    const pg = (await import("pg")).default;
    return {
      async createDatabase() {
        const name = `dissent_bench_${process.pid}_${++n}`;
        const c = new pg.Client({ connectionString: base });
        await c.connect();
        await c.query(`CREATE DATABASE ${name}`);
        await c.end();
        const u = new URL(base);
        u.pathname = `/${name}`;
        return u.toString();
      },
      stop: async () => undefined,
    };
  }
  const { build } = await import("esbuild");
  const dir = mkdtempSync(join(tmpdir(), "dissent-bench-pg-"));
  const outfile = join(dir, "postgres.mjs");
  // Self-contained (pg included), so it runs from a temp dir; vitest is only imported by a function the bench never calls.
  await build({
    entryPoints: [fileURLToPath(new URL("../test/support/postgres.ts", import.meta.url))],
    bundle: true,
    platform: "node",
    format: "esm",
    external: ["pg-native", "vitest"],
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    outfile,
    logLevel: "silent",
  });
  const { startPostgres } = await import(outfile);
  const cluster = await startPostgres();
  return {
    createDatabase: () => cluster.createDatabase(),
    stop: async () => {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// --- a world: a home, a config, N issues labelled dissent-find ----------------------------------
async function world(model, { postgresUrl, factory = "poll_interval_s: 0.5" } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "dissent-bench-factory-"));
  const config = [
    "providers:",
    `  local: { type: openai-compatible, base_url: "${model.url}" }`,
    "routes:",
    '  default: { primary: "local:default" }',
    ...PIPELINE_ROLES.map((r) => `  ${r}: { primary: "local:${r}" }`),
    "retry_backoff_ms: 10",
    `factory: { ${factory} }`,
    ...(postgresUrl ? ["store: { type: postgres }"] : []),
  ].join("\n");
  writeFileSync(join(dir, "dissent.config.yaml"), `${config}\n`);
  const env = { PATH: process.env.PATH ?? "", HOME: dir, DISSENT_HOME: join(dir, "home"), ...(postgresUrl ? { DISSENT_DATABASE_URL: postgresUrl } : {}) };
  const open = () => (postgresUrl ? openPostgresStore(postgresUrl) : openSqliteStore(join(dir, "home")));
  return {
    dir,
    env,
    async issues(n) {
      const store = await open();
      for (let i = 0; i < n; i++)
        await store.issues.create({ title: `Issue ${i + 1}: retry uploads on path ${i}`, body: "Uploads fail on flaky networks.", labels: ["dissent-find"] });
      await store.close();
    },
    async statuses() {
      const store = await open();
      const plans = await store.plans();
      await store.close();
      return plans.map((p) => p.status);
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Starts `dissent factory …`; lines (JSON) arrive as they are printed. */
let cpuFiles = 0;
function factory(w, args, extraEnv = {}) {
  const cpuOut = join(w.dir, `cpu-${cpuFiles++}.json`);
  const env = { ...w.env, NODE_OPTIONS: `--require ${CPU_HOOK}`, DISSENT_BENCH_CPU_OUT: cpuOut, ...extraEnv };
  const child = spawn(process.execPath, [BIN, "factory", "--json", ...args], { cwd: w.dir, env, stdio: ["ignore", "pipe", "pipe"] });
  const lines = [];
  let buf = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    buf += d.toString("utf8");
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line) lines.push({ ...JSON.parse(line), seenAt: Date.now() });
    }
  });
  child.stderr.on("data", (d) => (stderr += d.toString("utf8")));
  /** The process's CPU time (user + system) in ms, once it has exited; null when it left no figure (killed). */
  const cpuMs = () => {
    try {
      const { user, system } = JSON.parse(readFileSync(cpuOut, "utf8"));
      return (user + system) / 1000;
    } catch {
      return null; // a process killed with -9 writes nothing
    }
  };
  const done = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stderr, cpuMs: cpuMs() })));
  return { child, lines, done };
}

/** Planning wall time of a set of lines: first `started` to last `finished`, in ms. */
function planningWall(lines) {
  const starts = lines.filter((l) => l.event === "started").map((l) => Date.parse(l.at));
  const ends = lines.filter((l) => l.event === "finished").map((l) => Date.parse(l.at));
  return Math.max(...ends) - Math.min(...starts);
}

async function once(w, concurrency, workers = 1) {
  const t0 = Date.now();
  const runs = Array.from({ length: workers }, () => factory(w, ["--once", "--concurrency", String(concurrency)]));
  const results = await Promise.all(runs.map((r) => r.done));
  for (const r of results) if (r.code !== 0) throw new Error(`factory exited ${r.code}: ${r.stderr}`);
  const lines = runs.flatMap((r) => r.lines);
  return {
    lines,
    processWall: Date.now() - t0,
    planningWall: planningWall(lines),
    cpuMs: results.reduce((sum, r) => sum + (r.cpuMs ?? Number.NaN), 0),
    finished: lines.filter((l) => l.event === "finished").length,
    perWorker: runs.map((r) => r.lines.filter((l) => l.event === "finished").length),
  };
}

/** Each issue's planning time (its `started` to its `finished`), in ms. */
function perIssue(lines) {
  const start = new Map(lines.filter((l) => l.event === "started").map((l) => [l.issue, Date.parse(l.at)]));
  return lines.filter((l) => l.event === "finished").map((l) => Date.parse(l.at) - (start.get(l.issue) ?? Date.parse(l.at)));
}

// --- the transport alone: a model server in its own process, the provider with either fetch ------
const SERVER_CHILD = `
const { createServer } = require("node:http");
const reply = ${JSON.stringify(chatCompletion("m", JSON.stringify({ findings: [] }), { prompt_tokens: 11, completion_tokens: 7 }))};
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => { res.writeHead(200, { "content-type": "application/json" }); res.end(reply); });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port) + "\\n"));
process.stdin.on("end", () => process.exit(0)).resume();`;

async function transportCpu() {
  const child = spawn(process.execPath, ["-e", SERVER_CHILD], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise((r) => child.stdout.once("data", (d) => r(Number(String(d).trim()))));
  const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
  const { generateText } = await import("ai");
  const { cappedFetch } = await import("../dist/models/reply-cap.js");
  const { sseTolerant } = await import("../dist/models/sse-fetch.js");
  const { httpFetch } = await import("../dist/models/http-fetch.js");
  const limit = 8 * 1024 * 1024;
  const modelWith = (fetch) => createOpenAICompatible({ name: "local", baseURL: `http://127.0.0.1:${port}/v1`, fetch, includeUsage: true }).chatModel("m");
  const models = { fetch: modelWith(sseTolerant(cappedFetch(limit))), transport: modelWith(sseTolerant(httpFetch(limit))) };
  const prompt = "Review this plan: retry uploads on flaky networks with backoff. ".repeat(40);
  const block = async (model, calls) => {
    const before = process.cpuUsage();
    let next = 0;
    const lane = async () => {
      while (next++ < calls) await generateText({ model, prompt, temperature: 0, seed: 1 });
    };
    await Promise.all(Array.from({ length: 8 }, lane));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / calls;
  };
  for (const m of Object.values(models)) await block(m, 200); // warm: JIT, connections
  const samples = { fetch: [], transport: [] };
  for (let rep = 0; rep < 5; rep++) for (const k of rep % 2 ? ["transport", "fetch"] : ["fetch", "transport"]) samples[k].push(await block(models[k], 400));
  child.stdin.end();
  console.log(
    `transport CPU µs per call: fetch ${samples.fetch.map((x) => x.toFixed(0)).join(" ")}; transport ${samples.transport.map((x) => x.toFixed(0)).join(" ")}`,
  );
  return { fetch: median(samples.fetch), transport: median(samples.transport) };
}

// ------------------------------------------------------------------------------------------------
const { results, rows, record } = recorder({ machine: { cpus: cpus().length, node: process.version }, at: new Date().toISOString() });

const model = await modelServer();
const pg = await postgres();
const N = 20;
try {
  // 1. Instant model: issues planned per second on PostgreSQL, one worker vs two (each --concurrency 4).
  const through = [];
  for (const workers of section("throughput") ? [1, 2] : []) {
    const samples = [];
    for (let rep = 0; rep < 2; rep++) {
      const w = await world(model, { postgresUrl: await pg.createDatabase() });
      await w.issues(N);
      const r = await once(w, 4, workers);
      if (r.finished !== N) throw new Error(`${workers} worker(s) finished ${r.finished} of ${N}`);
      samples.push(N / (r.planningWall / 1000));
      w.cleanup();
    }
    through.push(median(samples));
    record(
      `pg_issues_per_s_${workers}w`,
      `PostgreSQL, instant model: issues/s, ${workers} worker${workers > 1 ? "s" : ""} × concurrency 4`,
      median(samples),
      "issues/s",
    );
  }
  if (section("throughput"))
    record(
      "pg_2w_over_1w",
      `PostgreSQL: 2 workers / 1 worker throughput (${cpus().length} cores, model server and database on the same machine)`,
      through[1] / through[0],
      "×",
    );

  // 2. Instant model, one issue at a time: framework overhead per issue (model time ≈ 0), SQLite vs PostgreSQL.
  const overhead = {};
  for (const kind of section("overhead") ? ["sqlite", "postgres"] : []) {
    const w = await world(model, kind === "postgres" ? { postgresUrl: await pg.createDatabase() } : {});
    await w.issues(N);
    const r = await once(w, 1);
    overhead[kind] = r.planningWall / N;
    record(
      `overhead_ms_per_issue_${kind}`,
      `${kind === "sqlite" ? "SQLite" : "PostgreSQL"}: framework time per issue (instant model, ${STAGES.length} stages + gate + reviewer, concurrency 1)`,
      overhead[kind],
      "ms",
    );
    w.cleanup();
  }
  if (section("overhead")) record("overhead_pg_over_sqlite", "PostgreSQL / SQLite framework time per issue", overhead.postgres / overhead.sqlite, "×");

  // 3. Takeover after kill -9 (PostgreSQL, two workers): the issue's worker hangs mid-stage and is killed.
  for (const [key, label, extra] of section("takeover")
    ? [
        ["takeover_s_same_host", "takeover after kill -9, same machine (a dead local holder is taken over at once)", {}],
        ["takeover_s_other_host", "takeover after kill -9, another machine, production lease (60 s)", { host: true }],
      ]
    : []) {
    const w = await world(model, { postgresUrl: await pg.createDatabase(), factory: "poll_interval_s: 1" });
    await w.issues(1);
    // The first plan-council call hangs: the worker planning the issue is killed there.
    let hung = false;
    const hangServer = createServer(async (req, res) => {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      if (body.model === "plan.tester" && !hung) {
        hung = true;
        return; // never answered
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(chatCompletion(body.model, agreeable(body.model), { prompt_tokens: 1, completion_tokens: 1 }));
    });
    await new Promise((r) => hangServer.listen(0, "127.0.0.1", r));
    const cfg = join(w.dir, "dissent.config.yaml");
    writeFileSync(cfg, readFileSync(cfg, "utf8").replace(model.url, `http://127.0.0.1:${hangServer.address().port}/v1`));
    const a = factory(w, [], extra.host ? { DISSENT_WORKER_HOST: "bench-a" } : {});
    const b = factory(w, [], extra.host ? { DISSENT_WORKER_HOST: "bench-b" } : {});
    while (!hung) await sleep(20);
    await sleep(300);
    const holder = [a, b].find((x) => x.lines.some((l) => l.event === "started"));
    const other = holder === a ? b : a;
    const killedAt = Date.now();
    holder.child.kill("SIGKILL");
    while (!other.lines.some((l) => l.event === "started")) await sleep(20);
    const resumedAt = other.lines.find((l) => l.event === "started").seenAt;
    while (!other.lines.some((l) => l.event === "finished")) await sleep(20);
    record(key, label, (resumedAt - killedAt) / 1000, "s", "≤ 90 s", resumedAt - killedAt <= 90_000);
    other.child.kill("SIGTERM");
    await Promise.all([a.done, b.done]);
    hangServer.closeAllConnections();
    await new Promise((r) => hangServer.close(r));
    w.cleanup();
  }

  // 4. A 100 ms model, concurrency 8, 20 issues: wall time against the critical-path floor.
  model.setDelay(100);
  for (const kind of section("floor") ? ["sqlite", "postgres"] : []) {
    // One issue at a time: each one's planning time is the critical path (model chain + framework); the median of 3.
    const one = await world(model, kind === "postgres" ? { postgresUrl: await pg.createDatabase() } : {});
    await one.issues(3);
    const alone = await once(one, 1);
    const cp = median(perIssue(alone.lines));
    one.cleanup();
    const walls = [];
    const cpus = [];
    for (let rep = 0; rep < 2; rep++) {
      const w = await world(model, kind === "postgres" ? { postgresUrl: await pg.createDatabase() } : {});
      await w.issues(N);
      const run = await once(w, 8);
      walls.push(run.planningWall);
      cpus.push(run.cpuMs);
      w.cleanup();
    }
    const r = { planningWall: median(walls) };
    const floor = (N * cp) / 8;
    const name = kind === "sqlite" ? "SQLite" : "PostgreSQL";
    record(
      `critical_path_ms_${kind}`,
      `${name}, 100 ms model: one issue alone, median of 3 (the critical path: gate, 4 stages × producer→critics, reviewer)`,
      cp,
      "ms",
    );
    record(
      `wall_s_20_issues_c8_${kind}`,
      `${name}, 100 ms model: 20 issues at concurrency 8, first start to last finish (median of 2)`,
      r.planningWall / 1000,
      "s",
    );
    // Issues are the unit of concurrency: 20 issues on 8 slots are three rounds, so the floor is ⌈20/8⌉ critical paths
    // (a factory with no overhead at all scores 1.2× against 20 × cp / 8, kept below as a reference).
    const wholeIssue = r.planningWall / (Math.ceil(N / 8) * cp);
    record(
      `wall_over_whole_issue_floor_${kind}`,
      `${name}: that wall / (⌈20 / 8⌉ × critical path), the floor when issues are the unit of concurrency`,
      wholeIssue,
      "×",
      "≤ 1.2",
      wholeIssue <= 1.2,
    );
    // The factory process's own CPU (user + system) over the whole run, start-up included: what the wall's overhead is
    // made of on one event loop, and a figure the machine's load moves far less than a wall.
    record(
      `factory_cpu_ms_per_issue_c8_${kind}`,
      `${name}: the factory process's CPU per issue in that run (user + system, median of 2)`,
      median(cpus) / N,
      "ms",
    );
    record(`wall_over_floor_${kind}`, `${name}: that wall / (20 × critical path / 8), reference (no overhead at all scores 1.2×)`, r.planningWall / floor, "×");
  }

  // 5. The model calls' transport alone: CPU per call through the openai-compatible provider and the AI SDK, Node's fetch
  // (web streams) against the transport (src/models/http-fetch.ts: node:http, keep-alive), 8 calls in flight as in a round of the factory;
  // the model server in another process so that only the client's CPU is counted; blocks alternated, medians.
  if (section("transport")) {
    const t = await transportCpu();
    record(
      "transport_cpu_us_per_call_fetch",
      "Model call through the provider, 8 in flight: CPU per call with Node's fetch (median of 5 blocks)",
      t.fetch,
      "µs",
    );
    record(
      "transport_cpu_us_per_call_node_http",
      "Model call through the provider, 8 in flight: CPU per call with the transport (node:http)",
      t.transport,
      "µs",
    );
    record("transport_cpu_over_fetch", "  the transport's CPU per call / Node's fetch's", t.transport / t.fetch, "×");
  }
} finally {
  await model.close();
  await pg.stop();
}

if (!only) writeFileSync(OUT, `${JSON.stringify(results, null, 2)}\n`);
const width = Math.max(...rows.map((r) => r[0].length));
for (const [label, value, goal, pass] of rows) console.log(`${label.padEnd(width)}  ${value.padStart(12)}  ${goal.padEnd(8)} ${pass}`);
console.log(`\nwrote ${OUT}`);
