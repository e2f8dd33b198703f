/**
 * Helpers for the issue #9 hold suites (test/e2e/hold-*.test.ts): a council server that answers by
 * the role a request is for, a config routing every pipeline role (and the gate) to it, a CLI
 * runner with a per-call environment, a runner under a pseudo-terminal, a runner as an
 * unprivileged user, and a shell runner for stdin tricks (/dev/zero).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { STAGES } from "../../src/pipeline/stages.js";
import { BIN, dissent, scratch, type CliResult } from "./cli.js";
import { CHAL_MODEL, EXEC_MODEL } from "./e2e.js";
import { startOpenAIServer, type ChatRequest, type FakeOpenAI, type Reply } from "./openai-server.js";

export const PRODUCERS = [...new Set(STAGES.map((s) => s.producer))];
export const CRITICS = [...new Set(STAGES.flatMap((s) => s.critics))];
/** Every role of the pipeline: the gate, the producers, the critics, the reviewer. */
export const PIPELINE_ROLES = ["complexity_gate", ...PRODUCERS, ...CRITICS, "plan_reviewer"];

/** The role a request is for: pipeline requests say `Role: X` on a line of their own (after the shared blocks); else the model name (exec-model, chal-model, …). */
export function roleOf(req: ChatRequest): string {
  const m = /^Role: (\S+)$/m.exec(openingText(req));
  if (m?.[1]) return m[1];
  if (req.body.model === EXEC_MODEL) return req.body.messages.some((x) => x.role === "assistant") ? "revision" : "executor";
  if (req.body.model === CHAL_MODEL) return "challenger";
  return req.body.model;
}

/** The text of a request's system and first user message: where a pipeline request names its role. */
export function openingText(req: ChatRequest): string {
  const text = (c: unknown) => (typeof c === "string" ? c : "");
  const user = req.body.messages.find((m) => m.role === "user");
  return `${text(req.body.messages.find((m) => m.role === "system")?.content)}\n${text(user?.content)}`;
}

/** The text of every message of a request, joined. */
export const requestText = (req: ChatRequest): string => req.body.messages.map((m) => m.content).join("\n\n");

export type Answer = string | Reply | ((req: ChatRequest, n: number) => string | Reply | Promise<string | Reply>);

export const findings = (
  list: { severity: string; concern: string; category?: string; evidence?: string; dimension?: string; human_required?: boolean }[] = [],
) => JSON.stringify({ findings: list });

/** The artifact a producer writes by default (critics can quote its sentence as evidence). */
export const defaultArtifact = (role: string) => `# ${role} artifact\n\nA plain, stable draft from ${role} for this issue.\n`;

/** What an agreeable council answers for a role. */
export function agreeable(role: string): string {
  if (role === "complexity_gate") return "LOAD-BEARING";
  if (role === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: ["The change is covered by an automated test."] });
  if (PRODUCERS.includes(role)) return defaultArtifact(role);
  if (role === "executor" || role === "revision") return "The answer is 4.";
  if (role === "challenger") return JSON.stringify({ concerns: [], verdict: "pass" });
  return findings([]);
}

/** A handler answering by role: scripted roles as scripted, the rest as an agreeable council. */
export function council(script: Partial<Record<string, Answer>> = {}) {
  const counts = new Map<string, number>();
  return async (req: ChatRequest): Promise<Reply> => {
    const role = roleOf(req);
    const n = counts.get(role) ?? 0;
    counts.set(role, n + 1);
    const s = script[role];
    const a = s === undefined ? agreeable(role) : typeof s === "function" ? await s(req, n) : s;
    return typeof a === "string" ? { content: a } : a;
  };
}

export interface HoldConfig {
  /** Name an env variable holding the `local` provider's key. */
  apiKeyEnv?: string;
  callTimeoutMs?: number;
  /** Route overrides, role -> "provider:model". */
  routes?: Record<string, string>;
  /** More provider lines (YAML, indented two spaces, under `providers:`). */
  providers?: string[];
  /** Raw YAML appended at the end. */
  extra?: string;
  maxCalls?: number;
}

