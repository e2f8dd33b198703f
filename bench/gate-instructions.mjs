// node bench/gate-instructions.mjs [--root DIR] [--only bare,gate,gate-module] [--runs A,B] [--no-valgrind]
//
// runAudit's cost against the fair floor in the two measures a loaded machine does not move
// (ADR-026c, "runAudit, third pass"): instructions a run (valgrind's cachegrind, no cache simulation;
// the process's every thread, the GC's included) and bytes allocated a run (the sum of V8's
// `allocated=` over every GC, from --trace-gc-nvp). Each workload runs in its own process at two run
// counts after the same warm-up; the difference divided by the runs between cancels start-up, module
// loading, tier-up and the closing GCs. `--root` measures another checkout's build (its dist/ and its
// bench/library.mjs child) with the same counts, so two builds compare in one sitting.
// Prints JSON; writes no results file (the figures are quoted in ADR-026c and docs/library.md).
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args[i + 1];
};
const ROOT = resolve(opt("--root", fileURLToPath(new URL("../", import.meta.url))));
const WORKLOADS = opt("--only", "bare,gate-module,gate").split(",");
const [LOW, HIGH] = opt("--runs", "300,900").split(",").map(Number);
const valgrind = !args.includes("--no-valgrind");

/** One child of bench/library.mjs running `runs` needs_work runs of a workload (then three forced GCs, the same at every count). */
function child(which, runs, prefix) {
  const node = [process.execPath, "--expose-gc", "--trace-gc-nvp", resolve(ROOT, "bench/library.mjs"), "--heap-child", which, "--runs", String(runs)];
  const [cmd, ...rest] = [...prefix, ...node];
  const r = spawnSync(cmd, rest, { cwd: ROOT, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${which} × ${runs} failed: ${r.stderr.slice(-2000)}`);
  // Allocation: each GC line says what was allocated since the one before it.
  let allocated = 0;
  for (const m of r.stdout.matchAll(/\ballocated=(\d+)/g)) allocated += Number(m[1]);
  const refs = /I\s+refs:\s+([\d,]+)/.exec(r.stderr);
  return { allocated, instructions: refs ? Number(refs[1].replaceAll(",", "")) : undefined };
}

const VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"];
const out = { root: ROOT, runs: [LOW, HIGH] };
for (const which of WORKLOADS) {
  const perRun = (a, b, key) => (b[key] - a[key]) / (HIGH - LOW);
  const plainLow = child(which, LOW, []);
  const plainHigh = child(which, HIGH, []);
  const row = { allocated_kb: Math.round(perRun(plainLow, plainHigh, "allocated") / 100) / 10 };
  if (valgrind) {
    const low = child(which, LOW, VALGRIND);
    const high = child(which, HIGH, VALGRIND);
    row.instructions_m = Math.round(perRun(low, high, "instructions") / 1e4) / 100;
  }
  out[which] = row;
  process.stderr.write(`${which}: ${JSON.stringify(row)}\n`);
}
if (out.bare?.instructions_m) {
  for (const w of WORKLOADS.filter((x) => x !== "bare" && out[x].instructions_m))
    out[w].instructions_ratio = Math.round((out[w].instructions_m / out.bare.instructions_m) * 1000) / 1000;
}
if (out.bare)
  for (const w of WORKLOADS.filter((x) => x !== "bare")) out[w].allocated_ratio = Math.round((out[w].allocated_kb / out.bare.allocated_kb) * 1000) / 1000;
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
