// npm run bench (issue 22): dissent's own time per attempt of `issue implement` beyond the agent and
// the tests — the clone, the sandbox, snapshots, task, commit, diff, review bookkeeping, CLI start — through the
// built CLI on a real git repository, with an instant model server (so model latency, which is the
// provider's, is near zero and subtracted) and a scripted agent that sleeps AGENT_MS then edits a file.
// Figures: overhead with a 10 s agent (goal < 5 % of the attempt) and with an instant agent (the
// overhead measured directly, median of 5 issues), and review calls per attempt. On the GitHub tracker
// (issue 33: the GitHub double over a bare origin): the same 10 s attempt with each attempt pushed,
// checked and reviewed on the pull request — its GitHub API requests per attempt and dissent's share
// (goal: unchanged from the local tracker's, same run) — and `pr review` of a person's pull request:
// its review calls, GitHub requests and dissent's own time beyond the model.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pathToFileURL } from "node:url";
import { buildSupport, chatCompletion, instantCouncil, median, printTable, recorder } from "./lib.mjs";

const BIN = fileURLToPath(new URL("../dist/cli/bin.js", import.meta.url));
const { IMPLEMENT_ROLES } = await import("../dist/implement/roles.js");
const { PIPELINE_ROLES } = await import("../dist/pipeline/stages.js");

/** An instant model: an agreeable council for the plan, no findings and every criterion met for the review. */
const answer = (model, body) => instantCouncil(model, body) ?? JSON.stringify({ findings: [] });

/**
 * How long the model takes per call: 0 (instant) for the direct measures; for the 10 s-agent
 * attempts — local and on GitHub, compared — a modest 500 ms, as a provider takes at the least, so
 * work dissent runs beside the review's calls (pushing the attempt, starting its check) overlaps them
 * as it does in real use. The longest call of each round is subtracted either way.
 */
