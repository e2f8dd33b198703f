// node bench/dashboard.mjs — `dissent serve` under load (issue #13): a store of 1,000 issues and
// 100,000 events; page load (first contentful paint, and the board drawn) in headless Chromium;
// API latency for the board and an issue page; SSE delivery from commit to the browser.
// Goals: the board under 1 s; an event on screen under 1 s at p95. Figures: bench/results.dashboard.json.
// Needs `npm run build` first, and Chromium (/usr/bin/chromium, or CHROMIUM_PATH).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { PIPELINE_ROLES } from "../dist/pipeline/stages.js";
import { openSqliteStore } from "../dist/store/sqlite.js";
import { chatCompletion, sleep } from "./lib.mjs";

const BIN = fileURLToPath(new URL("../dist/cli/bin.js", import.meta.url));
const OUT = fileURLToPath(new URL("./results.dashboard.json", import.meta.url));
const ISSUES = Number(process.env.BENCH_ISSUES ?? 1000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : null;
};
const ms = (x) => (x === null ? null : Math.round(x * 10) / 10);
const stats = (xs) => ({ n: xs.length, p50_ms: ms(pct(xs, 50)), p95_ms: ms(pct(xs, 95)), max_ms: ms(Math.max(...xs)) });
const log = (m) => process.stderr.write(`bench: ${m}\n`);
let loadAtStart = 0;

// --- 1. A realistic plan's events, from the real CLI against a scripted model server ---------------
const PRODUCERS = new Set(["discover.brief", "shape.writer", "planner"]);
function reply(model, body) {
  if (model === "complexity_gate") return "LOAD-BEARING";
  if (PRODUCERS.has(model)) return `# ${model}\n\nThe draft of ${model} says what to build, for whom, and how to test it.\n`;
  if (model === "spec.ac_generator")
    return JSON.stringify({ acceptance_criteria: ["An upload over the limit is refused with a clear message", "A resumed upload ends with the same bytes"] });
  if (model === "spec.judge")
    return JSON.stringify({
      findings: [
        { severity: "HIGH", concern: "No criterion covers two writers resuming the same upload", evidence: "A resumed upload ends with the same bytes" },
      ],
    });
  if (model === "plan.tester") return JSON.stringify({ findings: [{ severity: "MEDIUM", concern: "No test covers an upload interrupted halfway through" }] });
  if (model === "discovery.problem_sharpener")
    return JSON.stringify({ findings: [{ severity: "LOW", concern: "The problem statement does not say who hits the limit today" }] });
  void body;
  return JSON.stringify({ findings: [] });
}
function modelServer() {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const parsed = JSON.parse(body);
      const content = reply(parsed.model, parsed);
      const usage = { prompt_tokens: Math.ceil(body.length / 4), completion_tokens: Math.ceil(content.length / 4) };
      const total = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
      if (parsed.stream) {
        const chunk = (o) => `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: parsed.model, ...o })}\n\n`;
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(chunk({ choices: [{ index: 0, delta: { role: "assistant", content }, finish_reason: null }] }));
        res.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
        res.end(`${chunk({ choices: [], usage: total })}data: [DONE]\n\n`);
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(chatCompletion(parsed.model, content, usage));
    });
  });
  return new Promise((r) => server.listen(0, "127.0.0.1", () => r(server)));
}
/** Every role the plan and `run --audit` call, each routed to a model named after it. */
const ROLES = [...PIPELINE_ROLES, "executor", "challenger"];

/** Runs the CLI (asynchronously: the model server answers from this process). */
function cli(args, cwd, home) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH, HOME: cwd, DISSENT_HOME: home } });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`dissent ${args.join(" ")} exited ${code}: ${err}`))));
  });
}

