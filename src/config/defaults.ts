import { Worker } from "node:worker_threads";
import type { ConfigFile, ProviderConfig, RouteConfig } from "../contracts/config.js";

/**
 * What dissent uses with no config file at all (docs/local-engine.md): Ollama when it answers on
 * 127.0.0.1:11434, else a provider whose API key is set (OpenAI, then Anthropic), else the embedded
 * engine with a default pair of small models of two families. The same detection writes `dissent init`'s
 * file. The choices are ADR-016's.
 */

/** Where Ollama is looked for; DISSENT_OLLAMA_URL moves it (tests, a remote Ollama). */
export const OLLAMA_URL = "http://127.0.0.1:11434";

/** How long the probe waits for Ollama: a local server answers in milliseconds. */
export const OLLAMA_PROBE_MS = 300;

/** The Ollama address for this environment, without a trailing slash. */
export const ollamaUrl = (env: Record<string, string | undefined>): string => (env.DISSENT_OLLAMA_URL || OLLAMA_URL).replace(/\/+$/, "");

/** One model Ollama has pulled (from /api/tags). */
export interface OllamaModel {
  name: string;
  family?: string;
  size?: number;
}

/** What the detection found, in the order it looks. */
export type Found =
  | { kind: "ollama"; url: string; models: OllamaModel[] }
  | { kind: "openai"; keyEnv: "OPENAI_API_KEY" }
  | { kind: "anthropic"; keyEnv: "ANTHROPIC_API_KEY" }
  | { kind: "embedded" };

/** A model the no-config default may download, described before it does. */
export interface DefaultModel {
  /** The `hf:` reference. */
  ref: string;
  /** The route label (`provider:label`). */
  label: string;
  name: string;
  family: string;
  /** The file's size, approximately (announced before the download). */
  approxBytes: number;
}

/**
 * The embedded engine's pair (ADR-016): Qwen2.5 1.5B Instruct (Alibaba) drafts — executor and
 * producers; Llama 3.2 3B Instruct (Meta) judges — challenger, critics and reviewer. Q4_K_M, CPU-friendly.
 */
export const EMBEDDED_MODELS: { executor: DefaultModel; challenger: DefaultModel } = {
  executor: {
    ref: "hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M",
    label: "qwen2.5-1.5b-instruct",
    name: "Qwen2.5-1.5B-Instruct Q4_K_M",
    family: "Qwen2.5 (Alibaba)",
    approxBytes: 1_120_000_000,
  },
  challenger: {
    ref: "hf:bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M",
    label: "llama-3.2-3b-instruct",
    name: "Llama-3.2-3B-Instruct Q4_K_M",
    family: "Llama 3.2 (Meta)",
    approxBytes: 2_020_000_000,
  },
};

/** The API defaults (ADR-016): a smaller model drafts, a larger one of the same vendor judges. */
export const API_MODELS = {
  openai: { executor: "gpt-4.1-mini", challenger: "gpt-4.1" },
  anthropic: { executor: "claude-haiku-4-5", challenger: "claude-sonnet-4-5" },
} as const;

/** Ollama's defaults when it has none of its own pulled (or none of two families). */
export const OLLAMA_MODELS = { executor: "qwen3:8b", challenger: "llama3.1:8b" } as const;

/**
 * Routes that go to the judging model: the audit gate's challenger and every pipeline critic and
 * reviewer (the rest — executor, producers, complexity gate — fall through to `default`). Pinned to
 * the stage table by a test.
 */
export const JUDGE_ROUTES = [
  "challenger",
  "assumption_surfacer",
  "discovery",
  "shape.challenger",
  "shape.user_advocate",
  "shape.tech_lead",
  "shape.product_strategist",
  "plan",
  "spec.judge",
  "plan_reviewer",
] as const;

/** Routes: `default` to the drafting target, every judging role to the other. */
export function pairRoutes(draft: string, judge: string): Record<string, RouteConfig> {
  const routes: Record<string, RouteConfig> = { default: { primary: draft } };
  for (const r of JUDGE_ROUTES) routes[r] = { primary: judge };
  return routes;
}

