// npm run bench -- --only chaos: the chaos suite (test/chaos/, issue 20) run once, seeded, and its counts —
// faults injected by kind, runs, invariant checks, violations — written to bench/results.chaos.json.
// DISSENT_CHAOS_SEED replays another seed; the suite itself fails on any violation.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { round } from "./lib.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "dissent-chaos-bench-"));
const reportFile = join(scratch, "chaos.json");
const started = performance.now();
const code = await new Promise((resolve) => {
  const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
  const child = spawn(process.execPath, [vitest, "run", "test/chaos", "--reporter=dot"], {
    cwd: root,
    env: { ...process.env, DISSENT_CHAOS_REPORT: reportFile },
    stdio: ["ignore", "inherit", "inherit"],
  });
  child.on("close", resolve);
});
const seconds = (performance.now() - started) / 1000;
let scenarios = [];
try {
  scenarios = JSON.parse(readFileSync(reportFile, "utf8"));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const sum = (f) => scenarios.reduce((n, s) => n + f(s), 0);
const faults = {};
for (const s of scenarios) for (const [k, n] of Object.entries(s.faults)) faults[k] = (faults[k] ?? 0) + n;
const results = {
  seed: scenarios[0]?.seed ?? null,
  faults_injected: { value: sum((s) => Object.values(s.faults).reduce((a, b) => a + b, 0)), unit: "faults" },
  faults_by_kind: faults,
  runs: { value: sum((s) => s.runs), unit: "runs" },
  invariant_checks: { value: sum((s) => s.checks), unit: "checks" },
  violations: { value: sum((s) => s.violations.length), unit: "violations", goal: "0", pass: sum((s) => s.violations.length) === 0 && code === 0 },
  wall_s: { value: round(seconds, 1), unit: "s" },
  scenarios: scenarios.map((s) => ({ scenario: s.scenario, runs: s.runs, checks: s.checks, violations: s.violations })),
};
writeFileSync(new URL("./results.chaos.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
console.log(
  `chaos (seed ${results.seed}): ${results.faults_injected.value} faults injected over ${results.runs.value} runs, ${results.invariant_checks.value} invariant checks, ${results.violations.value} violations, ${results.wall_s.value} s`,
);
process.exit(code === 0 ? 0 : 1);
