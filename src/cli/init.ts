import { existsSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import {
  API_MODELS,
  defaultsFor,
  detect,
  EMBEDDED_MODELS,
  JUDGE_ROUTES,
  OLLAMA_MODELS,
  ollamaUrl,
  pairRoutes,
  pickOllamaModels,
  probeOllama,
  type Found,
} from "../config/defaults.js";
import { parseConfigText } from "../config/load.js";
import { UsageError } from "../errors.js";
import { addPart, engineInstalled, installCommand, OPT_IN_PARTS } from "../opt-in.js";
import { writeNoFollow } from "../files/write.js";
import type { ProviderConfig, RouteConfig } from "../contracts/config.js";
import { json, type Common } from "./common.js";
import { findServer, type ServerFound } from "./init-server.js";
import { terminalSafe } from "../terminal.js";
import type { Io } from "./io.js";

export interface InitFlags extends Common {
  force?: boolean;
  /** An OpenAI-compatible server of the user's own (vLLM, LM Studio, a gateway). */
  baseUrl?: string;
  /** Its model for drafting (with --base-url). */
  model?: string;
}

/** What init writes a config for: what the detection found, or the server named by --base-url. */
export type InitFound = Found | ServerFound;

/** The provider name init gives the server of --base-url. */
const SERVER = "local";

const q = (s: string) => JSON.stringify(s); // a JSON string is a YAML double-quoted scalar

/** What was found, in one line (the file's header and the command's output). */
export function foundLine(found: InitFound): string {
  switch (found.kind) {
    case "server": {
      const served = found.models
        ? `${found.models.length} model${found.models.length === 1 ? "" : "s"} served`
        : `not reached: ${found.unreached ?? "no answer"}; the model is not checked`;
      return `the OpenAI-compatible server at ${found.url} (${served}): drafting ${found.executor}, judging ${found.challenger}`;
    }
    case "ollama": {
      const { executor, challenger } = pickOllamaModels(found.models);
      const pulled = found.models.length ? `${found.models.length} model${found.models.length === 1 ? "" : "s"} pulled` : "no models pulled yet";
      return `Ollama at ${found.url} (${pulled}): drafting ${executor}, judging ${challenger}`;
    }
    case "openai":
      return `OPENAI_API_KEY is set: drafting ${API_MODELS.openai.executor}, judging ${API_MODELS.openai.challenger}`;
    case "anthropic":
      return `ANTHROPIC_API_KEY is set: drafting ${API_MODELS.anthropic.executor}, judging ${API_MODELS.anthropic.challenger}`;
    case "embedded":
      return `no Ollama and no API key: the embedded engine, drafting ${EMBEDDED_MODELS.executor.name}, judging ${EMBEDDED_MODELS.challenger.name}`;
  }
}

function providerLines(found: InitFound): string[] {
  switch (found.kind) {
    case "server":
      return [
        "  # An OpenAI-compatible server (vLLM, LM Studio, llama.cpp's server, a gateway), from `dissent init --base-url`.",
        "  # If it needs a key: api_key_env: NAME (the variable that holds it); never write the key here.",
        `  ${SERVER}: { type: openai-compatible, base_url: ${q(found.url)} }`,
        ...(found.challenger === found.executor
          ? [
              `  # It serves one model family: ${found.executor} drafts and judges itself, which is weak dissent.`,
              "  # Serve a second model of another family (or add a provider for one) and route the judges to it.",
            ]
          : []),
      ];
    case "ollama":
      return [
        "  # Ollama's OpenAI-compatible API. One local GPU serves one request at a time best.",
        `  ollama: { type: openai-compatible, base_url: ${q(`${found.url}/v1`)}, max_concurrency: 1 }`,
        ...(found.models.length === 0
          ? [`  # Ollama has no models yet: ollama pull ${OLLAMA_MODELS.executor} && ollama pull ${OLLAMA_MODELS.challenger}`]
          : []),
      ];
    case "openai":
      return ["  # The key is read from OPENAI_API_KEY (api_key_env names another variable); never write it here.", "  openai: { type: openai }"];
    case "anthropic":
      return ["  # The key is read from ANTHROPIC_API_KEY (api_key_env names another variable); never write it here.", "  anthropic: { type: anthropic }"];
    case "embedded": {
      const { executor: e, challenger: c } = EMBEDDED_MODELS;
      return [
        "  # In-process GGUF models (node-llama-cpp): downloaded once into models_dir, then offline.",
        `  # The engine is one command away (a default install leaves it out): ${installCommand(OPT_IN_PARTS.engine)}`,
        "  # model: hf:<user>/<repo>:<quant>, or a .gguf file (relative to this file's folder).",
        "  # Optional: context_size, threads, gpu (auto | false), max_concurrency (default 2).",
        `  drafter: { type: llama-cpp, model: ${q(e.ref)} }   # ${e.family}, ~${(e.approxBytes / 1e9).toFixed(1)} GB`,
        `  judge:   { type: llama-cpp, model: ${q(c.ref)} }   # ${c.family}, ~${(c.approxBytes / 1e9).toFixed(1)} GB`,
      ];
    }
  }
}

/** The providers and routes init writes for what it found. */
export function initDefaults(found: InitFound): { providers: Record<string, ProviderConfig>; routes: Record<string, RouteConfig> } {
  if (found.kind !== "server") return defaultsFor(found);
  return {
    providers: { [SERVER]: { type: "openai-compatible", base_url: found.url } },
    routes: pairRoutes(`${SERVER}:${found.executor}`, `${SERVER}:${found.challenger}`),
  };
}

/** The commented dissent.config.yaml for what was found (docs/configuration.md, §11). */
export function renderInitConfig(found: InitFound): string {
  const { routes } = initDefaults(found);
  const width = Math.max(...Object.keys(routes).map((r) => r.length)) + 1;
  const comment: Record<string, string> = {
    default: "executor, producers, complexity gate, verifier (second opinions)",
    challenger: "the audit gate's challenger",
    assumption_surfacer: "discover and plan councils",
    discovery: "discovery.* critics",
    plan: "plan.builder, plan.tester, plan.risk_skeptic (the producer is planner)",
    plan_reviewer: "the plan reviewer",
  };
  const routeLines = Object.entries(routes).map(([role, r]) => {
    const c = comment[role] ?? (JUDGE_ROUTES.includes(role as (typeof JUDGE_ROUTES)[number]) ? "critic" : "");
    return `  ${`${role}:`.padEnd(width + 1)} { primary: ${q(r.primary)} }${c ? `   # ${c}` : ""}`;
  });
  return [
    "# dissent.config.yaml, written by `dissent init` for what it found on this machine:",
    `# ${foundLine(found)}.`,
    "# `dissent doctor` checks every route below. Reference: dissent's docs/configuration.md and",
    "# docs/local-engine.md (the package ships them: `dissent init --help` prints where).",
    "",
    "providers:",
    ...providerLines(found),
    "",
    '# role -> "provider:model", most specific first (plan.builder -> plan -> default); `secondary:`',
    "# is tried when the primary cannot be reached. Drafting and judging use two model families:",
    "# a model reviewing itself is weak dissent.",
    "routes:",
    ...routeLines,
    "",
    "seed: 7                       # sent with every call (temperature is always 0)",
    "# call_timeout_ms: 120000     # bounds each attempt of each call",
    ...(found.kind === "embedded"
      ? ["# models_dir: ~/.cache/dissent/models", "# offline: false             # true (or DISSENT_OFFLINE=1): never download; place the files yourself"]
      : []),
    '# policies: ["No medical dosing advice."]   # text, or a path to a .md/.txt file',
    "# budget: { max_calls_per_issue: 60, max_cycles_per_issue: 3 }   # over an issue's whole life (docs/configuration.md)",
    "",
  ].join("\n");
}

/**
 * `dissent init [--force] [--base-url URL [--model M]]`: writes a commented dissent.config.yaml for
 * what it finds, or for the server named (docs/local-engine.md#dissent-init). With nothing found and
 * the in-process engine not installed it writes nothing: a config for an engine that is not there
 * would fail its first command; the one line says what to install or what to name instead.
 */
export async function initCommand(flags: InitFlags, io: Io): Promise<number> {
  if (flags.model !== undefined && flags.baseUrl === undefined)
    throw new UsageError("--model needs --base-url: it names a model of that server (for Ollama and the APIs, init picks the models)");
  const path = resolve(io.cwd, flags.config ?? "dissent.config.yaml");
  const rel = relative(io.cwd, path);
  const shown = rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
  if (existsSync(path) && !flags.force) throw new UsageError(`${shown} already exists: dissent init --force replaces it`);
  const found: InitFound = flags.baseUrl !== undefined ? await findServer(flags.baseUrl, flags.model) : detect(io.env, await probeOllama(ollamaUrl(io.env)));
  if (found.kind === "embedded" && !engineInstalled())
    throw new UsageError(
      `found no models to write a config for: no Ollama at ${ollamaUrl(io.env)}, neither OPENAI_API_KEY nor ANTHROPIC_API_KEY set, and the in-process engine is not installed: ${addPart(OPT_IN_PARTS.engine)}, or for a server of your own (vLLM, LM Studio, a gateway) dissent init --base-url URL [--model M]`,
    );
  const text = renderInitConfig(found);
  parseConfigText(text, shown); // what we write must load: a bug here fails before the file exists
  // Never through a link planted at the path, never into a folder that is not there: one usage line naming it.
  const wrote = writeNoFollow(path, text, { overwrite: Boolean(flags.force) });
  if (!wrote.ok)
    throw new UsageError(
      `${shown} ${wrote.reason}${wrote.reason === "already exists" ? ": dissent init --force replaces it" : ""}${flags.config ? " (--config)" : ""}`,
    );
  if (flags.json) {
    const { providers, routes } = initDefaults(found);
    const engine = found.kind === "embedded" ? { engine: { installed: engineInstalled(), install: installCommand(OPT_IN_PARTS.engine) } } : {};
    const server = found.kind === "server" ? { server: { url: found.url, models: found.models ?? null, reached: found.models !== undefined } } : {};
    json(io, { path, found: found.kind, providers, routes, ...engine, ...server });
  } else {
    io.stdout(`wrote ${shown}: ${terminalSafe(foundLine(found))}\n`);
    if (found.kind === "server" && found.challenger === found.executor)
      io.stdout(
        `warning: ${terminalSafe(found.executor)} drafts and judges itself (the server serves one model family): a model reviewing itself is weak dissent\n`,
      );
    io.stdout(`check it with: dissent doctor${found.kind === "server" && !found.models ? " (once the server is up)" : ""}\n`);
  }
  return 0;
}
