// What the bench scripts (bench/*.mjs) share: small statistics, how a figure is recorded, and the
// body of a scripted chat-completions reply.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The median of numbers (the mean of the middle two for an even count). */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** `x` to `d` decimals; null stays null (a figure that was not measured). */
export const round = (x, d = 3) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d);

/**
 * Figures as the bench scripts keep them: `results[key]` for the JSON file, and a table row (label,
 * value to `digits` decimals, goal, ok / MISSED) for the console. Returns the two and `record`.
 */
export function recorder(results = {}, { digits = 2 } = {}) {
  const rows = [];
  const record = (key, label, value, unit, goal, pass) => {
    results[key] = { value: round(value), unit, ...(goal !== undefined ? { goal } : {}), ...(pass !== undefined ? { pass } : {}) };
    rows.push([label, value === null ? "n/a" : `${round(value, digits)} ${unit}`, goal ?? "", pass === undefined ? "" : pass ? "ok" : "MISSED"]);
  };
  return { results, rows, record };
}

/** An OpenAI-compatible chat-completions reply (JSON text): one assistant message, and its token counts. */
export const chatCompletion = (model, content, { prompt_tokens, completion_tokens }) =>
  JSON.stringify({
    id: "bench",
    object: "chat.completion",
    created: 1,
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
  });

// Building a baseline and running a built CLI: what the before/after benches share.
const sh = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });

/** The test support (the double) compiled to JS for this script. */
export function buildSupport() {
  const out = join(ROOT, "bench", ".build");
  sh("npx", ["tsc", "-p", "tsconfig.json", "--outDir", out, "--noEmit", "false", "--declaration", "false", "--sourceMap", "false"], ROOT);
  return out;
}

/** This process's CPU time so far, in ms. */
export const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * Times one run of `fn` into `into` (a `bucket()`): wall time (its median is reported) and this
 * process's CPU time (summed: what the run cost, whatever else the machine is doing).
 */
export async function timed(fn, into) {
  const c = cpuMs();
  const t = performance.now();
  await fn();
  into.wall.push(performance.now() - t);
  into.cpu += cpuMs() - c;
}
export const bucket = () => ({ wall: [], cpu: 0 });

/** Prints a bench's rows (measure, median, goal, verdict) as an aligned table under its heading. */
export function printTable(rows) {
  const head = ["measure", "median", "goal", ""];
  const width = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => String(r[i] ?? "").length), head[i].length));
  const line = (r) =>
    r
      .map((c, i) => String(c ?? "").padEnd(width[i]))
      .join("  ")
      .trimEnd();
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}

/**
 * An instant council and review, as the implement and signal benches script it: an agreeable plan,
 * no findings, every criterion met (quoting the passing test line), a refuting verifier.
 */
export function instantCouncil(model, body) {
  if (model === "complexity_gate") return "LOAD-BEARING";
  if (["discover.brief", "shape.writer", "planner"].includes(model)) return `# ${model}\n\nAdd sum(a, b) in src/sum.js; test.js checks it.`;
  if (model === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: ["sum(2, 3) returns 5"] });
  if (model === "verifier") return JSON.stringify({ evidence: "", reason: "not a defect", verdict: "refute" });
  if (model === "review.acceptance") {
    const line = /Tests: `[^`]+` passed \(exit 0\)\./.exec(JSON.stringify(body))?.[0] ?? "";
    return JSON.stringify({ criteria: [{ criterion: "sum(2, 3) returns 5", evidence: line, verdict: "met", reason: "tests pass" }] });
  }
  return undefined;
}

/** A baseline revision checked out beside the repo and built (tsc, then its bundle) with this repo's node_modules. */
export function buildBaseline(rev, label) {
  const dir = mkdtempSync(join(tmpdir(), `dissent-${label}-baseline-`));
  sh("git", ["worktree", "add", "--detach", dir, rev], ROOT);
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  sh("npx", ["tsc", "-p", "tsconfig.build.json"], dir);
  sh("node", ["scripts/postbuild.mjs"], dir);
  return {
    bin: join(dir, "dist", "cli", "bin.js"),
    /** The built package entry, to import the baseline's library in this process. */
    entry: pathToFileURL(join(dir, "dist", "index.js")).href,
    cleanup: () => {
      sh("git", ["worktree", "remove", "--force", dir], ROOT);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs a built CLI with only PATH, HOME and DISSENT_HOME in its environment. */
export function runCli(bin, args, cwd, home) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env: { PATH: process.env.PATH, HOME: cwd, DISSENT_HOME: home } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A config routing every role to a model named after it, as the realistic double expects, with the
 * default budget of the build under test; `extra` lines (a `project:` block, say) go before the retry settings.
 */
export function doubleConfig(url, roles, extra = []) {
  return [
    "providers:",
    `  local: { type: openai-compatible, base_url: "${url}" }`,
    "routes:",
    '  default: { primary: "local:default" }',
    ...roles.map((r) => `  ${r}: { primary: "local:${r}" }`),
    ...extra,
    "retry_backoff_ms: 10",
    "call_timeout_ms: 30000",
    "",
  ].join("\n");
}