async function template() {
  const dir = mkdtempSync(join(tmpdir(), "dissent-bench-template-"));
  const server = await modelServer();
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  writeFileSync(
    join(dir, "dissent.config.yaml"),
    [
      "providers:",
      `  local: { type: openai-compatible, base_url: "${url}", prices: { input_per_mtok: 3, output_per_mtok: 15 } }`,
      "routes:",
      ...ROLES.map((r) => `  ${r}: { primary: "local:${r}" }`),
      "retry_backoff_ms: 1",
      "",
    ].join("\n"),
  );
  const home = join(dir, "home");
  await cli(
    ["issue", "new", "--title", "Resumable uploads", "--body", "Large uploads should survive a dropped connection.", "--label", "dissent-load-bearing"],
    dir,
    home,
  );
  await cli(["issue", "plan", "1", "--json"], dir, home);
  await cli(["run", "--audit", "How large may an upload be?"], dir, home);
  const events = (await cli(["events", "--json"], dir, home))
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  server.close();
  rmSync(dir, { recursive: true, force: true });
  return { plan: events.filter((e) => e.issue_id === "1" && e.type !== "LabelChanged"), run: events.filter((e) => e.issue_id === null) };
}

// --- 2. The big store: 1,000 issues across the board, 100,000 events ------------------------------
const COLUMNS = [
  ["dissent-find", 0.2, "new"],
  ["dissent-plan", 0.1, "needs_replan"],
  ["dissent-ready", 0.35, "ready"],
  ["dissent-hitl", 0.1, "hitl"],
  ["dissent-fixed", 0.25, "fixed"],
];
async function fill(home, tpl) {
  const store = await openSqliteStore(home);
  const withIssue = (e, id) => {
    const { at: _at, seq: _seq, ...rest } = e;
    const out = { ...rest, issue_id: id };
    return out;
  };
  const planned = [];
  let written = 0;
  let n = 0;
  for (const [label, share, status] of COLUMNS) {
    for (let i = 0; i < Math.round(ISSUES * share) && n < ISSUES; i++, n++) {
      const issue = await store.issues.create({
        title: `Issue ${n + 1}: ${["Resumable uploads", "Invoice export", "Account deletion", "Dark mode", "Rate limits"][n % 5]} (${label.slice(8)})`,
        body: "Generated for the dashboard benchmark.",
        labels: ["dissent-load-bearing", label],
      });
      const events = [{ type: "LabelChanged", issue_id: issue.id, added: ["dissent-find"], removed: [], labels: ["dissent-find"] }];
      if (status !== "new") {
        events.push(...tpl.plan.map((e) => withIssue(e, issue.id)));
        planned.push(issue.id);
        await store.savePlan({
          issue_id: issue.id,
          cycle: 1,
          status,
          route: "load_bearing",
          route_reason: "label dissent-load-bearing",
          calls: 22,
          cost_usd: 0.05,
          concern_seq: 6,
        });
        await store.putArtifact(issue.id, 1, "plan", "# planner\n\nThe plan: chunked uploads with a resume token, tested by killing the connection halfway.\n");
        await store.putArtifact(issue.id, 1, "acceptance_criteria", JSON.stringify(["An upload over the limit is refused with a clear message"]));
      }
      await store.append(events);
      written += events.length;
    }
  }
  // The rest of the log: audit runs of `dissent run` (3 calls each, as the gate makes them).
  const runCalls = tpl.run.map((e) => withIssue(e, null));
  for (let r = 0; written < EVENTS; r++) {
    const batch = [];
    for (let k = 0; k < 300 && written + batch.length < EVENTS; k++)
      for (const e of runCalls) if (written + batch.length < EVENTS) batch.push({ ...e, run_id: `bench-run-${r}-${k}` });
    await store.append(batch);
    written += batch.length;
  }
  const last = await store.lastSeq();
  await store.close();
  return { planned, events: last };
}

// --- 3. Measurements --------------------------------------------------------------------------------
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
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

async function timed(url) {
  const t = performance.now();
  const res = await fetch(url);
  const body = await res.arrayBuffer();
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return { ms: performance.now() - t, bytes: body.byteLength };
}

