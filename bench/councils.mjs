// npm run bench (issue 18): councils that dissent, through the realistic model double on the frontier
// profile (lone grounded HIGHs from different personas, a verifier, nitpicks), this build side by side
// with the release before it (fd1cb70, built from git), in one run. Figures: share of council stages
// that block at least once, second-opinion calls per issue, calls per load-bearing issue (median, max;
// goal: median ≤ 26 with every issue ending with a plan), and the network calls of a replan after
// needs_replan by stage (goal: only the stages whose inputs changed).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildBaseline, buildSupport, doubleConfig, median, runCli } from "./lib.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The release before this issue (CONTRACT r2's last commit). */
export const BASELINE = "fd1cb70";
const COUNCILS = new Set(["discover", "shape", "plan"]);

const share = (n, d) => (d === 0 ? 0 : Math.round((1000 * n) / d) / 10);
/** A stage blocked at least once: it needed a second round, or its last round still blocked. */
const blocked = (s) => s.rounds >= 2 || ["exhausted", "oscillation"].includes(s.outcome) || (s.outcome === "budget" && s.rounds >= 1);

async function events(bin, dir, home, id) {
  const r = await runCli(bin, ["events", "--issue", id, "--json"], dir, home);
  return r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

async function planAll(bin, double, bench, roles, label) {
  const dir = mkdtempSync(join(tmpdir(), `dissent-councils-${label}-`));
  const home = join(dir, "home");
  writeFileSync(join(dir, "dissent.config.yaml"), doubleConfig(double.url, roles));
  const issues = [];
  for (const issue of bench.list) {
    const labels = issue.kind === "trivial" ? [] : ["--label", "dissent-load-bearing"];
    const created = await runCli(bin, ["issue", "new", "--title", issue.title, "--body", issue.body, ...labels], dir, home);
    const id = created.stdout.trim();
    const r = await runCli(bin, ["issue", "plan", id, "--json"], dir, home);
    const out = r.code === 0 ? JSON.parse(r.stdout) : undefined;
    const log = await events(bin, dir, home, id);
    const verifier = log.filter((e) => e.type === "ModelCall" && e.role === "verifier" && !e.cached).length;
    let replan;
    if (out?.status === "needs_replan") {
      // The replan: which stages asked the network again (identical requests come from the cache).
      const seen = log.length;
      const again = await runCli(bin, ["issue", "plan", id, "--json"], dir, home);
      const after = (await events(bin, dir, home, id)).slice(seen).filter((e) => e.type === "ModelCall" && !e.cached);
      const byStage = {};
      for (const e of after) byStage[e.stage ?? e.role] = (byStage[e.stage ?? e.role] ?? 0) + 1;
      replan = { code: again.code, calls: after.length, by_stage: byStage };
    }
    issues.push({
      title: issue.title,
      kind: issue.kind,
      code: r.code,
      route: out?.route ?? "load_bearing",
      status: out?.status ?? "failed",
      calls: out?.calls ?? null,
      stages: out?.stages ?? [],
      verifier_calls: verifier,
      ...(replan ? { replan } : {}),
    });
  }
  rmSync(dir, { recursive: true, force: true });
  return issues;
}

function summarise(issues) {
  const lb = issues.filter((i) => i.route === "load_bearing");
  const calls = lb.map((i) => i.calls).filter((c) => c !== null);
  const councils = issues.flatMap((i) => i.stages).filter((s) => COUNCILS.has(s.phase));
  const replans = issues.filter((i) => i.replan);
  const early = (r) =>
    Object.entries(r.by_stage)
      .filter(([k]) => k === "discovery_council" || k === "shape_council")
      .reduce((n, [, v]) => n + v, 0);
  return {
    issues: issues.length,
    with_plan_pct: share(issues.filter((i) => i.code === 0).length, issues.length),
    council_stages_blocking_pct: share(councils.filter(blocked).length, councils.length),
    second_opinion_calls_per_issue: lb.length ? Math.round((100 * lb.reduce((n, i) => n + i.verifier_calls, 0)) / lb.length) / 100 : 0,
    calls_per_load_bearing_median: calls.length ? median(calls) : 0,
    calls_per_load_bearing_max: calls.length ? Math.max(...calls) : 0,
    statuses: Object.fromEntries(["ready", "needs_replan", "hitl", "failed"].map((s) => [s, issues.filter((i) => i.status === s).length])),
    replans: replans.length,
    replan_calls_median: replans.length ? median(replans.map((i) => i.replan.calls)) : 0,
    replan_discover_shape_calls: replans.reduce((n, i) => n + early(i.replan), 0),
    replan_by_stage: replans.map((i) => ({ title: i.title, ...i.replan })),
  };
}

/**
 * next-auth #4625 planned with the real model's recorded replies (test/fixtures/real-model), matched
 * by role and round; the verifier (not in the recording) confirms a finding it can quote. Which
 * council stages block, and the status the issue ends with.
 */
async function replayRealModel(bin, roles, support, label) {
  const { recordedRun, repliesByRole } = await import(pathToFileURL(join(support, "test", "support", "real-model.js")).href);
  const { startOpenAIServer } = await import(pathToFileURL(join(ROOT, "dist", "testing", "openai-server.js")).href);
  const { readDataBlocks } = await import(pathToFileURL(join(ROOT, "dist", "prompting", "data-block.js")).href);
  const run = recordedRun(join(ROOT, "test", "fixtures", "real-model", "pipeline-next-auth-4625", "/"));
  const replies = repliesByRole(run);
  const counts = new Map();
  const server = await startOpenAIServer((req) => {
    const model = req.body.model;
    const n = counts.get(model) ?? 0;
    counts.set(model, n + 1);
    if (model === "verifier") {
      const finding = JSON.parse(readDataBlocks(req.body.messages.map((m) => m.content).join("\n")).find((b) => b.kind === "finding")?.text ?? "{}");
      return { content: JSON.stringify({ evidence: finding.evidence ?? "", reason: "The quoted line does what the finding says.", verdict: "confirm" }) };
    }
    const recorded = replies.get(model) ?? [JSON.stringify({ findings: [] })];
    return { content: recorded[Math.min(n, recorded.length - 1)] };
  });
  const dir = mkdtempSync(join(tmpdir(), `dissent-councils-replay-${label}-`));
  const home = join(dir, "home");
  try {
    writeFileSync(join(dir, "dissent.config.yaml"), doubleConfig(server.url, roles));
    const issue = run[0].blocks.find((b) => b.kind === "issue").text;
    const [heading, ...body] = issue.split("\n");
    const created = await runCli(
      bin,
      ["issue", "new", "--title", heading.replace(/^#\s*/, ""), "--body", body.join("\n").trim(), "--label", "dissent-load-bearing"],
      dir,
      home,
    );
    const r = await runCli(bin, ["issue", "plan", created.stdout.trim(), "--json"], dir, home);
    const out = JSON.parse(r.stdout);
    const councils = out.stages.filter((s) => COUNCILS.has(s.phase));
    return {
      status: out.status,
      calls: out.calls,
      council_stages_blocking: `${councils.filter(blocked).length} of ${councils.length}`,
      blocking_stages: councils.filter(blocked).map((s) => s.phase),
    };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the comparison; returns {before, after} summaries. */
export async function benchCouncils({ log = console.log } = {}) {
  const support = buildSupport();
  const { startRealisticDouble, frontier, bench10 } = await import(pathToFileURL(join(support, "test", "support", "double", "index.js")).href);
  const { PIPELINE_ROLES } = await import(pathToFileURL(join(ROOT, "dist", "pipeline", "stages.js")).href);
  const roles = [...PIPELINE_ROLES];
  const baseline = buildBaseline(BASELINE, "councils");
  const result = {};
  try {
    for (const [label, bin] of [
      ["before", baseline.bin],
      ["after", join(ROOT, "dist", "cli", "bin.js")],
    ]) {
      const real = await replayRealModel(bin, roles, support, label);
      const double = await startRealisticDouble({ seed: 7, quirks: frontier, scenario: bench10 });
      try {
        result[label] = { ...summarise(await planAll(bin, double, bench10, roles, label)), real_model_next_auth_4625: real };
      } finally {
        await double.close();
      }
      log(`councils ${label}: ${JSON.stringify(result[label])}`);
    }
  } finally {
    baseline.cleanup();
  }
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (!existsSync(join(ROOT, "dist", "cli", "bin.js"))) throw new Error("build first: npm run build");
  const r = await benchCouncils();
  writeFileSync(
    join(ROOT, "bench", "results.councils.json"),
    `${JSON.stringify({ baseline: BASELINE, profile: "frontier, seed 7, bench10", ...r }, null, 2)}\n`,
  );
  const rows = [
    ["issues that end with a plan (%)", "with_plan_pct"],
    ["council stages blocking at least once (%)", "council_stages_blocking_pct"],
    ["second-opinion calls per load-bearing issue", "second_opinion_calls_per_issue"],
    ["calls per load-bearing issue, median", "calls_per_load_bearing_median"],
    ["calls per load-bearing issue, max", "calls_per_load_bearing_max"],
    ["replans after needs_replan", "replans"],
    ["network calls of a replan, median", "replan_calls_median"],
    ["replan calls in discover and shape", "replan_discover_shape_calls"],
  ];
  console.log(`\nmeasure${" ".repeat(38)}before   after`);
  for (const [label, key] of rows) console.log(`${label.padEnd(45)}${String(r.before[key]).padEnd(9)}${r.after[key]}`);
  const real = (x) => `${x.real_model_next_auth_4625.council_stages_blocking} (${x.real_model_next_auth_4625.status})`;
  console.log(`${"next-auth #4625 (real replies): councils block".padEnd(48)}${real(r.before)}   ${real(r.after)}`);
}