/** A model family from an Ollama name or family field: qwen3:8b → qwen, llama3.1 → llama. */
export function familyOf(m: OllamaModel): string {
  const raw = (m.family || m.name.split(":")[0] || m.name).toLowerCase();
  return raw.replace(/[\d.]+$/, "").replace(/[-_]?\d[\w.]*$/, "") || raw;
}

const isChatModel = (m: OllamaModel) => !/embed|bert|rerank|clip/i.test(`${m.name} ${m.family ?? ""}`);

/**
 * The drafting and judging models among those Ollama has: qwen3:8b and llama3.1:8b when pulled, else
 * the first chat model and the first of another family; the documented pair when it has none.
 */
export function pickOllamaModels(models: readonly OllamaModel[]): { executor: string; challenger: string } {
  const chat = models.filter(isChatModel);
  const has = (name: string) => chat.find((m) => m.name === name || m.name === `${name}:latest`);
  const executor = has(OLLAMA_MODELS.executor) ?? chat[0];
  if (!executor) return { ...OLLAMA_MODELS };
  const other = chat.filter((m) => familyOf(m) !== familyOf(executor));
  const preferred = has(OLLAMA_MODELS.challenger);
  const challenger = preferred && familyOf(preferred) !== familyOf(executor) ? preferred : other[0];
  return { executor: executor.name, challenger: (challenger ?? executor).name };
}

/** Reads Ollama's /api/tags body; undefined when it is not Ollama's. */
export function parseTags(body: string): OllamaModel[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (e) {
    if (e instanceof SyntaxError) return undefined; // something else answers there
    throw e;
  }
  const list = (json as { models?: unknown }).models;
  if (!Array.isArray(list)) return undefined;
  const out: OllamaModel[] = [];
  for (const m of list as unknown[]) {
    const name = (m as { name?: unknown; model?: unknown }).name ?? (m as { model?: unknown }).model;
    if (typeof name !== "string" || name === "") continue;
    const family = (m as { details?: { family?: unknown } }).details?.family;
    const size = (m as { size?: unknown }).size;
    out.push({ name, ...(typeof family === "string" ? { family } : {}), ...(typeof size === "number" ? { size } : {}) });
  }
  return out;
}

