// npm run bench (issue #10): the pipeline's judgment economics through the realistic model double,
// this build side by side with the release before CONTRACT r2 (built from git), in one run.
// Figures: calls per load-bearing issue (median, max), rounds per stage, share of stages ending
// oscillation / exhausted / budget, share of issues that end with a plan.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildBaseline, buildSupport, doubleConfig, median, runCli } from "./lib.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The last release before CONTRACT r2 (wave 1's final commit). */
export const BASELINE = "56549b5";

const share = (n, d) => (d === 0 ? 0 : Math.round((1000 * n) / d) / 10);

async function planAll(bin, double, bench, roles, label) {
  const dir = mkdtempSync(join(tmpdir(), `dissent-judgment-${label}-`));
  const home = join(dir, "home");
  writeFileSync(join(dir, "dissent.config.yaml"), doubleConfig(double.url, roles));
  const issues = [];
  for (const issue of bench.list) {
    const labels = issue.kind === "trivial" ? [] : ["--label", "dissent-load-bearing"];
    const created = await runCli(bin, ["issue", "new", "--title", issue.title, "--body", issue.body, ...labels], dir, home);
    const id = created.stdout.trim();
    const r = await runCli(bin, ["issue", "plan", id, "--json"], dir, home);
    const out = r.code === 0 ? JSON.parse(r.stdout) : undefined;
    issues.push({
      kind: issue.kind,
      code: r.code,
      route: out?.route ?? "load_bearing",
      status: out?.status ?? "failed",
      calls: out?.calls ?? null,
      stages: out?.stages ?? [],
    });
  }
  rmSync(dir, { recursive: true, force: true });
  return issues;
}

function summarise(issues) {
  const lb = issues.filter((i) => i.route === "load_bearing");
  const calls = lb.map((i) => i.calls).filter((c) => c !== null);
  const stages = issues.flatMap((i) => i.stages);
  const byPhase = {};
  for (const s of stages) (byPhase[s.phase] ??= []).push(s.rounds);
  const outcome = (o) => share(stages.filter((s) => s.outcome === o).length, stages.length);
  return {
    issues: issues.length,
    with_plan_pct: share(issues.filter((i) => i.code === 0).length, issues.length),
    calls_per_load_bearing_median: calls.length ? median(calls) : 0,
    calls_per_load_bearing_max: calls.length ? Math.max(...calls) : 0,
    rounds_per_stage_mean: Object.fromEntries(Object.entries(byPhase).map(([p, r]) => [p, Math.round((100 * r.reduce((a, b) => a + b, 0)) / r.length) / 100])),
    stages_oscillation_pct: outcome("oscillation"),
    stages_exhausted_pct: outcome("exhausted"),
    stages_budget_pct: outcome("budget"),
    statuses: Object.fromEntries(["ready", "needs_replan", "hitl", "failed"].map((s) => [s, issues.filter((i) => i.status === s).length])),
  };
}

/** Runs the comparison; returns {before, after} summaries. */
export async function benchJudgment({ log = console.log } = {}) {
  const support = buildSupport();
  const { startRealisticDouble, small8b, bench10 } = await import(pathToFileURL(join(support, "test", "support", "double", "index.js")).href);
  const { PIPELINE_ROLES } = await import(pathToFileURL(join(ROOT, "dist", "pipeline", "stages.js")).href);
  const roles = [...PIPELINE_ROLES];
  const baseline = buildBaseline(BASELINE, "judgment");
  const result = {};
  try {
    for (const [label, bin] of [
      ["before", baseline.bin],
      ["after", join(ROOT, "dist", "cli", "bin.js")],
    ]) {
      const double = await startRealisticDouble({ seed: 7, quirks: small8b, scenario: bench10 });
      try {
        result[label] = summarise(await planAll(bin, double, bench10, roles, label));
      } finally {
        await double.close();
      }
      log(`judgment ${label}: ${JSON.stringify(result[label])}`);
    }
  } finally {
    baseline.cleanup();
  }
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (!existsSync(join(ROOT, "dist", "cli", "bin.js"))) throw new Error("build first: npm run build");
  const r = await benchJudgment();
  writeFileSync(
    join(ROOT, "bench", "results.judgment.json"),
    `${JSON.stringify({ baseline: BASELINE, profile: "small8b, seed 7, bench10", ...r }, null, 2)}\n`,
  );
  const rows = [
    ["issues that end with a plan (%)", "with_plan_pct"],
    ["calls per load-bearing issue, median", "calls_per_load_bearing_median"],
    ["calls per load-bearing issue, max", "calls_per_load_bearing_max"],
    ["stages ending oscillation (%)", "stages_oscillation_pct"],
    ["stages ending exhausted (%)", "stages_exhausted_pct"],
    ["stages ending budget (%)", "stages_budget_pct"],
  ];
  console.log(`\nmeasure${" ".repeat(34)}before   after`);
  for (const [label, key] of rows) console.log(`${label.padEnd(41)}${String(r.before[key]).padEnd(9)}${r.after[key]}`);
  console.log(`rounds per stage (mean)                  ${JSON.stringify(r.before.rounds_per_stage_mean)}  ${JSON.stringify(r.after.rounds_per_stage_mean)}`);
}
