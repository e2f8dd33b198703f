import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { Document, LineCounter } from "yaml";
import { ConfigFile, MIN_CALLS_PER_ISSUE, type Config } from "../contracts/config.js";
import { ConfigError } from "../errors.js";
import { readBounded } from "../files/read.js";
import { DEFAULT_MAX_REPLY_BYTES } from "../models/reply-cap.js";
import { checkRoutes, roleChain } from "../models/router.js";
import { DEFAULT_BUDGET_TOKENS, DEFAULT_CODE_LIMITS } from "../code/limits.js";
import { statSync } from "node:fs";
import { keyEnvOf, resolveHeaders } from "../models/providers.js";
import { defaultConfigFile } from "./defaults.js";
import { unknownKeyMessage } from "./key-suggest.js";
import { unknownRoute, unknownRouteMessage } from "./roles.js";
import { yaml } from "./yaml.js";

/** A config file that names no providers (only policies, say): a local Ollama, executor and challenger on different model families. */
export const DEFAULT_PROVIDERS: Config["providers"] = {
  ollama: { type: "openai-compatible", base_url: "http://127.0.0.1:11434/v1" },
};
export const DEFAULT_ROUTES: Config["routes"] = {
  default: { primary: "ollama:qwen3:8b" },
  challenger: { primary: "ollama:llama3.1:8b" },
};
export const OLLAMA_HINT =
  "Start Ollama (`ollama serve`, then `ollama pull qwen3:8b` and `ollama pull llama3.1:8b`), or write a dissent.config.yaml naming a provider and set its API key (e.g. OPENAI_API_KEY)";

/** Documented input limits (issue #9): a read beyond them is a clear error, never a 9 GB buffer. */
export const LIMITS = {
  configBytes: 1024 * 1024,
  policyBytes: 256 * 1024,
  promptBytes: 1024 * 1024,
  bodyBytes: 1024 * 1024,
  /** Each of `project.context_files` (docs/configuration.md): it goes into every pipeline request. */
  contextFileBytes: 64 * 1024,
} as const;

/** Default `mcp.max_message_bytes`: a 1 MiB prompt and a 1 MiB draft, JSON-escaped, fit (docs/limits.md). */
export const DEFAULT_MCP_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** Default `budget.max_calls_per_issue`: about one full load-bearing cycle and two replans (ADR-021). */
export const DEFAULT_MAX_CALLS_PER_ISSUE = 60;
/** Default `serve.max_clients`: live-stream clients one `dissent serve` holds at once (docs/limits.md). */
export const DEFAULT_SERVE_MAX_CLIENTS = 256;
/** Default `serve.client_buffer_bytes`: what it holds unsent for one of them before letting it go. */
export const DEFAULT_SERVE_CLIENT_BUFFER_BYTES = 256 * 1024;
/** Default `serve.estimate_at`: the list price the dashboard estimates calls of unknown price at. */
export const DEFAULT_SERVE_ESTIMATE_AT = "openai:gpt-4o-mini";
/** Default `review.inline_min_severity`: MEDIUM and above become inline comments on the pull request; LOW stays in the review's body. */
export const DEFAULT_REVIEW_INLINE_MIN_SEVERITY = "MEDIUM";
/** Default `budget.max_cycles_per_issue`. */
export const DEFAULT_MAX_CYCLES_PER_ISSUE = 3;

export interface LoadOptions {
  /** `--config FILE` */
  flag?: string;
  env: Record<string, string | undefined>;
  cwd: string;
}

/** Finds the config: `--config`, then DISSENT_CONFIG, then ./dissent.config.yaml; undefined means built-in defaults. */
export function findConfig(opts: LoadOptions): string | undefined {
  const named = opts.flag ?? opts.env.DISSENT_CONFIG;
  if (named) {
    const path = resolve(opts.cwd, named);
    if (!existsSync(path)) {
      throw new ConfigError(`config file ${named} not found${opts.flag ? " (--config)" : " (DISSENT_CONFIG)"}`);
    }
    return path;
  }
  const local = resolve(opts.cwd, "dissent.config.yaml");
  return existsSync(local) ? local : undefined;
}

