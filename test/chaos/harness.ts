/**
 * What the chaos suite (test/chaos/*.test.ts) shares: a tally of faults injected, runs and
 * invariant checks (each a named condition; a failed one is a violation, kept with its seed and run
 * so it can be replayed), the CLI run under /usr/bin/time for its peak memory, and the report
 * `npm run bench` reads (bench/chaos.mjs sets DISSENT_CHAOS_REPORT).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, type CliResult } from "../support/cli.js";
import { type Rng, rngFor } from "../support/double/prng.js";

/** The seed every scenario derives its randomness from (DISSENT_CHAOS_SEED replays another run). */
export const SEED = Number(process.env.DISSENT_CHAOS_SEED ?? 20_250_101);

/** A seeded stream for one purpose of one run (a few draws dropped: mulberry32's first outputs of near seeds correlate). */
export function stream(...parts: (string | number)[]): Rng {
  const rng = rngFor(SEED, ...parts);
  for (let i = 0; i < 8; i++) rng.next();
  return rng;
}

/** Counts of one scenario. */
export interface Tally {
  scenario: string;
  seed: number;
  faults: Record<string, number>;
  runs: number;
  checks: number;
  violations: string[];
}

export function tally(scenario: string): Tally {
  return { scenario, seed: SEED, faults: {}, runs: 0, checks: 0, violations: [] };
}

/** Counts one fault of a kind. */
export function injected(t: Tally, kind: string, n = 1): void {
  t.faults[kind] = (t.faults[kind] ?? 0) + n;
}

/** One invariant check: counted, and a violation (with where it happened) when it does not hold. */
export function check(t: Tally, holds: boolean, what: string): void {
  t.checks++;
  if (!holds) t.violations.push(what);
}

/** Adds the scenario's counts to the report file, when bench/chaos.mjs asked for one. */
export function report(t: Tally): void {
  const file = process.env.DISSENT_CHAOS_REPORT;
  if (!file) return;
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Tally[]) : [];
  writeFileSync(file, `${JSON.stringify([...all.filter((x) => x.scenario !== t.scenario), t], null, 2)}\n`);
}

/** A CLI run with its peak resident memory (KiB), measured by /usr/bin/time. */
export interface MeasuredRun extends CliResult {
  maxRssKb: number | undefined;
}

const RSS_MARK = "DISSENT_CHAOS_MAXRSS_KB=";

/** Starts `dissent ARGS` under /usr/bin/time (when the machine has it), as a user runs it. */
export function startMeasured(args: string[], opts: { cwd: string; env: Record<string, string> }): { child: ChildProcess; done: Promise<MeasuredRun> } {
  const timed = existsSync("/usr/bin/time");
  const [cmd, argv] = timed ? ["/usr/bin/time", ["-f", `${RSS_MARK}%M`, process.execPath, BIN, ...args]] : [process.execPath, [BIN, ...args]];
  const child = spawn(cmd, argv, { cwd: opts.cwd, env: { PATH: process.env.PATH ?? "", HOME: opts.cwd, ...opts.env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const done = new Promise<MeasuredRun>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const mark = new RegExp(`^${RSS_MARK}(\\d+)\\n?`, "m");
      const rss = mark.exec(stderr)?.[1];
      // /usr/bin/time reports a signalled child on its own line ("Command terminated by signal 15"): not dissent's output.
      const own = stderr.replace(mark, "").replace(/^Command (terminated by signal|exited with non-zero status) .*\n?/gm, "");
      resolve({ code, signal, stdout, stderr: own, maxRssKb: rss === undefined ? undefined : Number(rss) });
    });
  });
  return { child, done };
}

/**
 * Signals dissent itself, not /usr/bin/time around it (which would die of it and leave dissent
 * running): the measured process's one child, read from /proc.
 */
export function signalDissent(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  const children = `/proc/${pid}/task/${pid}/children`;
  const inner = existsSync(children) ? Number(readFileSync(children, "utf8").trim().split(/\s+/)[0]) : Number.NaN;
  try {
    process.kill(Number.isInteger(inner) && inner > 0 ? inner : pid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e; // it finished first
  }
}

/** Every file under a folder, with its bytes (secrets must be in none of them). */
export function bytesUnder(dir: string): { path: string; bytes: Buffer }[] {
  if (!existsSync(dir)) return [];
  const out: { path: string; bytes: Buffer }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) out.push(...bytesUnder(path));
    else if (st.isFile()) out.push({ path, bytes: readFileSync(path) });
  }
  return out;
}

/**
 * The invariants of any CLI process's stderr (docs/errors.md): every line is dissent's (an error or
 * a warning, never a stack trace or an unhandled event), at most one error line, never "internal error".
 */
export function stderrHolds(t: Tally, stderr: string, where: string): void {
  const lines = stderr.split("\n").filter((l) => l.trim() !== "");
  check(
    t,
    lines.every((l) => /^dissent: (error|warning): /.test(l)),
    `${where}: stderr has a line that is not dissent's: ${JSON.stringify(lines.find((l) => !/^dissent: (error|warning): /.test(l)))}`,
  );
  check(t, lines.filter((l) => l.startsWith("dissent: error: ")).length <= 1, `${where}: more than one error line`);
  check(t, !/internal error|Unhandled|\n\s+at /.test(stderr), `${where}: an internal error or a stack trace: ${stderr.slice(0, 1000)}`);
}
