/**
 * A composite action's steps run as GitHub's runner runs them (docs: "Metadata syntax", "Expressions",
 * "Workflow commands", "Variables"): `${{ }}` evaluated over the inputs, `github`, `runner` and `steps`
 * contexts; `if:` conditions (success() by default, always(), ==, !=, &&, ||, !); each `run:` step as
 * `bash --noprofile --norc -eo pipefail FILE` in the workspace with GitHub's default variables, the
 * step's `env:`, a fresh $GITHUB_OUTPUT (read back as `steps.<id>.outputs`) and the job's
 * $GITHUB_STEP_SUMMARY; `uses:` steps by the handlers a test gives (actions/cache and its restore/save
 * halves by `cacheDouble`). The action's outputs are evaluated at the end.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { parse } from "yaml";

export interface ActionStep {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  shell?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string | number | boolean>;
}
export interface ActionFile {
  inputs: Record<string, { default?: string; required?: boolean; description: string }>;
  outputs: Record<string, { value: string; description: string }>;
  runs: { using: string; steps: ActionStep[] };
}

/** What a step came to: its outcome and outputs (as `steps.<id>`). */
export interface StepResult {
  outcome: "success" | "failure" | "skipped";
  outputs: Record<string, string>;
  stdout: string;
  stderr: string;
  code: number | null;
}

/** A `uses:` step's implementation: its evaluated `with:`, and the run so far. */
export type UsesHandler = (w: Record<string, string>, ctx: { env: Record<string, string> }) => { outputs?: Record<string, string>; ok?: boolean };

export interface JobRun {
  /** The action's outputs. */
  outputs: Record<string, string>;
  steps: (StepResult & { step: ActionStep })[];
  /** Every run step's stderr, in order: what the log shows. */
  log: string;
  summary: string;
  ok: boolean;
}

export interface RunOptions {
  /** The action's folder (`github.action_path`). */
  actionPath: string;
  /** The `with:` of the workflow step that uses the action. */
  with: Record<string, string>;
  /** GitHub's default variables for the job (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY, …). */
  env: Record<string, string>;
  /** The job's workspace (GITHUB_WORKSPACE; the run steps' working folder). */
  workspace: string;
  /** RUNNER_TEMP. */
  temp: string;
  /** The job's token (`github.token`). */
  token: string;
  uses: Record<string, UsesHandler>;
}

export const readAction = (path: string): ActionFile => parse(readFileSync(path, "utf8")) as ActionFile;

// ------------------------------------------------------------------ expressions
type Value = string | boolean | number | null | undefined;
interface Ctx {
  inputs: Record<string, string>;
  github: Record<string, string>;
  runner: Record<string, string>;
  steps: Record<string, StepResult>;
  failed: boolean;
}

/** Evaluates one expression (the grammar GitHub's expressions use, as far as action files need it). */
export function evaluate(text: string, ctx: Ctx): Value {
  const tokens = [...text.matchAll(/\s*('(?:[^']|'')*'|==|!=|&&|\|\||!|\(|\)|[A-Za-z_][\w.-]*(?:\(\))?|\d+)/g)].map((m) => m[1] ?? "");
  if (tokens.join("").replace(/\s/g, "") !== text.replace(/\s/g, "")) throw new Error(`cannot read the expression: ${text}`);
  let i = 0;
  const peek = () => tokens[i];
  const next = () => tokens[i++];
  const truthy = (v: Value) => v !== "" && v !== false && v !== 0 && v !== null && v !== undefined;
  const lookup = (path: string): Value => {
    const [root = "", ...rest] = path.split(".");
    if (root === "true" || root === "false") return root === "true";
    const from: Record<string, unknown> =
      root === "steps" ? (ctx.steps as unknown as Record<string, unknown>) : ((ctx as unknown as Record<string, Record<string, unknown>>)[root] ?? {});
    let v: unknown = from;
    for (const k of rest) v = v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
    return v as Value;
  };
  const primary = (): Value => {
    const t = next() ?? "";
    if (t === "(") {
      const v = or();
      next();
      return v;
    }
    if (t === "!") return !truthy(primary());
    if (t.startsWith("'")) return t.slice(1, -1).replace(/''/g, "'");
    if (/^\d+$/.test(t)) return Number(t);
    if (t === "always()") return true;
    if (t === "success()") return !ctx.failed;
    if (t === "failure()") return ctx.failed;
    return lookup(t);
  };
  const eq = (): Value => {
    let v = primary();
    while (peek() === "==" || peek() === "!=") {
      const op = next();
      const w = primary();
      const same = String(v ?? "").toLowerCase() === String(w ?? "").toLowerCase();
      v = op === "==" ? same : !same;
    }
    return v;
  };
  const and = (): Value => {
    let v = eq();
    while (peek() === "&&") {
      next();
      const w = eq();
      v = truthy(v) ? w : v;
    }
    return v;
  };
  const or = (): Value => {
    let v = and();
    while (peek() === "||") {
      next();
      const w = and();
      v = truthy(v) ? v : w;
    }
    return v;
  };
  return or();
}

/** A value with every `${{ … }}` replaced by its expression's value. */
const interpolate = (text: string, ctx: Ctx): string => text.replace(/\$\{\{([^}]*)\}\}/g, (_, e: string) => String(evaluate(e.trim(), ctx) ?? ""));

