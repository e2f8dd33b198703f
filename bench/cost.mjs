// npm run bench (issue 21): what a load-bearing issue costs in input tokens on a provider that caches
// prompt prefixes, this build side by side with main before it (built from git), in one run.
//
// The model: the realistic double (frontier profile, seed 7) over the 10-issue set, each issue body
// lengthened to a realistic 2–6 k characters, with a project description. The provider: the double
// reports cached tokens as OpenAI's automatic prompt cache does (test/support/double/prompt-cache.ts):
// a request's cached tokens are the longest prefix it shares with an earlier request (in arrival
// order), in 128-token blocks, none under 1,024, tokens counted as 4 characters each. Figures are
// what the server reported, per load-bearing issue: input tokens, the cached share, and the billed
// equivalent (fresh input + cached input × the cached rate: 0.1 as Anthropic and OpenAI's GPT-5
// family bill cache reads, 0.5 as GPT-4o does). Judgment: each issue's status, stage outcomes and
// rounds, and pending concerns (severity, raised by) must be the same before and after. Where the
// fresh input comes from (`fresh_input`: by part of the request and by kind of request) is
// bench/cost-parts.mjs's attribution. `node bench/cost.mjs --after-only` runs this build alone,
// against the last full run's "before" (for working on the layout; it writes nothing).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freshByPart } from "./cost-parts.mjs";
import { buildBaseline, buildSupport, doubleConfig, median, round, runCli } from "./lib.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** main when this branch was made (the councils, issue 19/20 merged): the requests as they were laid out. */
export const BASELINE = "9f3adca";
/** Cached input tokens billed at this share of the input price (Anthropic and GPT-5 cache reads), and GPT-4o's. */
const CACHED_RATE = 0.1;
const CACHED_RATE_GPT4O = 0.5;

export const PROJECT =
  "A B2B web application: a TypeScript API on Node with PostgreSQL, a React front end, nightly batch jobs that sync customer data with partners' APIs, and a public REST API used by about 300 customers. Deploys go out several times a day behind a load balancer; on-call engineers read the structured logs in the log service.";

/** Paragraphs a real issue carries besides its first lines: context, reproduction, logs, constraints, links. */
const SECTIONS = [
  (t) =>
    `## Context\n\nThis came up in the weekly triage. "${t}" has been open in our backlog for a while and several teams keep running into it. The behaviour today is the one described above; nothing in the changelog of the last three releases touched this area.`,
  () =>
    "## What we see\n\n- It happens on production and on staging, not on developer machines.\n- The support team has a macro for it and answers about a dozen tickets a month with it.\n- Two enterprise customers mentioned it in their last quarterly review.",
  () =>
    '## Logs\n\n```\n2026-11-03T02:14:07.512Z level=warn svc=sync job=nightly attempt=1 msg="upstream returned an error" status=503 duration_ms=1841\n2026-11-03T02:14:07.513Z level=error svc=sync job=nightly msg="job failed" reason="upstream_error" records_done=18211 records_total=40930\n2026-11-03T02:31:44.020Z level=info svc=sync job=nightly msg="job re-run by hand" by=oncall\n```',
  () =>
    "## Constraints\n\n- No downtime: we deploy several times a day and cannot take the service down for this.\n- The change must be observable: we want a metric or a log line that tells us it works.\n- Keep the existing public API stable; customers integrate against it and we promised a deprecation window of six months.",
  () =>
    "## Out of scope\n\nRewriting the surrounding module, changing the data model beyond what this needs, and any UI redesign. If the fix turns out to need one of these, say so in the plan and we will file a separate issue.",
  () =>
    "## Links\n\n- Incident review from last month (internal wiki, INC-2291)\n- The customer thread in the support tool (ticket 48213)\n- The original design note for this area, written when the feature first shipped",
  (t) =>
    `## Notes from the team\n\nA first look suggests the fix is contained, but nobody has checked the edge cases yet. Please plan it so that someone new to the code can pick it up: say which parts change, in what order, and how we will know "${t}" is done.`,
  () =>
    "## Environment\n\n- Node 20 LTS on the API servers, PostgreSQL 15, Redis 7 for caching and queues.\n- Three app servers behind the load balancer, a separate worker pool for batch jobs.\n- Feature flags through our own flag service; new behaviour ships behind a flag first.",
];