function display(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

/**
 * Reads at most `limit` bytes of a regular file as UTF-8 (src/files/read.ts): a larger file, a
 * folder, a FIFO or a device (/dev/zero) is a ConfigError naming it, never a blocked or runaway read.
 */
export function readCapped(path: string, limit: number, what: string): string {
  const got = readBounded(path, limit);
  if (got.ok) return got.text;
  throw new ConfigError(`${what} ${path}: ${got.reason}`);
}

/**
 * docs/configuration.md: a policy or constraint with no whitespace that starts with `./`, `../`, `/` or
 * `~/`, or ends in `.md` or `.txt`, is a file path; anything else is the text itself.
 */
export function isPathLike(entry: string): boolean {
  const t = entry.trim();
  if (t === "" || /\s/.test(t)) return false;
  return /^(\.\/|\.\.\/|\/|~\/)/.test(t) || /\.(md|txt)$/i.test(t);
}

/** A policy or constraint entry: its text, or the content of the file it names (a missing file is an error naming it). */
export function textOrFile(entry: string, baseDir: string, what = "policy file"): string {
  if (!isPathLike(entry)) return entry;
  const t = entry.trim();
  const path = t.startsWith("~/") ? join(homedir(), t.slice(2)) : resolve(baseDir, t);
  if (!existsSync(path)) throw new ConfigError(`${what} ${t} not found (${path})`);
  return readCapped(path, LIMITS.policyBytes, what).trim();
}

/** Parses and validates one YAML config; errors name the file and, where known, the line. */
export function parseConfigText(text: string, file: string): ConfigFile {
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const err = doc.errors[0];
  if (err) {
    const pos = err.linePos?.[0] ?? lineCounter.linePos(err.pos[0]);
    const at = pos ? `${file}:${pos.line}:${pos.col}` : file;
    throw new ConfigError(`${at}: invalid YAML: ${err.message.split("\n")[0]}`);
  }
  let raw: unknown;
  try {
    // YAML aliases expand into copies: a few lines can stand for billions of nodes. The parser counts them.
    raw = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (e) {
    throw new ConfigError(`${file}: invalid YAML: ${(e as Error).message.split("\n")[0]}`);
  }
  const parsed = ConfigFile.safeParse(raw);
  if (parsed.success) {
    const unknown = unknownRoute(parsed.data.routes);
    if (unknown) throw new ConfigError(`${file}${keyLine(doc, lineCounter, ["routes", unknown.name])}: ${unknownRouteMessage(unknown)}`);
    const role = unknownRoute(parsed.data.context?.roles);
    if (role) throw new ConfigError(`${file}${keyLine(doc, lineCounter, ["context", "roles", role.name])}: ${contextRoleMessage(role)}`);
    return parsed.data;
  }
  const issue = parsed.error.issues[0];
  if (!issue) throw new ConfigError(`${file}: invalid configuration`);
  let path: PropertyKey[] = issue.path;
  if (issue.code === "unrecognized_keys") path = [...path, issue.keys[0] ?? ""];
  let node: unknown;
  for (let n = path.length; n >= 0 && !node; n--) node = doc.getIn(path.slice(0, n) as string[], true);
  const range = (node as { range?: [number, number, number] } | undefined)?.range;
  const line = range ? `:${lineCounter.linePos(range[0]).line}` : "";
  const key = path.map(String).join(".");
  const message = issue.code === "unrecognized_keys" ? unknownKeyMessage(ConfigFile, issue.path, issue.keys[0] ?? "") : `${key || "config"} ${issue.message}`;
  throw new ConfigError(`${file}${line}: ${message}`);
}

/** `:LINE` of a mapping key (`routes.challanger`) in a YAML document, or "" when it cannot be found. */
function keyLine(doc: Document, lines: LineCounter, path: readonly string[]): string {
  const { isMap, isScalar } = yaml();
  const parent = doc.getIn(path.slice(0, -1), true);
  if (!isMap(parent)) return "";
  const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === path[path.length - 1]);
  const range = isScalar(pair?.key) ? pair.key.range : undefined;
  return range ? `:${lines.linePos(range[0]).line}` : "";
}

/** `project:` with its context files read (capped, relative to the config file); a missing file is an error naming it. */
function projectOf(project: ConfigFile["project"], baseDir: string, source: string): Config["project"] {
  const files = (project?.context_files ?? []).map((path) => {
    const full = resolve(baseDir, path.startsWith("~/") ? join(homedir(), path.slice(2)) : path);
    if (!existsSync(full)) throw new ConfigError(`${source}: project.context_files: ${path} not found (${full})`);
    try {
      return { path, text: readCapped(full, LIMITS.contextFileBytes, "project context file").trim() };
    } catch (e) {
      throw new ConfigError(`${source}: project.context_files: ${(e as Error).message}`);
    }
  });
  return { name: project?.name?.trim() || null, description: project?.description?.trim() || null, files };
}

/** A percent-encoded value decoded, or as it is when it is not valid encoding. */
function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value; // not percent-encoding: the value itself is the secret
  }
}