/** An `if:` holds (GitHub wraps a condition without a status function in success() && …). */
function holds(condition: string | undefined, ctx: Ctx): boolean {
  if (condition === undefined) return !ctx.failed;
  const text = condition.replace(/^\$\{\{([\s\S]*)\}\}$/, "$1").trim();
  const v = evaluate(text, ctx);
  const statusFn = /\b(always|success|failure|cancelled)\(\)/.test(text);
  return Boolean(v) && v !== "" && (statusFn || !ctx.failed);
}

/** `name=value` lines and `name<<EOF` blocks of a $GITHUB_OUTPUT file. */
function readOutputs(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = readFileSync(file, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const heredoc = /^([\w-]+)<<(.+)$/.exec(line);
    if (heredoc?.[1] && heredoc[2]) {
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) body.push(lines[i] ?? "");
      out[heredoc[1]] = body.join("\n");
    } else if (line.includes("=")) {
      const at = line.indexOf("=");
      out[line.slice(0, at)] = line.slice(at + 1);
    }
  }
  return out;
}

/** Runs a step's script with bash, without blocking this process (the servers the step talks to may live in it). */
function bash(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs the action's steps once, as one job of a workflow would. */
export async function runAction(action: ActionFile, o: RunOptions): Promise<JobRun> {
  const inputs: Record<string, string> = {};
  for (const name of Object.keys(action.inputs)) inputs[name] = o.with[name] ?? "";
  const ctx: Ctx = {
    inputs,
    github: {
      action_path: o.actionPath,
      workspace: o.workspace,
      token: o.token,
      event_name: o.env.GITHUB_EVENT_NAME ?? "",
      event_path: o.env.GITHUB_EVENT_PATH ?? "",
      repository: o.env.GITHUB_REPOSITORY ?? "",
      run_id: o.env.GITHUB_RUN_ID ?? "",
      run_attempt: o.env.GITHUB_RUN_ATTEMPT ?? "",
      server_url: o.env.GITHUB_SERVER_URL ?? "",
      api_url: o.env.GITHUB_API_URL ?? "",
    },
    runner: { temp: o.temp, os: "Linux", arch: "X64" },
    steps: {},
    failed: false,
  };
  // Input defaults are expressions too (`${{ github.token }}`).
  for (const [name, spec] of Object.entries(action.inputs)) if (o.with[name] === undefined) inputs[name] = interpolate(spec.default ?? "", ctx);
  mkdirSync(o.temp, { recursive: true });
  const summary = join(o.temp, "_step_summary");
  writeFileSync(summary, "");
  const results: JobRun["steps"] = [];
  let log = "";
  for (const [n, step] of action.runs.steps.entries()) {
    const skipped: StepResult = { outcome: "skipped", outputs: {}, stdout: "", stderr: "", code: null };
    if (!holds(step.if, ctx)) {
      results.push({ ...skipped, step });
      if (step.id) ctx.steps[step.id] = skipped;
      continue;
    }
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, interpolate(String(v), ctx)]));
    let result: StepResult;
    if (step.uses) {
      const name = step.uses.replace(/@.*$/, "");
      const handler = o.uses[name];
      if (!handler) throw new Error(`no handler for uses: ${step.uses}`);
      const w = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, interpolate(String(v), ctx)]));
      const r = handler(w, { env: { ...o.env, ...stepEnv } });
      result = { outcome: r.ok === false ? "failure" : "success", outputs: r.outputs ?? {}, stdout: "", stderr: "", code: r.ok === false ? 1 : 0 };
    } else {
      if (step.shell !== "bash") throw new Error(`step ${step.id ?? n}: only shell: bash is run here`);
      const script = join(o.temp, `_step_${n}.sh`);
      writeFileSync(script, step.run ?? "");
      const output = join(o.temp, `_output_${n}`);
      writeFileSync(output, "");
      const r = await bash(script, o.workspace, {
        ...o.env,
        CI: "true",
        GITHUB_ACTIONS: "true",
        GITHUB_WORKSPACE: o.workspace,
        GITHUB_ACTION_PATH: o.actionPath,
        RUNNER_TEMP: o.temp,
        RUNNER_OS: "Linux",
        GITHUB_OUTPUT: output,
        GITHUB_STEP_SUMMARY: summary,
        ...stepEnv,
      });
      log += r.stderr;
      result = { outcome: r.code === 0 ? "success" : "failure", outputs: readOutputs(output), stdout: r.stdout, stderr: r.stderr, code: r.code };
    }
    if (result.outcome === "failure") ctx.failed = true;
    results.push({ ...result, step });
    if (step.id) ctx.steps[step.id] = result;
  }
  const outputs = Object.fromEntries(Object.entries(action.outputs).map(([k, v]) => [k, interpolate(v.value, ctx)]));
  return { outputs, steps: results, log, summary: readFileSync(summary, "utf8"), ok: !ctx.failed };
}