/** A config: one openai-compatible provider `local`; every pipeline role routed to `local:<role>`, the gate to exec-model / chal-model. */
export function holdConfig(url: string, o: HoldConfig = {}): string {
  const routes: Record<string, string> = { default: "local:unrouted-role", executor: `local:${EXEC_MODEL}`, challenger: `local:${CHAL_MODEL}` };
  for (const r of PIPELINE_ROLES) routes[r] = `local:${r}`;
  Object.assign(routes, o.routes ?? {});
  const lines = [
    "providers:",
    `  local: { type: openai-compatible, base_url: "${url}"${o.apiKeyEnv ? `, api_key_env: ${o.apiKeyEnv}` : ""} }`,
    ...(o.providers ?? []),
    "routes:",
    ...Object.entries(routes).map(([role, target]) => `  ${JSON.stringify(role)}: { primary: ${JSON.stringify(target)} }`),
    "seed: 7",
    `call_timeout_ms: ${o.callTimeoutMs ?? 20_000}`,
    "retry_backoff_ms: 1",
    `budget: { max_calls_per_issue: ${o.maxCalls ?? 80} }`,
  ];
  return `${lines.join("\n")}\n${o.extra ?? ""}`;
}

export interface Event {
  type: string;
  at: string;
  issue_id: string | null;
  [k: string]: unknown;
}

export interface HoldWorld {
  dir: string;
  home: string;
  server: FakeOpenAI;
  /** Environment every run gets (besides DISSENT_HOME). */
  env: Record<string, string>;
  write(name: string, text: string): string;
  run(args: string[], opts?: { input?: string; env?: Record<string, string>; timeoutMs?: number }): Promise<CliResult>;
  /** Starts the CLI without waiting (to signal it, or to read its stderr as it comes). */
  start(args: string[], opts?: { env?: Record<string, string> }): { child: ChildProcess; done: Promise<CliResult>; stderrSoFar(): string };
  /** `issue new … --json`, which must succeed: the id. */
  newIssue(title: string, body?: string, labels?: string[]): Promise<string>;
  /** `dissent events --json`, parsed. */
  events(issue?: string): Promise<Event[]>;
  /** Requests the server got for one role. */
  requestsOf(role: string): ChatRequest[];
  close(): Promise<void>;
}