/** Every secret a config names, read from the environment at load (docs/configuration.md): redaction never waits for a call. */
function secretsOf(config: Omit<Config, "secrets">, env: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  for (const [name, p] of Object.entries(config.providers)) {
    const keyEnv = keyEnvOf(p);
    const key = keyEnv ? env[keyEnv] : undefined;
    if (key) out.push(key);
    try {
      out.push(...resolveHeaders(name, p, env, config.source).secrets);
    } catch {
      // an unset ${VAR}: nothing to redact yet; requireKeys reports it when a command would use it
    }
  }
  if (config.tracker.type === "github" && env[config.tracker.token_env]) out.push(env[config.tracker.token_env] as string);
  if (config.store.type === "postgres") {
    const url = env[config.store.url_env];
    if (url) {
      try {
        const password = decodeURIComponent(new URL(url).password);
        if (password) out.push(password);
      } catch {
        // not a URL: the store reports it when opened
      }
    }
  }
  if (env.DISSENT_SERVE_TOKEN) out.push(env.DISSENT_SERVE_TOKEN);
  // The credentials the coding agent is handed (implement.env): one it copies into its diff is redacted as dissent's own are.
  for (const name of config.implement?.env ?? []) {
    const value = env[name];
    if (value && /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH/i.test(name)) out.push(value);
  }
  // The collector's credentials: a password in its URL, and the values of OTEL_EXPORTER_OTLP_HEADERS (a vendor's key).
  const otlp = config.telemetry.otlpEndpoint;
  if (otlp && URL.canParse(otlp)) {
    const password = new URL(otlp).password;
    if (password) out.push(password, safeDecode(password));
  }
  for (const pair of (env.OTEL_EXPORTER_OTLP_HEADERS ?? "").split(",")) {
    const value = pair.slice(pair.indexOf("=") + 1).trim();
    if (pair.includes("=") && value) out.push(value, safeDecode(value));
  }
  return out.filter((s) => s.length >= 4);
}

/** The `implement:` section resolved: the repository path made absolute (docs/configuration.md). */
function implementOf(file: ConfigFile["implement"], baseDir: string): Config["implement"] {
  if (!file) return null;
  return {
    repo: resolve(baseDir, file.repo),
    baseBranch: file.base_branch,
    remote: file.remote,
    command: file.command,
    testCommand: file.test_command ?? null,
    attemptTimeoutMs: file.attempt_timeout_ms,
    testTimeoutMs: file.test_timeout_ms,
    env: file.env,
    sandbox: file.sandbox,
    network: file.network,
    writable: file.writable.map((p) => resolve(baseDir, p.replace(/^~(?=\/|$)/, homedir()))),
    readable: file.readable.map((p) => resolve(baseDir, p.replace(/^~(?=\/|$)/, homedir()))),
    maxConcurrency: file.max_concurrency,
    openPr: file.open_pr,
    maxAttemptsPerIssue: file.max_attempts_per_issue,
    maxAgentMsPerIssue: file.max_agent_ms_per_issue,
  };
}

/** The message for a `context.roles` entry that names no role. */
const contextRoleMessage = (u: { name: string; nearest: string }) =>
  `context.roles.${u.name} names no role: did you mean '${u.nearest}'? (the roles are listed in docs/configuration.md)`;

/**
 * `project.repo` and `context:` resolved (docs/configuration.md): the repository — the checkout named,
 * else implement.repo, else the GitHub tracker's repository through the API, else none — and the budgets.
 */