async function main() {
  const t0 = performance.now();
  loadAtStart = Math.round(loadavg()[0] * 10) / 10; // other work on the machine shows in the figures
  // BENCH_KEEP=DIR keeps (or reuses) the filled store there, to measure again without refilling.
  const keep = process.env.BENCH_KEEP;
  const dir = keep ?? mkdtempSync(join(tmpdir(), "dissent-bench-dashboard-"));
  const home = join(dir, "home");
  let filled;
  if (keep && existsSync(join(dir, "filled.json"))) filled = JSON.parse(readFileSync(join(dir, "filled.json"), "utf8"));
  else {
    log("capturing a real plan's events through the CLI…");
    const tpl = await template();
    log(`template: ${tpl.plan.length} events per planned issue, ${tpl.run.length} per run`);
    mkdirSync(dir, { recursive: true });
    filled = await fill(home, tpl);
    if (keep) writeFileSync(join(dir, "filled.json"), JSON.stringify(filled));
  }
  log(`store: ${ISSUES} issues, ${filled.events} events (${Math.round(performance.now() - t0)} ms)`);

  const startT = performance.now();
  const serve = await startServe(home, dir);
  const startup = performance.now() - startT;
  const base = serve.url;
  log(`serving ${base} (started in ${Math.round(startup)} ms)`);

  // The first reads: the board (every issue's state read), and the stats (waits for the log's fold into the index).
  const firstBoard = await timed(new URL("/api/issues", base));
  const firstStats = await timed(new URL("/api/stats", base));
  const indexReady = performance.now() - startT;

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-dev-shm-usage",
    ],
  });

  // Page load: first contentful paint, and the board drawn (navigation start to the app's mark, set once
  // the cards are on screen). Cold: a new browser context (a new renderer process) per load. Warm: the
  // same tab loading the page again, as a user who keeps the dashboard open.
  const measure = async (page, i) => {
    await page.goto(`${base}?load=${i}`, { waitUntil: "commit" });
    await page.waitForSelector("body[data-view=board]", { timeout: 30_000 });
    return page.evaluate(() => {
      const paint = performance.getEntriesByName("first-contentful-paint")[0];
      const drawn = performance.getEntriesByType("mark").find((e) => e.name.startsWith("dissent:board:"));
      const res = (part) => performance.getEntriesByType("resource").find((e) => e.name.includes(part));
      const span = (e) => (e ? [Math.round(e.startTime), Math.round(e.responseEnd)] : null);
      return {
        fcp: paint ? paint.startTime : null,
        drawn: drawn ? drawn.startTime : null,
        cards: document.querySelectorAll("[data-issue]").length,
        app: span(res("/assets/app.js")),
        issues: span(res("/api/issues")),
      };
    });
  };
  const load = { cold: { fcp: [], drawn: [] }, warm: { fcp: [], drawn: [] } };
  let cards = 0;
  for (let i = 0; i < 6; i++) {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const m = await measure(await context.newPage(), i);
    cards = m.cards;
    log(`cold load ${i}: fcp ${Math.round(m.fcp)} app.js ${JSON.stringify(m.app)} /api/issues ${JSON.stringify(m.issues)} drawn ${Math.round(m.drawn)}`);
    if (i > 0) {
      load.cold.fcp.push(m.fcp);
      load.cold.drawn.push(m.drawn);
    }
    await context.close();
  }
  {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    for (let i = 0; i < 11; i++) {
      const m = await measure(page, 100 + i);
      if (i > 0) {
        load.warm.fcp.push(m.fcp);
        load.warm.drawn.push(m.drawn);
      }
    }
    await context.close();
  }
  log(
    `page: cold FCP p50 ${ms(pct(load.cold.fcp, 50))} ms, drawn p50 ${ms(pct(load.cold.drawn, 50))} ms; warm FCP p50 ${ms(pct(load.warm.fcp, 50))} ms, drawn p50 ${ms(pct(load.warm.drawn, 50))} ms`,
  );

  // API latency: the board (warm: the log did not move), the board after a commit (cold), an issue page.
  const writer = await openSqliteStore(home);
  const boardWarm = [];
  for (let i = 0; i < 200; i++) boardWarm.push((await timed(new URL("/api/issues", base))).ms);
  const boardCold = [];
  let bytes = 0;
  for (let i = 0; i < 40; i++) {
    const id = filled.planned[i % filled.planned.length];
    await writer.append([{ type: "LabelChanged", issue_id: id, added: [], removed: [], labels: ["dissent-load-bearing", "dissent-ready"] }]);
    await sleep(250); // the server has seen it: its cached board is stale
    const r = await timed(new URL("/api/issues", base));
    boardCold.push(r.ms);
    bytes = r.bytes;
  }
  const issuePage = [];
  let issueBytes = 0;
  for (let i = 0; i < 200; i++) {
    const r = await timed(new URL(`/api/issues/${filled.planned[(i * 37) % filled.planned.length]}`, base));
    issuePage.push(r.ms);
    issueBytes = r.bytes;
  }
  log(`API: board warm p50 ${ms(pct(boardWarm, 50))} ms, cold p50 ${ms(pct(boardCold, 50))} ms; issue p50 ${ms(pct(issuePage, 50))} ms`);

  // SSE: commits by another writer (this process), delivered to a browser showing the board.
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.goto(base);
  await page.waitForSelector("body[data-view=board]");
  await page.waitForFunction(() => document.getElementById("live")?.textContent === "live");
  const committed = new Map();
  for (let i = 0; i < 150; i++) {
    const id = filled.planned[(i * 13) % filled.planned.length];
    const [e] = await writer.append([{ type: "LabelChanged", issue_id: id, added: [], removed: [], labels: ["dissent-load-bearing", "dissent-ready"] }]);
    committed.set(e.seq, Date.now());
    await sleep(40 + (i % 5) * 30); // a busy factory: several events a second, unevenly
  }
  await sleep(1500);
  const probe = await page.evaluate(() => window.__dissent);
  const delivery = [];
  const toScreen = [];
  for (const [seq, at] of committed) {
    const got = probe.events.find((e) => e.seq === seq);
    if (got) delivery.push(got.received - at);
    const drawn = probe.rendered.find((r) => r.view === "board" && r.seq >= seq);
    if (drawn) toScreen.push(drawn.at - at);
  }
  log(
    `SSE: delivered ${delivery.length}/${committed.size}, p50 ${ms(pct(delivery, 50))} ms, p95 ${ms(pct(delivery, 95))} ms; on screen p95 ${ms(pct(toScreen, 95))} ms`,
  );
  await context.close();
  await writer.close();
  await browser.close();
  serve.child.kill("SIGINT");
  if (!keep) rmSync(dir, { recursive: true, force: true });

  const results = {
    when: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpu: cpus()[0]?.model ?? "",
      memory_gb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      load_average_1m: { at_start: loadAtStart, at_end: Math.round(loadavg()[0] * 10) / 10 },
    },
    store: { issues: ISSUES, events: filled.events, planned_issues: filled.planned.length, kind: "sqlite" },
    server_start_ms: ms(startup),
    index_ready_ms: ms(indexReady),
    first_requests: {
      board_ms: ms(firstBoard.ms),
      stats_ms: ms(firstStats.ms),
      note: "the first reads after start; the stats wait for the whole log folded into the index (the board does not)",
    },
    page_load: {
      cold: { first_contentful_paint: stats(load.cold.fcp), board_drawn: stats(load.cold.drawn), note: "a new browser context (renderer process) per load" },
      warm: { first_contentful_paint: stats(load.warm.fcp), board_drawn: stats(load.warm.drawn), note: "the same tab loading the page again" },
      cards_drawn: cards,
      goal_ms: 1000,
      note: "headless Chromium; board_drawn = navigation start to the cards on screen (the app's mark, set after paint); each column draws its 25 most recently moved cards, the rest behind 'show all'",
    },
    api: {
      board_warm: { ...stats(boardWarm), bytes },
      board_after_commit: { ...stats(boardCold), bytes, note: "the log moved since the last read: the board is read again from the store" },
      issue_page: { ...stats(issuePage), bytes: issueBytes },
    },
    sse: {
      events: committed.size,
      delivered: delivery.length,
      commit_to_browser: stats(delivery),
      commit_to_screen: { ...stats(toScreen), note: "the board re-read and redrawn with the event" },
      goal_p95_ms: 1000,
    },
  };
  writeFileSync(OUT, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

main().catch((e) => {
  process.stderr.write(`${e.stack ?? e}\n`);
  process.exit(1);
});