/** Asks Ollama for its models (GET /api/tags); undefined when nothing answers in time, or not Ollama. */
export async function probeOllama(url: string, timeoutMs = OLLAMA_PROBE_MS): Promise<OllamaModel[] | undefined> {
  try {
    const res = await fetch(`${url}/api/tags`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    return parseTags(await res.text());
  } catch (e) {
    // Refused, timed out, reset, DNS: Ollama is not there, which is an answer, not an error.
    if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError" || e.name === "TypeError")) return undefined;
    throw e;
  }
}

// The same probe, synchronously: config loading is synchronous, so a worker makes the request
// while this thread waits on a shared buffer (at most the timeout plus the worker's start).
const PROBE_WORKER = `
const { workerData } = require("node:worker_threads");
const http = require(workerData.url.startsWith("https:") ? "node:https" : "node:http");
const state = new Int32Array(workerData.shared, 0, 2);
const bytes = new Uint8Array(workerData.shared, 8);
let finished = false;
const done = (ok, body) => {
  if (finished) return;
  finished = true;
  const b = body || Buffer.alloc(0);
  const n = Math.min(b.length, bytes.length);
  bytes.set(b.subarray(0, n));
  Atomics.store(state, 1, n);
  Atomics.store(state, 0, ok ? 1 : 2);
  Atomics.notify(state, 0);
};
try {
  const req = http.get(workerData.url + "/api/tags", { timeout: workerData.timeout }, (res) => {
    const chunks = [];
    res.on("data", (c) => chunks.push(c));
    res.on("end", () => done(res.statusCode === 200, Buffer.concat(chunks)));
    res.on("error", () => done(false));
  });
  req.on("timeout", () => { req.destroy(); done(false); });
  req.on("error", () => done(false));
} catch (e) { done(false); }
`;

/** `probeOllama`, blocking: for the synchronous config loader. */
export function probeOllamaSync(url: string, timeoutMs = OLLAMA_PROBE_MS): OllamaModel[] | undefined {
  const shared = new SharedArrayBuffer(8 + 1024 * 1024);
  const state = new Int32Array(shared, 0, 2);
  const worker = new Worker(PROBE_WORKER, { eval: true, workerData: { url, timeout: timeoutMs, shared } });
  worker.unref();
  Atomics.wait(state, 0, 0, timeoutMs + 2000);
  void worker.terminate();
  if (Atomics.load(state, 0) !== 1) return undefined;
  const n = Atomics.load(state, 1);
  return parseTags(Buffer.from(new Uint8Array(shared, 8, n)).toString("utf8"));
}

/** The detection order of docs/local-engine.md, given what the Ollama probe saw. */
export function detect(env: Record<string, string | undefined>, ollama: OllamaModel[] | undefined): Found {
  if (ollama) return { kind: "ollama", url: ollamaUrl(env), models: ollama };
  if (env.OPENAI_API_KEY) return { kind: "openai", keyEnv: "OPENAI_API_KEY" };
  if (env.ANTHROPIC_API_KEY) return { kind: "anthropic", keyEnv: "ANTHROPIC_API_KEY" };
  return { kind: "embedded" };
}

/** The providers and routes for what was found. */
export function defaultsFor(found: Found): { providers: Record<string, ProviderConfig>; routes: Record<string, RouteConfig> } {
  switch (found.kind) {
    case "ollama": {
      const { executor, challenger } = pickOllamaModels(found.models);
      // One local GPU: one request at a time serves best (docs/configuration.md).
      return {
        providers: { ollama: { type: "openai-compatible", base_url: `${found.url}/v1`, max_concurrency: 1 } },
        routes: pairRoutes(`ollama:${executor}`, `ollama:${challenger}`),
      };
    }
    case "openai":
      return {
        providers: { openai: { type: "openai" } },
        routes: pairRoutes(`openai:${API_MODELS.openai.executor}`, `openai:${API_MODELS.openai.challenger}`),
      };
    case "anthropic":
      return {
        providers: { anthropic: { type: "anthropic" } },
        routes: pairRoutes(`anthropic:${API_MODELS.anthropic.executor}`, `anthropic:${API_MODELS.anthropic.challenger}`),
      };
    case "embedded": {
      const { executor: e, challenger: c } = EMBEDDED_MODELS;
      return {
        providers: { drafter: { type: "llama-cpp", model: e.ref }, judge: { type: "llama-cpp", model: c.ref } },
        routes: pairRoutes(`drafter:${e.label}`, `judge:${c.label}`),
      };
    }
  }
}

/** The config file the no-config default amounts to (docs/local-engine.md), probing Ollama synchronously. */
export function defaultConfigFile(env: Record<string, string | undefined>): ConfigFile {
  return defaultsFor(detect(env, probeOllamaSync(ollamaUrl(env))));
}

/** A default model by its reference, with what it is for: announced before it is downloaded. */
export function knownDefaultModel(uri: string): { label: string; approxBytes: number } | undefined {
  const { executor, challenger } = EMBEDDED_MODELS;
  if (uri === executor.ref) return { label: `${executor.name} for the executor and producers`, approxBytes: executor.approxBytes };
  if (uri === challenger.ref) return { label: `${challenger.name} for the challenger and critics`, approxBytes: challenger.approxBytes };
  return undefined;
}

/**
 * The no-config default fell through to the embedded engine, which is not installed (ADR-024): one
 * line saying why it got here and the three ways on — add the engine (`addEngine`), start Ollama, set a key.
 */
export function embeddedUnavailable(env: Record<string, string | undefined>, addEngine: string): string {
  return `no config file, no Ollama at ${ollamaUrl(env)} and neither OPENAI_API_KEY nor ANTHROPIC_API_KEY set, and the embedded engine that would run models in dissent's own process is not installed: ${addEngine}; or start Ollama, or set an API key`;
}

/** The first line said before the no-config default downloads its models: why the embedded engine. */
export function embeddedIntro(env: Record<string, string | undefined>): string {
  return `no config file, no Ollama at ${ollamaUrl(env)} and neither OPENAI_API_KEY nor ANTHROPIC_API_KEY set: using the embedded engine (\`dissent init\` writes a config to change this)`;
}