function codeOf(file: ConfigFile, baseDir: string, source: string, implement: Config["implement"], tracker: Config["tracker"]): Config["code"] {
  const repo = file.project?.repo;
  let src: Config["code"]["source"] = null;
  if (typeof repo === "string") {
    const root = resolve(baseDir, repo.startsWith("~/") ? join(homedir(), repo.slice(2)) : repo);
    const st = statSync(root, { throwIfNoEntry: false });
    if (!st) throw new ConfigError(`${source}: project.repo: ${repo} not found (${root})`);
    if (!st.isDirectory()) throw new ConfigError(`${source}: project.repo: ${repo} is not a folder (${root})`);
    src = { kind: "local", root };
  } else if (repo === undefined) {
    if (implement) src = { kind: "local", root: implement.repo };
    else if (tracker.type === "github") src = { kind: "github", repo: tracker.repo };
  }
  const ctx = file.context;
  const budgetTokens = ctx?.budget_tokens ?? DEFAULT_BUDGET_TOKENS;
  const roles = { ...(ctx?.roles ?? {}) };
  const budgetFor = (role: string): number => {
    for (const name of roleChain(role)) {
      const n = roles[name];
      if (n !== undefined) return n;
    }
    return budgetTokens;
  };
  const m = ctx?.map;
  return {
    source: src,
    budgetTokens,
    roles,
    budgetFor,
    limits: {
      maxFiles: m?.max_files ?? DEFAULT_CODE_LIMITS.maxFiles,
      maxFileBytes: m?.max_file_bytes ?? DEFAULT_CODE_LIMITS.maxFileBytes,
      maxTotalBytes: m?.max_total_bytes ?? DEFAULT_CODE_LIMITS.maxTotalBytes,
      parseMs: m?.parse_ms ?? DEFAULT_CODE_LIMITS.parseMs,
    },
  };
}

/** Loads the configuration every command works from (docs/configuration.md). */
export function loadConfig(opts: LoadOptions): Config {
  const path = findConfig(opts);
  // No config at all: Ollama, else an API key, else the embedded engine (docs/local-engine.md; config/defaults.ts).
  if (!path) return buildConfig(defaultConfigFile(opts.env), { source: "defaults", baseDir: opts.cwd, env: opts.env, cwd: opts.cwd });
  const source = display(path, opts.cwd);
  let text: string;
  try {
    text = readCapped(path, LIMITS.configBytes, "config file");
  } catch (e) {
    throw new ConfigError(`${source}: ${(e as Error).message.replace(/^config file \S+:? ?/, "")}`);
  }
  return buildConfig(parseConfigText(text, source), { source, baseDir: dirname(path), env: opts.env, cwd: opts.cwd });
}

/** A config given as an object (the library's `createDissent({ config })`), validated like a file. */
export function configFromObject(value: unknown, opts: { env: Record<string, string | undefined>; cwd: string }): Config {
  const parsed = ConfigFile.safeParse(value ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue ? issue.path.map(String).join(".") : "";
    if (issue?.code === "unrecognized_keys") throw new ConfigError(`config: ${unknownKeyMessage(ConfigFile, issue.path, issue.keys[0] ?? "")}`);
    throw new ConfigError(`config: ${key ? `${key} ` : ""}${issue?.message ?? "invalid configuration"}`);
  }
  const unknown = unknownRoute(parsed.data.routes);
  if (unknown) throw new ConfigError(`config: ${unknownRouteMessage(unknown)}`);
  const role = unknownRoute(parsed.data.context?.roles);
  if (role) throw new ConfigError(`config: ${contextRoleMessage(role)}`);
  return buildConfig(parsed.data, { source: "config", baseDir: opts.cwd, env: opts.env, cwd: opts.cwd });
}