/** An issue body of realistic size (2–6 k characters as i goes 0 → 9): the bench body first, then sections. */
export function realisticBody(issue, i) {
  if (issue.kind === "trivial") return issue.body; // a typo fix is filed in one line
  const target = 2000 + Math.round((4000 * i) / 9);
  const parts = [issue.body];
  for (let k = 0; parts.join("\n\n").length < target; k++) parts.push(SECTIONS[k % SECTIONS.length](issue.title));
  return parts.join("\n\n");
}

async function events(bin, dir, home, id) {
  const r = await runCli(bin, ["events", "--issue", id, "--json"], dir, home);
  return r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** What the plan decided, for comparing judgment: status, stages, and the pending concerns. */
export const judgment = (out) =>
  out
    ? {
        status: out.status,
        route: out.route,
        stages: out.stages.map((s) => `${s.stage}:${s.outcome}:${s.rounds}`),
        pending: out.pending_concerns.map((c) => `${c.severity}:${c.raised_by}:${c.concern}`).sort(),
      }
    : { status: "failed" };

/** Plans every issue of the bench with `bin`; `project` replaces the config's `project:` lines (bench/context.mjs adds a repository and a context file). */
export async function planAll(
  bin,
  double,
  bench,
  roles,
  label,
  project = [`project: { name: acme-app, description: "${PROJECT}" }`],
  prepare = () => undefined,
) {
  const dir = mkdtempSync(join(tmpdir(), `dissent-cost-${label}-`));
  const home = join(dir, "home");
  prepare(dir);
  writeFileSync(join(dir, "dissent.config.yaml"), doubleConfig(double.url, roles, project));
  const issues = [];
  const loadBearing = new Set();
  for (const [i, issue] of bench.list.entries()) {
    const labels = issue.kind === "trivial" ? [] : ["--label", "dissent-load-bearing"];
    const body = realisticBody(issue, i);
    const created = await runCli(bin, ["issue", "new", "--title", issue.title, "--body", body, ...labels], dir, home);
    const id = created.stdout.trim();
    const from = double.usage.length;
    const r = await runCli(bin, ["issue", "plan", id, "--json"], dir, home);
    const out = r.code === 0 ? JSON.parse(r.stdout) : undefined;
    const served = double.usage.slice(from);
    if ((out?.route ?? "load_bearing") === "load_bearing") for (let k = from; k < double.usage.length; k++) loadBearing.add(k);
    const recorded = (await events(bin, dir, home, id)).filter((e) => e.type === "ModelCall" && !e.cached);
    issues.push({
      title: issue.title,
      body_chars: body.length,
      route: out?.route ?? "load_bearing",
      calls: out?.calls ?? null,
      requests: served.length,
      input_tokens: served.reduce((n, u) => n + u.promptTokens, 0),
      cached_input_tokens: served.reduce((n, u) => n + u.cachedTokens, 0),
      // What dissent itself recorded (the baseline records none).
      recorded_cached_input_tokens: recorded.reduce((n, e) => n + (e.cached_input_tokens ?? 0), 0),
      judgment: judgment(out),
    });
  }
  rmSync(dir, { recursive: true, force: true });
  // Where the uncached input of the load-bearing issues came from (bench/cost-parts.mjs).
  const fresh = freshByPart(
    double.requests.map((r) => r.body),
    (k) => loadBearing.has(k),
  );
  return { issues, fresh };
}

export function summarise(issues) {
  const lb = issues.filter((i) => i.route === "load_bearing");
  const input = lb.map((i) => i.input_tokens);
  const cached = lb.map((i) => i.cached_input_tokens);
  const billed = (rate) => lb.map((i) => i.input_tokens - i.cached_input_tokens + rate * i.cached_input_tokens);
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  return {
    load_bearing_issues: lb.length,
    calls_per_issue_median: median(lb.map((i) => i.calls ?? 0)),
    input_tokens_per_issue_median: median(input),
    input_tokens_total: sum(input),
    cached_share_pct: round((100 * sum(cached)) / sum(input), 1),
    billed_input_per_issue_median: round(median(billed(CACHED_RATE)), 0),
    billed_input_total: round(sum(billed(CACHED_RATE)), 0),
    billed_input_total_gpt4o: round(sum(billed(CACHED_RATE_GPT4O)), 0),
    recorded_cached_input_tokens: sum(lb.map((i) => i.recorded_cached_input_tokens)),
    server_cached_input_tokens: sum(cached),
  };
}

/** Runs the comparison; returns {before, after, judgment} figures. `afterOnly` runs this build alone (while working on the layout). */
export async function benchCost({ log = console.log, afterOnly = false } = {}) {
  const support = buildSupport();
  const { startRealisticDouble, frontier, bench10 } = await import(pathToFileURL(join(support, "test", "support", "double", "index.js")).href);
  const { PIPELINE_ROLES } = await import(pathToFileURL(join(ROOT, "dist", "pipeline", "stages.js")).href);
  const roles = [...PIPELINE_ROLES];
  const baseline = afterOnly ? { bin: "", cleanup: () => undefined } : buildBaseline(BASELINE, "cost");
  const runs = {};
  const fresh = {};
  try {
    for (const [label, bin] of [
      ["before", baseline.bin],
      ["after", join(ROOT, "dist", "cli", "bin.js")],
    ]) {
      if (!bin) continue;
      const double = await startRealisticDouble({ seed: 7, quirks: frontier, scenario: bench10, promptCache: true });
      try {
        const run = await planAll(bin, double, bench10, roles, label);
        runs[label] = run.issues;
        fresh[label] = run.fresh;
      } finally {
        await double.close();
      }
      log(`cost ${label}: ${JSON.stringify(summarise(runs[label]))}`);
      log(`fresh input ${label}: ${JSON.stringify(fresh[label])}`);
    }
  } finally {
    baseline.cleanup();
  }
  if (afterOnly) return { after: summarise(runs.after), issues: { after: runs.after }, fresh_input: fresh };
  const before = summarise(runs.before);
  const after = summarise(runs.after);
  const differs = runs.before
    .map((b, i) => ({ title: b.title, before: b.judgment, after: runs.after[i]?.judgment }))
    .filter((d) => JSON.stringify(d.before) !== JSON.stringify(d.after));
  return {
    before,
    after,
    billed_input_after_over_before: round(after.billed_input_total / before.billed_input_total, 3),
    judgment: { issues: runs.before.length, same: runs.before.length - differs.length, differences: differs },
    fresh_input: fresh,
    issues: { before: runs.before, after: runs.after },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (!existsSync(join(ROOT, "dist", "cli", "bin.js"))) throw new Error("build first: npm run build");
  if (process.argv.includes("--after-only")) {
    // This build alone, its judgment compared with the last full run's "before" (results.cost.json is not written).
    const last = JSON.parse(readFileSync(join(ROOT, "bench", "results.cost.json"), "utf8"));
    const r = await benchCost({ afterOnly: true });
    const differs = last.issues.before.filter((b, i) => JSON.stringify(b.judgment) !== JSON.stringify(r.issues.after[i]?.judgment));
    const billed = round(r.after.billed_input_total / last.before.billed_input_total, 3);
    console.log(`billed input after / last before: ${billed}; judgment differs on ${differs.length}: ${differs.map((d) => d.title).join("; ")}`);
    process.exit(0);
  }
  const r = await benchCost();
  const goals = {
    cached_share_pct: { goal: ">= 50 %", pass: r.after.cached_share_pct >= 50 },
    billed_input: { goal: "<= 0.5 x before", pass: r.billed_input_after_over_before <= 0.5 },
    same_judgment: { goal: "10 of 10", pass: r.judgment.same === r.judgment.issues },
  };
  writeFileSync(
    join(ROOT, "bench", "results.cost.json"),
    `${JSON.stringify({ baseline: BASELINE, profile: "frontier, seed 7, bench10 with 2-6 k character bodies, OpenAI-style prefix cache (4 chars a token)", cached_rate: CACHED_RATE, goals, ...r }, null, 2)}\n`,
  );
  const rows = [
    ["calls per load-bearing issue, median", "calls_per_issue_median"],
    ["input tokens per load-bearing issue, median", "input_tokens_per_issue_median"],
    ["cached share of input (%)", "cached_share_pct"],
    [`billed-equivalent input per issue (cached x ${CACHED_RATE}), median`, "billed_input_per_issue_median"],
    [`billed-equivalent input, all issues (cached x ${CACHED_RATE})`, "billed_input_total"],
    [`billed-equivalent input, all issues (cached x ${CACHED_RATE_GPT4O})`, "billed_input_total_gpt4o"],
    ["cached tokens dissent recorded", "recorded_cached_input_tokens"],
  ];
  console.log(`\nmeasure${" ".repeat(52)}before     after`);
  for (const [label, key] of rows) console.log(`${label.padEnd(59)}${String(r.before[key]).padEnd(11)}${r.after[key]}`);
  console.log(`billed input after / before: ${r.billed_input_after_over_before}; same judgment: ${r.judgment.same} of ${r.judgment.issues}`);
}
