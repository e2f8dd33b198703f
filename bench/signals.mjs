// npm run bench -- --only signals (issue 32): the time from one SIGTERM to the process's exit, for each
// thing a command can be waiting on — a model call, GitHub pagination, PostgreSQL, git, the coding
// agent, a server's clients, the MCP transport, a model file's hash, eval, the factory, a stdin that
// never ends. Each case starts the built CLI against servers this script runs (they accept and never
// answer where the case is a hang), waits until the command is waiting (the server saw the request,
// a line on stderr, a file the agent wrote), sends SIGTERM and times it to the process's exit.
// Goal (docs/errors.md "Signals"): under 1 s wherever the wait can be aborted; the 9 s deadline only
// for what cannot. Median of RUNS runs per case. Writes bench/results.signals.json and prints a table.
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createTcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildSupport, chatCompletion, instantCouncil, median, printTable, recorder, sleep } from "./lib.mjs";

const BIN = fileURLToPath(new URL("../dist/cli/bin.js", import.meta.url));
const RUNS = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 3;
const ONLY = process.argv.includes("--case") ? process.argv[process.argv.indexOf("--case") + 1] : undefined;
const { IMPLEMENT_ROLES } = await import("../dist/implement/roles.js");
const { PIPELINE_ROLES } = await import("../dist/pipeline/stages.js");

// ------------------------------------------------------------------ the servers
/** Requests seen, by a short name: the cases wait on these. */
const seen = new Map();
const saw = (what) => seen.set(what, (seen.get(what) ?? 0) + 1);
const held = new Set(); // responses never answered: ended when the script stops

/** An instant council for planning; no findings; every criterion met; the executor's draft, passed. */
function answer(model, body) {
  if (model === "executor") return "Water boils at 100 °C at sea level.";
  return instantCouncil(model, body) ?? JSON.stringify({ findings: [], concerns: [], verdict: "pass" });
}

const http = createServer((req, res) => {
  let data = "";
  req.on("data", (d) => (data += d));
  req.on("end", () => {
    if (req.url.startsWith("/hang/")) {
      saw("listing");
      held.add(res);
      return;
    }
    if (req.url.startsWith("/gh/")) {
      saw("github");
      held.add(res);
      return;
    }
    if (req.url === "/v1/models") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ data: [{ id: "executor" }] }));
      return;
    }
    const body = JSON.parse(data || "{}");
    if (String(body.model).startsWith("hang")) {
      saw("model");
      held.add(res);
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(chatCompletion(body.model, answer(body.model, body), { prompt_tokens: 100, completion_tokens: 20 }));
  });
});
await new Promise((r) => http.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${http.address().port}`;

// A "PostgreSQL" that accepts the connection and never says a word.
const sockets = new Set();
const pg = createTcpServer((s) => {
  saw("pg");
  sockets.add(s);
  s.on("error", () => undefined);
});
await new Promise((r) => pg.listen(0, "127.0.0.1", r));
const pgUrl = `postgres://dissent:secret@127.0.0.1:${pg.address().port}/dissent`;

// ------------------------------------------------------------------ the world
const root = mkdtempSync(join(tmpdir(), "dissent-bench-signals-"));
const git = (cwd, ...args) => execFileSync("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.com", ...args], { cwd, encoding: "utf8" });

/** Runs the CLI to its end (setup steps). */
const cli = (dir, args, env = {}, input) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => resolve({ code, out, err }));
    child.stdin.end(input ?? "");
  });

const routes = (overrides = {}) => [
  "routes:",
  '  default: { primary: "local:default" }',
  ...[...new Set(["executor", "challenger", ...PIPELINE_ROLES, ...IMPLEMENT_ROLES])].map((r) => `  ${r}: { primary: "local:${overrides[r] ?? r}" }`),
];

/** A folder with a config (local provider at the script's server), a git repository and a home. */
function world(name, extra = [], overrides = {}) {
  const dir = join(root, name);
  const repo = join(dir, "repo");
  mkdirSync(join(repo, "src"), { recursive: true });
  git(dir, "init", "--quiet", "-b", "main", repo);
  writeFileSync(join(repo, "src", "sum.js"), "export function sum(a, b) {\n  throw new Error('not implemented');\n}\n");
  writeFileSync(join(repo, "test.js"), 'import { sum } from "./src/sum.js";\nif (sum(2, 3) !== 5) process.exit(1);\n');
  writeFileSync(join(repo, "package.json"), '{ "type": "module" }\n');
  git(repo, "add", "--all");
  git(repo, "commit", "--quiet", "-m", "base");
  mkdirSync(join(dir, "marks"));
  writeFileSync(
    join(dir, "dissent.config.yaml"),
    ["providers:", `  local: { type: openai-compatible, base_url: "${base}/v1" }`, ...routes(overrides), ...extra].join("\n"),
  );
  return { dir, repo, marks: join(dir, "marks"), env: { DISSENT_HOME: join(dir, "home") } };
}

