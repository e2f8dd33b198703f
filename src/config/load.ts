import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import { ConfigFile, type Config } from "../contracts/config.js";
import { ConfigError } from "../errors.js";
import { checkRoutes } from "../models/router.js";

/** With no config at all: a local Ollama, executor and challenger on different models. */
export const DEFAULT_PROVIDERS: Config["providers"] = {
  ollama: { type: "openai-compatible", base_url: "http://127.0.0.1:11434/v1" },
};
export const DEFAULT_ROUTES: Config["routes"] = {
  default: { primary: "ollama:qwen3:8b" },
  challenger: { primary: "ollama:llama3.1:8b" },
};
export const OLLAMA_HINT =
  "Start Ollama (`ollama serve`, then `ollama pull qwen3:8b` and `ollama pull llama3.1:8b`), or write a dissent.config.yaml naming a provider and set its API key (e.g. OPENAI_API_KEY)";

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

/** A policy or constraint entry is a file when it names an existing file; otherwise it is the text itself. */
export function textOrFile(entry: string, baseDir: string): string {
  if (entry.includes("\n") || entry.length > 1024) return entry;
  const path = resolve(baseDir, entry.trim());
  try {
    if (existsSync(path) && statSync(path).isFile()) return readFileSync(path, "utf8").trim();
  } catch {
    // unreadable: fall through and treat the entry as text
  }
  return entry;
}

/** Parses and validates one YAML config; errors name the file and, where known, the line. */
export function parseConfigText(text: string, file: string): ConfigFile {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const err = doc.errors[0];
  if (err) {
    const pos = err.linePos?.[0] ?? lineCounter.linePos(err.pos[0]);
    const at = pos ? `${file}:${pos.line}:${pos.col}` : file;
    throw new ConfigError(`${at}: invalid YAML: ${err.message.split("\n")[0]}`);
  }
  const raw: unknown = doc.toJS() ?? {};
  const parsed = ConfigFile.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (!issue) throw new ConfigError(`${file}: invalid configuration`);
  let path: PropertyKey[] = issue.path;
  if (issue.code === "unrecognized_keys") path = [...path, issue.keys[0] ?? ""];
  let node: unknown;
  for (let n = path.length; n >= 0 && !node; n--) node = doc.getIn(path.slice(0, n) as string[], true);
  const range = (node as { range?: [number, number, number] } | undefined)?.range;
  const line = range ? `:${lineCounter.linePos(range[0]).line}` : "";
  const key = path.map(String).join(".");
  const message = issue.code === "unrecognized_keys" ? `unknown key '${key}'` : `${key || "config"} ${issue.message}`;
  throw new ConfigError(`${file}${line}: ${message}`);
}

/** Loads the configuration every command works from (CONTRACT §2). */
export function loadConfig(opts: LoadOptions): Config {
  const path = findConfig(opts);
  let file: ConfigFile = {};
  let source = "defaults";
  let baseDir = opts.cwd;
  if (path) {
    source = display(path, opts.cwd);
    baseDir = dirname(path);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (e) {
      throw new ConfigError(`${source}: cannot read config file (${(e as NodeJS.ErrnoException).code ?? "error"})`);
    }
    file = parseConfigText(text, source);
  }
  const envHome = opts.env.DISSENT_HOME;
  const home = envHome ? resolve(opts.cwd, envHome) : file.home ? resolve(baseDir, file.home) : resolve(opts.cwd, ".dissent");
  const config: Config = {
    source,
    home,
    // A config that names no providers (only policies, say) still runs on the built-in local defaults.
    providers: file.providers ?? DEFAULT_PROVIDERS,
    routes: file.routes ?? (file.providers ? {} : DEFAULT_ROUTES),
    seed: file.seed ?? 7,
    callTimeoutMs: file.call_timeout_ms ?? 120_000,
    retryBackoffMs: file.retry_backoff_ms ?? 500,
    policies: (file.policies ?? []).map((p) => textOrFile(p, baseDir)),
    constraints: (file.constraints ?? []).map((c) => textOrFile(c, baseDir)),
    tracker: file.tracker ?? { type: "local" },
    budget: { maxCallsPerIssue: file.budget?.max_calls_per_issue ?? 30 },
    wiki: { maxEntries: file.wiki?.max_entries ?? 5, maxChars: file.wiki?.max_chars ?? 4000 },
    logContent: file.log_content ?? false,
  };
  checkRoutes(config);
  return config;
}