/** Resolves a validated config file against the environment: defaults, home, policies, limits and secrets. */
export function buildConfig(file: ConfigFile, at: { source: string; baseDir: string; env: Record<string, string | undefined>; cwd: string }): Config {
  const { source, baseDir, env, cwd } = at;
  const envHome = env.DISSENT_HOME;
  // Without DISSENT_HOME or home:, state lives beside the config file (`--config` from another folder opens that project's store), else in the cwd.
  const home = envHome ? resolve(cwd, envHome) : resolve(baseDir, file.home ?? ".dissent");
  const maxCalls = file.budget?.max_calls_per_issue ?? DEFAULT_MAX_CALLS_PER_ISSUE;
  if (maxCalls < MIN_CALLS_PER_ISSUE) {
    throw new ConfigError(
      `${source}: budget.max_calls_per_issue is ${maxCalls}, below ${MIN_CALLS_PER_ISSUE}, the least a load-bearing issue needs (the gate call, one round of every stage: 5+5+5+2, and the plan reviewer)`,
    );
  }
  const policyIn = (what: string) => (entry: string) => {
    try {
      return textOrFile(entry, baseDir, what);
    } catch (e) {
      throw new ConfigError(`${source}: ${(e as Error).message}`);
    }
  };
  const modelsDir = file.models_dir ? resolve(baseDir, file.models_dir.replace(/^~(?=\/)/, homedir())) : join(homedir(), ".cache", "dissent", "models");
  const base: Omit<Config, "secrets"> = {
    source,
    baseDir,
    home,
    // A config that names no providers (only policies, say) still runs on the built-in local defaults.
    providers: file.providers ?? DEFAULT_PROVIDERS,
    routes: file.routes ?? (file.providers ? {} : DEFAULT_ROUTES),
    seed: file.seed ?? 7,
    callTimeoutMs: file.call_timeout_ms ?? 120_000,
    retryBackoffMs: file.retry_backoff_ms ?? 500,
    policies: (file.policies ?? []).map(policyIn("policy file")),
    constraints: (file.constraints ?? []).map(policyIn("constraint file")),
    tracker: file.tracker ?? { type: "local" },
    store: file.store ?? { type: "sqlite" },
    budget: {
      maxCallsPerIssue: maxCalls,
      maxUsdPerIssue: file.budget?.max_usd_per_issue ?? null,
      maxCyclesPerIssue: file.budget?.max_cycles_per_issue ?? DEFAULT_MAX_CYCLES_PER_ISSUE,
    },
    project: projectOf(file.project, baseDir, source),
    wiki: { maxEntries: file.wiki?.max_entries ?? 5, maxChars: file.wiki?.max_chars ?? 4000 },
    factory: {
      pollIntervalS: file.factory?.poll_interval_s ?? 60,
      concurrency: file.factory?.concurrency ?? 4,
      maxAttempts: file.factory?.max_attempts ?? 3,
      implement: file.factory?.implement ?? false,
    },
    implement: implementOf(file.implement, baseDir),
    code: codeOf(file, baseDir, source, implementOf(file.implement, baseDir), file.tracker ?? { type: "local" }),
    telemetry: {
      otlpEndpoint: file.telemetry?.otlp_endpoint ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? null,
      serviceName: file.telemetry?.service_name ?? env.OTEL_SERVICE_NAME ?? "dissent",
    },
    modelsDir,
    offline: file.offline ?? ["1", "true", "yes"].includes((env.DISSENT_OFFLINE ?? "").toLowerCase()),
    logContent: file.log_content ?? false,
    serve: {
      maxClients: file.serve?.max_clients ?? DEFAULT_SERVE_MAX_CLIENTS,
      clientBufferBytes: file.serve?.client_buffer_bytes ?? DEFAULT_SERVE_CLIENT_BUFFER_BYTES,
      estimateAt: file.serve?.estimate_at === false ? null : (file.serve?.estimate_at ?? DEFAULT_SERVE_ESTIMATE_AT),
      publicUrl: file.serve?.public_url?.replace(/\/+$/, "") ?? null,
    },
    review: {
      inlineMinSeverity: file.review?.inline_min_severity ?? DEFAULT_REVIEW_INLINE_MIN_SEVERITY,
      event: file.review?.event ?? "COMMENT",
    },
    maxReplyBytes: file.max_reply_bytes ?? DEFAULT_MAX_REPLY_BYTES,
    mcp: { maxMessageBytes: file.mcp?.max_message_bytes ?? DEFAULT_MCP_MAX_MESSAGE_BYTES },
  };
  if (base.factory.implement && !base.implement)
    throw new ConfigError(`${source}: factory.implement is true but the config has no implement: section (docs/implement.md)`);
  const config: Config = { ...base, secrets: secretsOf(base, env) };
  checkRoutes(config);
  return config;
}