/** A world with one issue planned (ready to implement), its agent the given shell command. */
async function plannedWorld(name, agent, more = []) {
  const w = world(name, [
    "implement:",
    `  repo: "${join(root, name, "repo")}"`,
    `  command: ${JSON.stringify(agent)}`,
    '  test_command: "node test.js"',
    `  writable: ["${join(root, name, "marks")}"]`,
    ...more,
  ]);
  const id = (await cli(w.dir, ["issue", "new", "--title", "Add sum", "--body", "sum(a, b) returns a + b"], w.env)).out.trim();
  const planned = await cli(w.dir, ["issue", "plan", id], w.env);
  if (planned.code !== 0) throw new Error(`planning for ${name} failed: ${planned.err}`);
  return { ...w, id };
}

// ------------------------------------------------------------------ one timed stop
/**
 * Starts the command, waits for `ready` (polled every 5 ms), sends SIGTERM and times it to the exit.
 * `stdin: "open"` keeps stdin a pipe that never ends.
 */
async function timeStop({ dir, args, env = {}, ready, stdin = "ignore", onStart, settleMs = 0 }) {
  const before = new Map(seen);
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir, ...env },
    stdio: [stdin === "open" ? "pipe" : "ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, at: performance.now() })));
  onStart?.(child);
  const since = (what) => (seen.get(what) ?? 0) > (before.get(what) ?? 0);
  const end = Date.now() + 60_000;
  while (!ready({ out, err, since })) {
    if (child.exitCode !== null) throw new Error(`${args.join(" ")} ended before it was waiting (exit ${child.exitCode}): ${err}`);
    if (Date.now() > end) {
      child.kill("SIGKILL");
      throw new Error(`${args.join(" ")} was never waiting: ${err}`);
    }
    await sleep(5);
  }
  // A wait with nothing to observe (a read of stdin, the factory between polls): given time to begin.
  if (settleMs) await sleep(settleMs);
  const t = performance.now();
  child.kill("SIGTERM");
  const r = await exited;
  await new Promise((resolve) => (child.stdout.readableEnded ? resolve() : child.on("close", resolve)));
  for (const res of held) res.destroy();
  held.clear();
  for (const s of sockets) s.destroy();
  sockets.clear();
  return { ms: r.at - t, code: r.code, err };
}

// ------------------------------------------------------------------ the cases
const cases = [];
const add = (key, label, setup) => cases.push({ key, label, setup });

