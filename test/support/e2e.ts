import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { dissent, scratch, type CliResult } from "./cli.js";
import { startOpenAIServer, type ChatRequest, type FakeOpenAI, type Reply } from "./openai-server.js";

/** Model names the e2e configs route the two roles to, so one server can tell them apart. */
export const EXEC_MODEL = "exec-model";
export const CHAL_MODEL = "chal-model";

export type Role = "executor" | "challenger" | "revision";

/** Which gate role a request is: the challenger by model, the revision by the draft it carries. */
export function roleOf(req: ChatRequest): Role {
  if (req.body.model === CHAL_MODEL) return "challenger";
  return req.body.messages.some((m) => m.role === "assistant") ? "revision" : "executor";
}

export type RoleReply = Reply | ((req: ChatRequest, n: number) => Reply | Promise<Reply>);

/** A handler answering per role; `n` counts that role's requests from 0. */
export function byRole(replies: Partial<Record<Role, RoleReply>>) {
  const counts: Record<Role, number> = { executor: 0, challenger: 0, revision: 0 };
  return (req: ChatRequest): Reply | Promise<Reply> => {
    const role = roleOf(req);
    const n = counts[role]++;
    const r = replies[role];
    if (r === undefined) return { status: 500, raw: JSON.stringify({ error: { message: `test: no reply for ${role}` } }) };
    return typeof r === "function" ? r(req, n) : r;
  };
}

/** The requests a server got, by gate role. */
export function requestsOf(server: FakeOpenAI, role: Role): ChatRequest[] {
  return server.requests.filter((r) => roleOf(r) === role);
}

/** A challenger reply as JSON text. */
export function audit(verdict: "pass" | "needs_work", concerns: { category: string; severity: string; evidence: string; concern: string }[] = []): string {
  return JSON.stringify({ verdict, concerns });
}

export interface ConfigOptions {
  /** Base URL of the primary provider `local`. */
  url: string;
  /** Base URL of a provider `backup`, the executor's (and challenger's) secondary. */
  secondaryUrl?: string;
  seed?: number;
  callTimeoutMs?: number;
  apiKeyEnv?: string;
  /** Extra YAML appended at the end. */
  extra?: string;
}

/** A dissent config routing the executor and challenger to the test server(s). */
export function configYaml(o: ConfigOptions): string {
  const lines = [
    "providers:",
    `  local: { type: openai-compatible, base_url: "${o.url}"${o.apiKeyEnv ? `, api_key_env: ${o.apiKeyEnv}` : ""} }`,
    ...(o.secondaryUrl ? [`  backup: { type: openai-compatible, base_url: "${o.secondaryUrl}" }`] : []),
    "routes:",
    `  executor: { primary: "local:${EXEC_MODEL}"${o.secondaryUrl ? `, secondary: "backup:${EXEC_MODEL}"` : ""} }`,
    `  challenger: { primary: "local:${CHAL_MODEL}"${o.secondaryUrl ? `, secondary: "backup:${CHAL_MODEL}"` : ""} }`,
    `seed: ${o.seed ?? 42}`,
    `call_timeout_ms: ${o.callTimeoutMs ?? 10_000}`,
    "retry_backoff_ms: 10",
  ];
  return `${lines.join("\n")}\n${o.extra ?? ""}`;
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Every file under a folder (recursively), with its bytes. */
export function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push({ path, bytes: readFileSync(path) });
  }
  return out;
}

/** One e2e world: a scratch folder holding dissent.config.yaml, a fake server, and a CLI runner. */
export interface World {
  dir: string;
  home: string;
  server: FakeOpenAI;
  write(name: string, text: string): string;
  /** Runs `dissent ARGS` in the scratch folder with DISSENT_HOME set; `env` adds variables. */
  run(args: string[], opts?: { input?: string; env?: Record<string, string> }): Promise<CliResult>;
  close(): Promise<void>;
}

export async function world(handler: Parameters<typeof startOpenAIServer>[0], config?: Omit<ConfigOptions, "url"> | ((url: string) => string)): Promise<World> {
  const s = scratch();
  const server = await startOpenAIServer(handler);
  const home = join(s.dir, "home");
  s.write("dissent.config.yaml", typeof config === "function" ? config(server.url) : configYaml({ url: server.url, ...config }));
  return {
    dir: s.dir,
    home,
    server,
    write: s.write,
    run: (args, opts = {}) =>
      dissent(args, { cwd: s.dir, env: { DISSENT_HOME: home, ...opts.env }, ...(opts.input !== undefined ? { input: opts.input } : {}) }),
    close: async () => {
      await server.close();
      s.cleanup();
    },
  };
}

/** The stdout of a `--json` run, parsed. */
export interface RunJson {
  final_output: string;
  audit_meta: {
    audit_used: boolean;
    audit_verdict: "pass" | "needs_work" | null;
    revised: boolean;
    audit_passes: number;
    revision_passes: number;
    challenger_status: "ok" | "failed" | "skipped";
    challenger_error?: string;
    concerns: number;
    ungrounded_concerns: number;
    revision_drift?: { kind: string; text: string }[];
  };
  run: {
    run_id: string;
    calls: {
      role: string;
      provider: string;
      model: string;
      route: "primary" | "secondary";
      cached: boolean;
      latency_ms: number;
      input_tokens: number;
      output_tokens: number;
    }[];
  };
}

export function parseJsonOut(r: CliResult): RunJson {
  if (r.code !== 0) throw new Error(`dissent exited ${String(r.code)}: ${r.stderr}`);
  const lines = r.stdout.split("\n");
  if (lines.length !== 2 || lines[1] !== "") throw new Error(`--json stdout is not one line: ${JSON.stringify(r.stdout)}`);
  return JSON.parse(lines[0] ?? "") as RunJson;
}

/** The one line `dissent: error: …` of a failed run (and nothing else on stderr). */
export function errorLine(r: CliResult): string {
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  if (lines.length !== 1) throw new Error(`expected one stderr line, got ${lines.length}: ${JSON.stringify(r.stderr)}`);
  const line = lines[0] ?? "";
  if (!line.startsWith("dissent: error: ")) throw new Error(`not an error line: ${line}`);
  return line;
}