// ------------------------------------------------------------------ actions/cache, as a double
/** The folders a cache `path:` names, and the ones its `!` lines leave out. */
function paths(text: string): { keep: string[]; skip: string[] } {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  return { keep: lines.filter((l) => !l.startsWith("!")), skip: lines.filter((l) => l.startsWith("!")).map((l) => l.slice(1)) };
}

/**
 * actions/cache's restore and save over a folder standing for GitHub's cache service: a key is
 * immutable once saved (a second save of it is refused, as the service refuses it); restore takes
 * the exact key, else the newest entry whose key starts with a `restore-keys` line; `!` paths are
 * left out of what is saved. `hit` answers the combined action (actions/cache) without a store:
 * the test has put the folders in place, as a hit restores them.
 */
export function cacheDouble(store: string, o: { hit?: (key: string) => boolean } = {}): { handlers: Record<string, UsesHandler>; saved: string[] } {
  mkdirSync(store, { recursive: true });
  const saved: string[] = [];
  const entry = (key: string) => join(store, encodeURIComponent(key));
  const restore: UsesHandler = (w) => {
    const { keep } = paths(w.path ?? "");
    const prefixes = (w["restore-keys"] ?? "")
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
    let key: string | undefined = existsSync(entry(w.key ?? "")) ? w.key : undefined;
    if (!key)
      for (const prefix of prefixes) {
        const found = readdirSync(store)
          .map(decodeURIComponent)
          .filter((k) => k.startsWith(prefix))
          .sort((a, b) => statSync(entry(b)).mtimeMs - statSync(entry(a)).mtimeMs || (a < b ? 1 : -1));
        if (found[0]) {
          key = found[0];
          break;
        }
      }
    if (!key) return { outputs: { "cache-hit": "false" } as Record<string, string> };
    keep.forEach((p, i) => {
      const from = join(entry(key), String(i));
      if (existsSync(from)) cpSync(from, p, { recursive: true });
    });
    return { outputs: { "cache-hit": String(key === w.key), "cache-matched-key": key } };
  };
  const save: UsesHandler = (w) => {
    const key = w.key ?? "";
    if (existsSync(entry(key))) return {}; // "Unable to reserve cache … another job may be creating this cache": a warning, not a failure
    const { keep, skip } = paths(w.path ?? "");
    keep.forEach((p, i) => {
      if (!existsSync(p)) return;
      const inside = (dir: string, src: string) => {
        const r = relative(dir, src);
        return r === "" || (!r.startsWith("..") && !isAbsolute(r));
      };
      cpSync(p, join(entry(key), String(i)), { recursive: true, filter: (src) => !skip.some((dir) => inside(dir, src)) });
    });
    mkdirSync(entry(key), { recursive: true });
    saved.push(key);
    return {};
  };
  return {
    saved,
    handlers: {
      "actions/cache/restore": restore,
      "actions/cache/save": save,
      "actions/cache": (w) => ({ outputs: { "cache-hit": String(o.hit?.(w.key ?? "") ?? false) } }),
    },
  };
}

/** Removes a folder the runner would not keep between jobs (its RUNNER_TEMP). */
export const cleanJob = (temp: string) => rmSync(temp, { recursive: true, force: true });