add("run_model_call", "run: a model call that never answers", async () => {
  const w = world("run", [], { executor: "hang-executor" });
  return { dir: w.dir, env: w.env, args: ["run", "--no-cache", "Why does water boil?"], ready: ({ since }) => since("model") };
});
add("run_stdin", "run: reading a stdin that never ends", async () => {
  const w = world("stdin");
  return { dir: w.dir, env: w.env, args: ["run", "--no-cache"], stdin: "open", ready: () => true, settleMs: 1500 };
});
add("run_replay_hash", "run --replay: hashing an 8 GiB model file", async () => {
  const dir = join(root, "hash");
  mkdirSync(dir, { recursive: true });
  const support = buildSupport();
  const { writeBigGguf } = await import(pathToFileURL(join(support, "test/support/tiny-gguf.js")).href);
  writeFileSync(join(dir, "dissent.config.yaml"), writeBigGguf(dir).config);
  return { dir, env: { DISSENT_HOME: join(dir, "home") }, args: ["run", "--replay", "What is 2+2?"], ready: ({ err }) => err.includes("dissent: hashing ") };
});
add("doctor_hash", "doctor: hashing an 8 GiB model file", async () => {
  const dir = join(root, "hash");
  return { dir, env: { DISSENT_HOME: join(dir, "home") }, args: ["doctor"], ready: ({ err }) => err.includes("dissent: hashing ") };
});
add("doctor_listing", "doctor: a provider's model listing that never answers", async () => {
  const w = world("doctor");
  writeFileSync(
    join(w.dir, "dissent.config.yaml"),
    ["providers:", `  local: { type: openai-compatible, base_url: "${base}/hang/v1" }`, "routes:", '  default: { primary: "local:executor" }'].join("\n"),
  );
  return { dir: w.dir, env: w.env, args: ["doctor"], ready: ({ since }) => since("listing") };
});
add("github_pagination", "issue list: a GitHub page that never comes", async () => {
  const w = world("github", ["tracker: { type: github, repo: owner/repo }"]);
  return {
    dir: w.dir,
    env: { ...w.env, GITHUB_TOKEN: "ghp_bench000000000000", GITHUB_API_URL: `${base}/gh` },
    args: ["issue", "list"],
    ready: ({ since }) => since("github"),
  };
});
add("postgres", "issue list: a PostgreSQL server that never answers", async () => {
  const w = world("pg", ["store: { type: postgres }"]);
  return { dir: w.dir, env: { ...w.env, DISSENT_DATABASE_URL: pgUrl }, args: ["issue", "list"], ready: ({ since }) => since("pg") };
});
add("plan_model_call", "issue plan: a council's model call that never answers", async () => {
  const w = world("plan", [], { complexity_gate: "hang-gate" });
  const id = (await cli(w.dir, ["issue", "new", "--title", "Add sum", "--body", "sum(a, b) returns a + b"], w.env)).out.trim();
  return { dir: w.dir, env: w.env, args: ["issue", "plan", id], ready: ({ since }) => since("model") };
});
add("implement_agent", "issue implement: an agent that runs on", async () => {
  const w = await plannedWorld("agent", `touch ${join(root, "agent", "marks")}/started-$DISSENT_ATTEMPT; exec sleep 600`);
  return {
    dir: w.dir,
    env: w.env,
    args: ["issue", "implement", w.id],
    ready: () => existsSync(join(w.marks, "started-1")),
    cleanup: () => rmSync(join(w.marks, "started-1"), { force: true }),
  };
});
add("implement_agent_ignores_term", "issue implement: an agent that ignores SIGTERM", async () => {
  const w = await plannedWorld("stubborn", `trap '' TERM; touch ${join(root, "stubborn", "marks")}/started-$DISSENT_ATTEMPT; while :; do sleep 1; done`);
  return {
    dir: w.dir,
    env: w.env,
    args: ["issue", "implement", w.id],
    ready: () => existsSync(join(w.marks, "started-1")),
    cleanup: () => rmSync(join(w.marks, "started-1"), { force: true }),
  };
});
add("implement_agent_ignores_term_unsandboxed", "issue implement: an agent that ignores SIGTERM, sandbox none", async () => {
  const w = await plannedWorld(
    "stubborn-none",
    `trap '' TERM; touch ${join(root, "stubborn-none", "marks")}/started-$DISSENT_ATTEMPT; while :; do sleep 1; done`,
    ["  sandbox: none"],
  );
  return {
    dir: w.dir,
    env: w.env,
    args: ["issue", "implement", w.id],
    ready: () => existsSync(join(w.marks, "started-1")),
    cleanup: () => rmSync(join(w.marks, "started-1"), { force: true }),
  };
});
add("implement_git", "issue implement: a git command that hangs (the attempt's diff)", async () => {
  const w = await plannedWorld("git", "true");
  // A git that hangs on the attempt's diff (and says so): first on PATH, the real one otherwise.
  const bin = join(w.dir, "bin");
  mkdirSync(bin, { recursive: true });
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  writeFileSync(
    join(bin, "git"),
    `#!/bin/sh\nfor a in "$@"; do if [ "$a" = diff ]; then touch ${w.marks}/git-hangs; exec sleep 600; fi; done\nexec ${real} "$@"\n`,
  );
  chmodSync(join(bin, "git"), 0o755);
  return {
    dir: w.dir,
    env: { ...w.env, PATH: `${bin}:${process.env.PATH}` },
    args: ["issue", "implement", w.id],
    ready: () => existsSync(join(w.marks, "git-hangs")),
    cleanup: () => rmSync(join(w.marks, "git-hangs"), { force: true }),
  };
});
add("serve_clients", "serve: a dashboard client on the live stream", async () => {
  const w = world("serve");
  await cli(w.dir, ["issue", "new", "--title", "Something"], w.env);
  let connected = false;
  return {
    dir: w.dir,
    env: w.env,
    args: ["serve", "--port", "0"],
    onStart: (child) => {
      connected = false;
      child.stdout.on("data", (d) => {
        const url = /http:\/\/\S+/.exec(String(d))?.[0];
        if (!url) return;
        fetch(`${url.replace(/\/$/, "")}/api/events/stream`)
          .then((res) => {
            connected = res.ok;
            return res.body.getReader().read();
          })
          .catch(() => undefined);
      });
    },
    ready: () => connected,
  };
});
add("mcp_stdio", "mcp (stdio): a client connected, idle", async () => {
  const w = world("mcp");
  return {
    dir: w.dir,
    env: w.env,
    args: ["mcp"],
    stdin: "open",
    onStart: (child) =>
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } })}\n`,
      ),
    ready: ({ out }) => out.includes('"id":1'),
  };
});
add("mcp_stdio_call", "mcp (stdio): a challenge tool call whose model call never answers", async () => {
  const w = world("mcp-call", [], { challenger: "hang-challenger" });
  const frame = (o) => `${JSON.stringify({ jsonrpc: "2.0", ...o })}\n`;
  return {
    dir: w.dir,
    env: w.env,
    args: ["mcp"],
    stdin: "open",
    onStart: (child) => {
      child.stdin.write(
        frame({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } }),
      );
      child.stdin.write(frame({ method: "notifications/initialized" }));
      child.stdin.write(
        frame({
          id: 2,
          method: "tools/call",
          params: { name: "challenge", arguments: { prompt: "Why does water boil?", draft: "Water boils at 100 °C at sea level." } },
        }),
      );
    },
    ready: ({ since }) => since("model"),
  };
});
add("mcp_http", "mcp --http: listening, idle", async () => {
  const w = world("mcp-http");
  return { dir: w.dir, env: w.env, args: ["mcp", "--http", "127.0.0.1:0"], ready: ({ err }) => err.includes("dissent mcp: http") };
});
add("eval_gate", "eval gate: a challenger call that never answers", async () => {
  const w = world("eval", [], { challenger: "hang-challenger" });
  return { dir: w.dir, env: w.env, args: ["eval", "gate", "--limit", "2"], ready: ({ since }) => since("model") };
});
add("factory_idle", "factory: between polls, nothing to do", async () => {
  const w = world("factory-idle", ["factory: { poll_interval_s: 60 }"]);
  return { dir: w.dir, env: w.env, args: ["factory"], ready: () => true, settleMs: 2000 };
});
add("factory_round", "factory: a round whose model call never answers", async () => {
  const w = world("factory-round", [], { complexity_gate: "hang-gate" });
  await cli(w.dir, ["issue", "new", "--title", "Add sum", "--body", "sum(a, b) returns a + b"], w.env);
  return { dir: w.dir, env: w.env, args: ["factory"], ready: ({ since }) => since("model") };
});
add("events_follow", "events --follow: waiting for the next event", async () => {
  const w = world("events");
  await cli(w.dir, ["issue", "new", "--title", "Something"], w.env);
  return { dir: w.dir, env: w.env, args: ["events", "--follow"], ready: ({ out }) => out.length > 0 };
});

// ------------------------------------------------------------------ run them
const { results, rows, record } = recorder();
try {
  for (const c of cases) {
    if (ONLY && c.key !== ONLY) continue;
    let spec;
    try {
      spec = await c.setup();
    } catch (e) {
      rows.push([c.label, `setup failed: ${String(e.message).split("\n")[0]}`, "", "MISSED"]);
      continue;
    }
    const times = [];
    const codes = [];
    let failed;
    for (let i = 0; i < RUNS; i++) {
      try {
        const r = await timeStop(spec);
        times.push(r.ms);
        codes.push(r.code);
        if (r.code !== 143) failed ??= r.err.trim().split("\n").at(-1);
      } catch (e) {
        failed = String(e.message).split("\n")[0];
        break;
      } finally {
        spec.cleanup?.();
      }
    }
    if (times.length === 0) {
      rows.push([c.label, `failed: ${failed}`, "", "MISSED"]);
      continue;
    }
    const ms = median(times);
    const ok = codes.every((x) => x === 143) && ms < 1000;
    record(`stop_${c.key}_ms`, `${c.label} (exit ${[...new Set(codes)].join("/")})`, ms, "ms", "< 1000 ms, exit 143", ok);
    results[`stop_${c.key}_ms`].exit_codes = codes;
    if (failed) results[`stop_${c.key}_ms`].note = failed;
  }
} finally {
  for (const res of held) res.destroy();
  for (const s of sockets) s.destroy();
  http.close();
  pg.close();
  rmSync(root, { recursive: true, force: true });
}

printTable(rows);
if (!ONLY)
  writeFileSync(
    new URL("./results.signals.json", import.meta.url),
    `${JSON.stringify({ measured_at: new Date().toISOString(), runs: RUNS, results }, null, 2)}\n`,
  );
process.exit(0);
