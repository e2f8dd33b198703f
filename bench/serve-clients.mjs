// node bench/serve-clients.mjs — `dissent serve` against dashboard clients that never read (issue 32):
// its resident memory (VmRSS, and the peak VmHWM, from /proc) with 10 and 150 clients resuming from
// the start of a 54 MB log with Last-Event-ID and never reading, and with 50 live clients that never
// read while 20 MB of events are committed. Goal: under 300 MB with 150 clients. Figures:
// bench/results.serve.json. Needs `npm run build` first. BENCH_BIN=path/to/dist/cli/bin.js measures
// another build (main's, to compare); BENCH_OUT names the results file.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { openSqliteStore } from "../dist/store/sqlite.js";
import { sleep } from "./lib.mjs";

const BIN = process.env.BENCH_BIN ?? fileURLToPath(new URL("../dist/cli/bin.js", import.meta.url));
const OUT = process.env.BENCH_OUT ?? fileURLToPath(new URL("./results.serve.json", import.meta.url));
const LOG_MB = Number(process.env.BENCH_LOG_MB ?? 54);
const EVENT_BYTES = 20_000;
const log = (m) => process.stderr.write(`bench: ${m}\n`);
const mb = (kb) => Math.round(kb / 1024);

/** An event carrying `size` characters of text, as a failed round's error message can. */
const bulky = (n, size) => ({
  type: "IssuePlanFailed",
  issue_id: String(1 + (n % 7)),
  cycle: 1,
  attempt: 1,
  error: `${n} ${"x".repeat(size)}`,
  retry_at: null,
});

function status(pid) {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0);
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

function startServe(home, cwd) {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--json"], {
    cwd,
    env: { PATH: process.env.PATH, HOME: cwd, DISSENT_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  return new Promise((resolve, reject) => {
    const t = setInterval(() => {
      if (out.includes("\n")) {
        clearInterval(t);
        resolve({ child, url: JSON.parse(out.split("\n")[0]).url, stderr: () => err });
      }
    }, 20);
    child.on("exit", (code, signal) => {
      clearInterval(t);
      reject(new Error(`serve exited ${code ?? signal}: ${err}`));
    });
  });
}

/** A client that asks for the stream and then reads nothing: its socket is paused, its receive window fills. */
function stalled(port, resume) {
  const socket = connect({ host: "127.0.0.1", port });
  socket.on("error", () => undefined);
  const head = resume === undefined ? "" : `Last-Event-ID: ${resume}\r\n`;
  socket.write(`GET /api/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n${head}\r\n`);
  socket.pause();
  return socket;
}

/** Samples the server's memory every 100 ms for `ms`, checking that it still answers; the peak and the last. */
async function watch(pid, url, ms) {
  let peak = 0;
  let answered = 0;
  let slowest = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    peak = Math.max(peak, status(pid).rss);
    const t = performance.now();
    const res = await fetch(new URL("/api/events?limit=1", url)).catch(() => undefined);
    if (res?.ok) answered++;
    await res?.arrayBuffer();
    slowest = Math.max(slowest, performance.now() - t);
    await sleep(100);
  }
  return { peak_rss_mb: mb(peak), rss_after_mb: mb(status(pid).rss), api_answers: answered, api_slowest_ms: Math.round(slowest) };
}

async function phase(name, home, dir, fn) {
  const serve = await startServe(home, dir);
  const port = Number(new URL(serve.url).port);
  await fetch(new URL("/api/stats", serve.url)).then((r) => r.arrayBuffer()); // the index holds the whole log
  const base = status(serve.child.pid);
  log(`${name}: serving at ${mb(base.rss)} MB`);
  let result;
  let died;
  let stopping = false;
  serve.child.once("exit", (code, signal) => (died = stopping ? undefined : `${code ?? signal}`));
  try {
    result = await fn(serve, port);
  } catch (e) {
    result = { error: String(e) };
  }
  const end = serve.child.exitCode === null && serve.child.signalCode === null ? status(serve.child.pid) : { hwm: 0 };
  stopping = true;
  serve.child.kill("SIGINT");
  await new Promise((r) => (serve.child.exitCode !== null || serve.child.signalCode !== null ? r() : serve.child.once("exit", r)));
  const out = {
    rss_at_start_mb: mb(base.rss),
    ...result,
    peak_hwm_mb: mb(end.hwm),
    ...(died ? { server_died: died, stderr_tail: serve.stderr().slice(-300) } : {}),
  };
  log(`${name}: ${JSON.stringify(out)}`);
  return out;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "dissent-bench-serve-"));
  const home = join(dir, "home");
  const store = await openSqliteStore(home);
  const events = Math.round((LOG_MB * 1e6) / EVENT_BYTES);
  for (let i = 0; i < events; i += 100) await store.append(Array.from({ length: Math.min(100, events - i) }, (_, k) => bulky(i + k, EVENT_BYTES)));
  const last = await store.lastSeq();
  await store.close();
  log(`log: ${last} events of ${EVENT_BYTES / 1000} KB (${LOG_MB} MB), build ${BIN}`);

  const results = {
    when: new Date().toISOString(),
    build: relative(fileURLToPath(new URL("..", import.meta.url)), BIN),
    machine: { cpus: cpus().length, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version, load_average_1m: Math.round(loadavg()[0] * 10) / 10 },
    log: { events: last, event_bytes: EVENT_BYTES, mb: LOG_MB },
    goal: "RSS under 300 MB with 150 clients that never read",
  };

  // 1. Clients resuming from the start of the log (Last-Event-ID: 0) that never read.
  for (const n of (process.env.BENCH_CLIENTS ?? "10,150").split(",").map(Number)) {
    results[`resume_${n}_never_read`] = await phase(`${n} resuming clients`, home, dir, async (serve, port) => {
      const sockets = Array.from({ length: n }, () => stalled(port, 0));
      const seen = await watch(serve.child.pid, serve.url, Number(process.env.BENCH_WATCH_MS ?? 60_000));
      // Whether the server let them go: a paused socket sees its end only once it reads what it was sent.
      const closed = await Promise.all(
        sockets.map(
          (s) =>
            new Promise((resolve) => {
              if (s.destroyed) return resolve(true);
              const t = setTimeout(() => resolve(false), 5_000);
              s.once("close", () => (clearTimeout(t), resolve(true)));
              s.resume();
            }),
        ),
      );
      for (const s of sockets) s.destroy();
      return { clients: n, ...seen, closed_by_server: closed.filter(Boolean).length };
    });
  }

  // 2. Live clients (no resume point) that never read, while a writer commits 20 MB of events.
  results.live_50_never_read = await phase("50 live clients", home, dir, async (serve, port) => {
    const sockets = Array.from({ length: 50 }, () => stalled(port));
    await sleep(500);
    const writer = await openSqliteStore(home);
    const watching = watch(serve.child.pid, serve.url, 20_000);
    for (let i = 0; i < 1000; i += 20) {
      await writer.append(Array.from({ length: 20 }, (_, k) => bulky(last + i + k, EVENT_BYTES)));
      await sleep(100);
    }
    const seen = await watching;
    await writer.close();
    for (const s of sockets) s.destroy();
    return { clients: 50, committed_mb: 20, ...seen };
  });

  rmSync(dir, { recursive: true, force: true });
  writeFileSync(OUT, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

main().catch((e) => {
  process.stderr.write(`${e.stack ?? e}\n`);
  process.exit(1);
});
