// npm run bench (issue 30): input tokens per load-bearing issue when the councils read the code,
// before and after, in one run. The bench10 issues (realistic bodies, bench/cost.mjs) are planned
// against "acme-app" (bench/acme-repo.mjs: 156 files and a 48 KB ARCHITECTURE.md), four ways:
//   before, with the context file — main before the councils read code (`BASELINE`): the file is
//     pasted whole into every request's project block;
//   after, with the context file — this build: `project.repo` and the file ranked with the code, each
//     request carrying its selection;
//   before / after with no context file — `project.repo` alone (the baseline ignores it for requests).
// Goals (issue 30): with the file, after ≤ 0.40 × before; without it, after ≤ 1.30 × before; a cached
// share ≥ 70 % after in both; the same judgment (status, stage outcomes and rounds, pending concerns)
// before and after. The double's judgment reads neither the project nor the code block, and its dice
// are keyed on the material a request carries, not on the wording of personas, rubric and task lines
// (which issue 30 changed: test/support/double/request.ts), so any difference in judgment is the
// pipeline's own.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { writeAcme } from "./acme-repo.mjs";
import { PROJECT, planAll, summarise } from "./cost.mjs";
import { buildBaseline, buildSupport, round } from "./lib.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** main before the councils read the code (issue 30): context files pasted whole, no code block. */
export const BASELINE = "147c1ba";

/**
 * Runs the four plans (or, with `afterOnly`, this build's two, compared with `last`: the last full
 * run's results, for working on the selection) and returns the figures.
 */
export async function benchContext({ log = console.log, afterOnly = false, last = undefined } = {}) {
  const support = buildSupport();
  const { startRealisticDouble, frontier, bench10 } = await import(pathToFileURL(join(support, "test", "support", "double", "index.js")).href);
  const { PIPELINE_ROLES } = await import(pathToFileURL(join(ROOT, "dist", "pipeline", "stages.js")).href);
  const roles = [...PIPELINE_ROLES];
  const where = mkdtempSync(join(tmpdir(), "dissent-context-bench-"));
  const acme = writeAcme(where);
  const baseline = afterOnly ? { bin: "", cleanup: () => undefined } : buildBaseline(BASELINE, "context");
  const after = join(ROOT, "dist", "cli", "bin.js");
  const project = (file) => [
    "project:",
    "  name: acme-app",
    `  description: "${PROJECT}"`,
    `  repo: ${JSON.stringify(acme.root)}`,
    ...(file ? [`  context_files: [${JSON.stringify(acme.doc)}]`] : []),
  ];
  const runs = {};
  const fresh = {};
  if (afterOnly) for (const k of ["before_with_file", "before_no_file"]) runs[k] = last.issues[k];
  try {
    for (const [label, bin, file] of [
      ["before_with_file", baseline.bin, true],
      ["after_with_file", after, true],
      ["before_no_file", baseline.bin, false],
      ["after_no_file", after, false],
    ]) {
      if (!bin) continue;
      const double = await startRealisticDouble({ seed: 7, quirks: frontier, scenario: bench10, promptCache: true });
      try {
        const run = await planAll(bin, double, bench10, roles, label, project(file));
        runs[label] = run.issues;
        fresh[label] = run.fresh;
      } finally {
        await double.close();
      }
      log(`context ${label}: ${JSON.stringify(summarise(runs[label]))}`);
      log(`fresh input ${label}: ${JSON.stringify(fresh[label])}`);
    }
  } finally {
    baseline.cleanup();
    rmSync(where, { recursive: true, force: true });
  }
  const s = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, summarise(v)]));
  const ratio = (a, b) => round(s[a].input_tokens_total / s[b].input_tokens_total, 3);
  const differs = (a, b) =>
    runs[a]
      .map((x, i) => ({ title: x.title, before: x.judgment, after: runs[b][i]?.judgment }))
      .filter((d) => JSON.stringify(d.before) !== JSON.stringify(d.after));
  const withFile = differs("before_with_file", "after_with_file");
  const noFile = differs("before_no_file", "after_no_file");
  const r = {
    baseline: BASELINE,
    repository: { files: acme.files, context_file_bytes: 48 * 1024 },
    summary: s,
    with_file_after_over_before: ratio("after_with_file", "before_with_file"),
    no_file_after_over_before: ratio("after_no_file", "before_no_file"),
    judgment: {
      issues: runs.before_with_file.length,
      same_with_file: runs.before_with_file.length - withFile.length,
      same_no_file: runs.before_no_file.length - noFile.length,
      differences: { with_file: withFile, no_file: noFile },
    },
    // Where the input of the load-bearing issues goes, and what of it was not cached (bench/cost-parts.mjs).
    fresh_input: afterOnly ? { ...last.fresh_input, ...fresh } : fresh,
    issues: runs,
  };
  r.goals = {
    with_file: { goal: "<= 0.40 x before", pass: r.with_file_after_over_before <= 0.4 },
    no_file: { goal: "<= 1.30 x before", pass: r.no_file_after_over_before <= 1.3 },
    cached_share: { goal: ">= 70 % after, both", pass: s.after_with_file.cached_share_pct >= 70 && s.after_no_file.cached_share_pct >= 70 },
    same_judgment: { goal: "10 of 10, both", pass: withFile.length === 0 && noFile.length === 0 },
  };
  return r;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  // `--after-only`: this build's two runs against the last full run's "before" (results.context.json is not written).
  const afterOnly = process.argv.includes("--after-only");
  const file = join(ROOT, "bench", "results.context.json");
  const r = await benchContext(afterOnly ? { afterOnly, last: JSON.parse(readFileSync(file, "utf8")) } : {});
  if (afterOnly) {
    const { issues: _, fresh_input, ...figures } = r;
    console.log(
      JSON.stringify({ ...figures, fresh_input: { after_with_file: fresh_input.after_with_file, after_no_file: fresh_input.after_no_file } }, null, 2),
    );
    process.exit(0);
  }
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  console.log(JSON.stringify({ with_file: r.with_file_after_over_before, no_file: r.no_file_after_over_before, goals: r.goals }, null, 2));
}