let modelMs = 0;
const server = createServer((req, res) => {
  let data = "";
  req.on("data", (d) => (data += d));
  req.on("end", () => {
    const body = JSON.parse(data || "{}");
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(chatCompletion(body.model, answer(body.model, body), { prompt_tokens: 100, completion_tokens: 20 }));
    }, modelMs);
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/v1`;

const git = (cwd, ...args) => execFileSync("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.com", ...args], { cwd, encoding: "utf8" });
const run = (dir, args, env) =>
  new Promise((resolve) => {
    const t = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => resolve({ code, out, err, ms: performance.now() - t }));
  });

/**
 * One world: a repository with a 200-file project, a config, and `issues` planned issues — on the
 * local tracker, or (`github`: the GitHub double's module) on a GitHub double over a bare origin.
 */
async function world(agentMs, issues, github) {
  const dir = mkdtempSync(join(tmpdir(), "dissent-bench-implement-"));
  const repo = join(dir, "repo");
  mkdirSync(join(repo, "src"), { recursive: true });
  git(dir, "init", "--quiet", "-b", "main", repo);
  for (let i = 0; i < 200; i++) writeFileSync(join(repo, "src", `m${i}.js`), `export const m${i} = ${i};\n`.repeat(20));
  writeFileSync(join(repo, "src", "sum.js"), "export function sum(a, b) {\n  throw new Error('not implemented');\n}\n");
  writeFileSync(join(repo, "package.json"), '{ "type": "module" }\n');
  writeFileSync(join(repo, "test.js"), 'import { sum } from "./src/sum.js";\nif (sum(2, 3) !== 5) { console.error("sum(2, 3) is not 5"); process.exit(1); }\n');
  git(repo, "add", "--all");
  git(repo, "commit", "--quiet", "-m", "base");
  // The agent's own folder, outside the sandbox's private /tmp: given to it as `implement.writable`.
  mkdirSync(join(dir, "agent"));
  const agent = join(dir, "agent", "agent.mjs");
  writeFileSync(
    agent,
    // Attempt 1 subtracts (the tests fail and block), attempt 2 adds: two attempts, the second warm.
    `import { writeFileSync } from "node:fs";\nconst op = process.env.DISSENT_ATTEMPT === "1" ? "-" : "+";\nsetTimeout(() => writeFileSync("src/sum.js", \`export function sum(a, b) {\\n  return a \${op} b;\\n}\\n\`), ${agentMs});\n`,
  );
  const config = [
    "providers:",
    `  local: { type: openai-compatible, base_url: "${url}" }`,
    "routes:",
    '  default: { primary: "local:default" }',
    ...[...new Set([...PIPELINE_ROLES, ...IMPLEMENT_ROLES])].map((r) => `  ${r}: { primary: "local:${r}" }`),
    "implement:",
    `  repo: "${repo}"`,
    `  command: "node ${agent}"`,
    '  test_command: "node test.js"',
    `  writable: ["${join(dir, "agent")}"]`,
  ].join("\n");
  writeFileSync(join(dir, "dissent.config.yaml"), config);
  const env = { DISSENT_HOME: join(dir, "home") };
  let gh;
  if (github) {
    const origin = join(dir, "origin.git");
    git(dir, "init", "--quiet", "--bare", "-b", "main", origin);
    git(repo, "remote", "add", "origin", origin);
    git(repo, "push", "--quiet", "origin", "main");
    gh = await github.startGithubDouble({ gitRepo: origin });
    writeFileSync(join(dir, "dissent.config.yaml"), `${config}\ntracker: { type: github, repo: "acme/widgets", base_url: "${gh.url}" }\n`);
    Object.assign(env, { GITHUB_TOKEN: gh.token, DISSENT_GITHUB_WRITE_INTERVAL_MS: "0" });
  }
  const ids = [];
  for (let i = 0; i < issues; i++) {
    let id;
    if (gh) {
      gh.addIssue({ number: i + 1, title: `Add sum ${i}`, body: "sum(a, b) returns a + b" });
      id = String(i + 1);
    } else id = (await run(dir, ["issue", "new", "--title", `Add sum ${i}`, "--body", "sum(a, b) returns a + b"], env)).out.trim();
    const planned = await run(dir, ["issue", "plan", id], env);
    if (planned.code !== 0) throw new Error(planned.err);
    ids.push(id);
  }
  return {
    dir,
    repo,
    env,
    ids,
    gh,
    cleanup: async () => {
      await gh?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The events of a subject (an issue, `pr-N`), as `dissent events --json` prints them. */
async function eventsOf(w, subject) {
  return (await run(w.dir, ["events", "--issue", subject, "--json"], w.env)).out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

/** Implements one issue (two attempts); returns wall time, the warm attempt's own time, agent and test time, model-call time and review calls. */
async function implementOne(w, id) {
  const r = await run(w.dir, ["issue", "implement", id, "--json"], w.env);
  if (r.code !== 0) throw new Error(r.err);
  const events = await eventsOf(w, id);
  const attempts = events.filter((e) => e.type === "ImplementAttempt");
  const review = events.filter((e) => e.type === "ModelCall" && e.stage === "implementation_review");
  const agent = attempts.reduce((n, e) => n + e.agent.duration_ms, 0);
  const tests = attempts.reduce((n, e) => n + (e.test?.duration_ms ?? 0), 0);
  // The review's calls run in parallel per round: the longest of each round is what the run waited for.
  const rounds = new Map();
  for (const c of review) rounds.set(c.round, Math.max(rounds.get(c.round) ?? 0, c.latency_ms));
  const model = [...rounds.values()].reduce((a, b) => a + b, 0);
  // Per attempt, from the events' times: the attempt (agent start to recorded) and its review round, minus agent, tests and the model's latency.
  // The warm attempt (the last): from its start to the review round after it, minus its agent, tests and the round's longest call.
  const last = attempts.at(-1);
  const t = (e) => Date.parse(e.at);
  const begun = events.find((e) => e.type === "ImplementAttemptStarted" && e.attempt === last.attempt);
  const reviewed = events.find((e) => e.type === "AdversarialStageCompleted" && e.stage === "implementation_review");
  const warm = t(reviewed) - t(begun) - last.agent.duration_ms - (last.test?.duration_ms ?? 0) - (rounds.get(last.attempt) ?? 0);
  const share = { attempt: t(reviewed) - t(begun) - (rounds.get(last.attempt) ?? 0), own: warm };
  return { wall: r.ms, warm, share, agent, tests, model, attempts: attempts.length, calls: review.filter((c) => !c.cached).length };
}

const { results, rows, record } = recorder();
try {
  // 1. A 10 s agent: dissent's share of the attempt (the model 500 ms a call, subtracted).
  modelMs = 500;
  const slow = await world(10_000, 1);
  const s = await implementOne(slow, slow.ids[0]);
  await slow.cleanup();
  record("implement_overhead_10s_agent_ms", "dissent's time in a (warm) attempt beyond a 10 s agent, its tests and model latency", s.warm, "ms");
  const share = (100 * s.share.own) / s.share.attempt;
  record("implement_overhead_10s_agent_pct", "… as a share of the attempt", share, "%", "< 5 %", share < 5);
  record(
    "implement_command_overhead_10s_agent_ms",
    "… plus the command's start and end (once per issue implement)",
    s.wall - s.agent - s.tests - s.model,
    "ms",
  );

  // 2. An instant agent and an instant model: the overhead measured directly, median over 5 issues.
  modelMs = 0;
  const fast = await world(0, 5);
  const runs = [];
  for (const id of fast.ids) runs.push(await implementOne(fast, id));
  if (process.env.BENCH_KEEP) console.error(`kept ${fast.dir}`);
  else await fast.cleanup();
  record("implement_overhead_ms", "dissent's time in a (warm) attempt, instant agent (median of 5)", median(runs.map((x) => x.warm)), "ms");
  record(
    "implement_command_overhead_ms",
    "… plus the command's start and end (median of 5)",
    median(runs.map((x) => x.wall - x.agent - x.tests - x.model)),
    "ms",
  );
  record("implement_agent_instant_ms", "… the instant agent's own time (node start)", median(runs.map((x) => x.agent)), "ms");
  record(
    "implement_review_calls_per_attempt",
    "review calls per attempt (a failing-test CRITICAL, then none: the four critics each round)",
    median(runs.map((x) => x.calls / x.attempts)),
    "calls",
  );

  // 3. On GitHub (issue 33): the 10 s attempt again, each attempt pushed and checked, each round a review on the pull request.
  const support = buildSupport();
  const github = await import(pathToFileURL(join(support, "test", "support", "github-double.js")).href);
  modelMs = 500;
  const onGh = await world(10_000, 1, github);
  try {
    const before = onGh.gh.requests.length;
    const g = await implementOne(onGh, onGh.ids[0]);
    const requests = onGh.gh.requests.length - before;
    const ghShare = (100 * g.share.own) / g.share.attempt;
    record(
      "implement_github_overhead_10s_agent_ms",
      "on GitHub: dissent's time in a (warm) attempt beyond a 10 s agent, its tests and model latency",
      g.warm,
      "ms",
    );
    record(
      "implement_github_overhead_10s_agent_pct",
      "… as a share of the attempt (the local tracker's, this run, + 1 point at most)",
      ghShare,
      "%",
      `≤ ${(share + 1).toFixed(2)} %`,
      ghShare <= share + 1,
    );
    record(
      "implement_github_requests_per_attempt",
      "on GitHub: API requests per attempt (push, check, review, PR, labels; 2 attempts)",
      requests / g.attempts,
      "requests",
    );
    record("implement_github_review_calls_per_attempt", "on GitHub: review calls per attempt", g.calls / g.attempts, "calls");

    // 4. `pr review` of a person's pull request (no plan: its description is the contract).
    git(onGh.repo, "checkout", "--quiet", "-b", "alice", "main");
    writeFileSync(join(onGh.repo, "src", "m7.js"), "export const m7 = 7;\nexport const twice = (x) => x * 2;\n");
    git(onGh.repo, "commit", "--quiet", "-am", "twice");
    git(onGh.repo, "push", "--quiet", "origin", "alice");
    const sha = git(onGh.repo, "rev-parse", "HEAD").trim();
    git(onGh.repo, "checkout", "--quiet", "main");
    onGh.gh.pulls.set(100, {
      number: 100,
      head: "alice",
      base: "main",
      title: "Add twice",
      body: "Adds twice(x).",
      draft: false,
      state: "open",
      sha,
      login: "alice",
    });
    const reviews = [];
    modelMs = 0; // pr review: its own time, measured directly
    for (let i = 0; i < 3; i++) {
      const from = onGh.gh.requests.length;
      // --no-cache: each run asks the models again, as a new head would.
      const r = await run(onGh.dir, ["pr", "review", "100", "--json", "--no-cache"], onGh.env);
      if (r.code !== 0) throw new Error(r.err);
      const calls = (await eventsOf(onGh, "pr-100")).filter((e) => e.type === "ModelCall");
      const last = calls.slice(-JSON.parse(r.out).calls);
      reviews.push({ ms: r.ms - Math.max(0, ...last.map((c) => c.latency_ms)), requests: onGh.gh.requests.length - from, calls: JSON.parse(r.out).calls });
    }
    record(
      "pr_review_calls",
      "pr review: model calls per review (the three critics; no criteria without a plan)",
      median(reviews.map((x) => x.calls)),
      "calls",
    );
    record(
      "pr_review_github_requests",
      "pr review: GitHub API requests per review (the pull request, its diff, reviews, comments, check)",
      median(reviews.map((x) => x.requests)),
      "requests",
    );
    record(
      "pr_review_command_overhead_ms",
      "pr review: the command's own time beyond the model, start to end (median of 3)",
      median(reviews.map((x) => x.ms)),
      "ms",
    );
  } finally {
    await onGh.cleanup();
  }
} finally {
  server.close();
}

// The machine's load when measured: wall times on a shared machine stretch with it.
results.load_average_1m = { value: Number((await import("node:os")).loadavg()[0].toFixed(2)), unit: "runnable processes" };
writeFileSync(new URL("./results.implement.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
printTable(rows);