export function ok(r: CliResult, what: string): CliResult {
  if (r.code !== 0) throw new Error(`${what} exited ${String(r.code)}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

export async function holdWorld(
  script: Partial<Record<string, Answer>> = {},
  config: HoldConfig | ((url: string) => string) = {},
  env: Record<string, string> = {},
): Promise<HoldWorld> {
  const s = scratch("dissent-hold-");
  const server = await startOpenAIServer(council(script));
  const home = join(s.dir, "home");
  s.write("dissent.config.yaml", typeof config === "function" ? config(server.url) : holdConfig(server.url, config));
  const run: HoldWorld["run"] = (args, opts = {}) =>
    dissent(args, {
      cwd: s.dir,
      env: { DISSENT_HOME: home, ...env, ...opts.env },
      timeoutMs: opts.timeoutMs ?? 90_000,
      ...(opts.input !== undefined ? { input: opts.input } : {}),
    });
  const w: HoldWorld = {
    dir: s.dir,
    home,
    server,
    env,
    write: s.write,
    run,
    start(args, opts = {}) {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: s.dir,
        env: { PATH: process.env.PATH ?? "", HOME: s.dir, DISSENT_HOME: home, ...env, ...opts.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
      child.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
      const done = new Promise<CliResult>((resolve, reject) => {
        child.on("error", reject);
        child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
      });
      return { child, done, stderrSoFar: () => stderr };
    },
    async newIssue(title, body = "", labels = []) {
      const r = ok(await run(["issue", "new", "--title", title, "--body", body, ...labels.flatMap((l) => ["--label", l]), "--json"]), "issue new");
      return (JSON.parse(r.stdout) as { id: string }).id;
    },
    async events(issue) {
      const r = ok(await run(["events", "--json", ...(issue ? ["--issue", issue] : [])]), "events");
      return r.stdout
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as Event);
    },
    requestsOf: (role) => server.requests.filter((r) => roleOf(r) === role),
    close: async () => {
      await server.close();
      s.cleanup();
    },
  };
  return w;
}

/** The non-empty lines of a text. */
export const linesOf = (text: string) => text.split("\n").filter((l) => l.trim() !== "");

/** Runs a shell command line (for stdin redirections such as `< /dev/zero`) with a clean environment. */
export function sh(command: string, opts: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? "", HOME: opts.cwd, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => {
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL");
      } catch {
        // already gone
      }
    }, opts.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Single-quotes a word for /bin/sh. */
export const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** `node dist/cli/bin.js ARGS` as a shell command line. */
export const cliLine = (args: string[]) => [process.execPath, BIN, ...args].map(q).join(" ");

/**
 * Runs the CLI under a pseudo-terminal of `cols` columns (util-linux `script`): stderr (and stdout,
 * unless `stdoutTo` names a file for it) is the terminal, and what the terminal showed comes back as stdout.
 */
export function underPty(
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; cols: number; timeoutMs?: number; stdoutTo?: string },
): Promise<CliResult> {
  const line = `stty cols ${opts.cols} rows 40; exec ${cliLine(args)}${opts.stdoutTo ? ` > ${q(opts.stdoutTo)}` : ""}`;
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qfec", line, "/dev/null"], {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? "", HOME: opts.cwd, TERM: "xterm", COLUMNS: String(opts.cols), ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 90_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end();
  });
}

/** What a terminal shows, line by line: text split at \r and \n, each piece with its escape sequences removed. */
export function screenPieces(raw: string): string[] {
  const ansi = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;
  return raw
    .split(/\r\n|\r|\n/)
    .map((p) => p.replace(ansi, ""))
    .filter((p) => p !== "");
}

/** The width a piece takes on a terminal, in code points (every character dissent prints is one column wide). */
export const widthOf = (s: string) => [...s].length;

/** Whether the tests run as root, where file permissions do not stop a write. */
export const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

/**
 * How root runs a command as a user that file modes stop: `nobody` through runuser where `nobody` can
 * read the checkout, else root's own files seen as an unprivileged user's in a user namespace
 * (`unshare --map-user`), which works wherever the checkout lies. Null where neither works.
 */
let dropPrefix: string[] | null | undefined;
function unprivilegedPrefix(): string[] | null {
  if (dropPrefix !== undefined) return dropPrefix;
  const candidates = [
    ["runuser", "-u", "nobody", "--"],
    ["unshare", "--map-user=1000", "--map-group=1000", "--"],
  ];
  dropPrefix = null;
  for (const prefix of candidates) {
    const r = spawnSync(prefix[0] as string, [...prefix.slice(1), process.execPath, BIN, "--version"], { stdio: "ignore", timeout: 30_000 });
    if (r.status === 0) {
      dropPrefix = prefix;
      break;
    }
  }
  return dropPrefix;
}

/**
 * Runs the CLI as a user who cannot write a folder the caller made read-only (root: see
 * unprivilegedPrefix; otherwise as this user, the caller having chmodded the folder).
 */
export function dissentUnprivileged(args: string[], opts: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<CliResult> {
  let argv = [process.execPath, BIN, ...args];
  if (isRoot()) {
    const prefix = unprivilegedPrefix();
    if (!prefix)
      throw new Error("running as root, and neither `runuser -u nobody` nor `unshare --map-user` can run the built CLI here, so file modes cannot be tested");
    argv = [...prefix, ...argv];
  }
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? "", HOME: opts.cwd, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Makes a folder tree readable (and traversable) by everyone and writable by no one but root. */
export function readOnlyTree(path: string): void {
  const st = statSync(path);
  if (st.isDirectory()) {
    chmodSync(path, 0o555);
    for (const name of readdirSync(path)) readOnlyTree(join(path, name));
  } else chmodSync(path, 0o444);
}

/** Makes a folder tree writable again (so cleanup works when not root). */
export function writableTree(path: string): void {
  const st = statSync(path);
  if (st.isDirectory()) {
    chmodSync(path, 0o755);
    for (const name of readdirSync(path)) writableTree(join(path, name));
  } else chmodSync(path, 0o644);
}

/**
 * A YAML "billion laughs": nine levels of anchors, each a list of nine aliases of the one before
 * (9^9 ≈ 387 million strings once expanded), under `key`.
 */
export function aliasBomb(key = "bomb", indent = ""): string {
  const names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
  const lines = [`${indent}${key}:`];
  lines.push(`${indent}  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`);
  for (let i = 1; i < names.length; i++) {
    const prev = names[i - 1] as string;
    lines.push(`${indent}  ${names[i]}: &${names[i]} [${Array.from({ length: 9 }, () => `*${prev}`).join(",")}]`);
  }
  return `${lines.join("\n")}\n`;
}

/** Deterministic bytes (a linear congruential stream), for a "random" damaged file. */
export function noiseBytes(n: number, seed = 12345): Buffer {
  const out = Buffer.alloc(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}
