import type { LanguageModel } from "ai";
import type { ProviderConfig, ProviderType } from "../contracts/config.js";
import { ConfigError } from "../errors.js";
import { httpFetch } from "./http-fetch.js";
import { sseTolerant } from "./sse-fetch.js";

/** How requests ask for structured replies: OpenAI `response_format` json_schema / json_object, by prompt only, or by the engine's grammar. */
export type StructuredMode = "json_schema" | "json_object" | "prompt" | "grammar";

/** What creating a model needs besides the provider's config. */
export interface CreateContext {
  name: string;
  model: string;
  apiKey: string | undefined;
  /** Resolved header values (`${VAR}` already read from the environment). */
  headers: Record<string, string>;
  /** The config file's folder, for relative paths. */
  baseDir: string;
  env: Record<string, string | undefined>;
  /** The provider's `max_reply_bytes` (else the config's): replies are read no further (docs/limits.md). */
  maxReplyBytes: number;
}

/** One provider type (docs/configuration.md): adding a type is one entry in `PROVIDERS`. */
export interface ProviderType_ {
  /** The env variable a key is read from when `api_key_env` is not set; undefined when none is needed. */
  keyEnv?: string;
  /** Is a key required (a missing one is a configuration error before any call)? */
  keyRequired: boolean;
  defaultUrl: string;
  structured(p: ProviderConfig): StructuredMode;
  /** What identifies the endpoint in the cache key (never a credential). */
  cacheIdentity(p: ProviderConfig, model: string): string;
  create(p: ProviderConfig, ctx: CreateContext): Promise<LanguageModel>;
}

/** Merges `extra_body` into every JSON request body a provider sends (Ollama's `options`, say). */
function withExtraBody(extra: Record<string, unknown> | undefined, base: typeof fetch): typeof fetch {
  if (!extra || Object.keys(extra).length === 0) return base;
  return async (input, init) => {
    if (typeof init?.body === "string" && init.body.startsWith("{")) {
      try {
        const body = JSON.parse(init.body) as Record<string, unknown>;
        return base(input, { ...init, body: JSON.stringify({ ...body, ...extra }) });
      } catch {
        // not JSON after all: send it untouched
      }
    }
    return base(input, init);
  };
}

const urlOf = (p: ProviderConfig, fallback: string) => ("base_url" in p && p.base_url ? p.base_url : fallback);

export const PROVIDERS: Record<ProviderType, ProviderType_> = {
  "openai-compatible": {
    keyRequired: false,
    defaultUrl: "",
    structured: (p) => (p.structured_outputs === false ? "json_object" : "json_schema"),
    cacheIdentity: (p) => `openai-compatible ${urlOf(p, "")}`,
    async create(p, ctx) {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      return createOpenAICompatible({
        name: ctx.name,
        baseURL: urlOf(p, ""),
        ...(ctx.apiKey ? { apiKey: ctx.apiKey } : {}),
        headers: ctx.headers,
        fetch: withExtraBody(p.extra_body, sseTolerant(httpFetch(ctx.maxReplyBytes))),
        includeUsage: true,
        supportsStructuredOutputs: p.structured_outputs ?? true,
      }).chatModel(ctx.model);
    },
  },
  openai: {
    keyEnv: "OPENAI_API_KEY",
    keyRequired: true,
    defaultUrl: "https://api.openai.com/v1",
    structured: (p) => (p.structured_outputs === false ? "json_object" : "json_schema"),
    cacheIdentity: (p) => `openai ${urlOf(p, "https://api.openai.com/v1")}`,
    async create(p, ctx) {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return createOpenAI({
        apiKey: ctx.apiKey,
        headers: ctx.headers,
        ...("base_url" in p && p.base_url ? { baseURL: p.base_url } : {}),
        fetch: withExtraBody(p.extra_body, sseTolerant(httpFetch(ctx.maxReplyBytes))),
      }).chat(ctx.model);
    },
  },
  anthropic: {
    keyEnv: "ANTHROPIC_API_KEY",
    keyRequired: true,
    defaultUrl: "https://api.anthropic.com/v1",
    // Anthropic's SDK turns a JSON response format into a forced tool: ask by prompt instead (no tools, ever).
    structured: () => "prompt",
    cacheIdentity: (p) => `anthropic ${urlOf(p, "https://api.anthropic.com/v1")}`,
    async create(p, ctx) {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic({
        apiKey: ctx.apiKey,
        headers: ctx.headers,
        ...("base_url" in p && p.base_url ? { baseURL: p.base_url } : {}),
        fetch: withExtraBody(p.extra_body, httpFetch(ctx.maxReplyBytes)),
      })(ctx.model);
    },
  },
  "llama-cpp": {
    keyRequired: false,
    defaultUrl: "in-process",
    // The JSON Schema becomes the engine's grammar: a structured reply always parses (docs/local-engine.md).
    structured: () => "grammar",
    // createDissent passes the engines, whose identity is the model file's sha256; this is the fallback.
    cacheIdentity: (p, model) => `llama-cpp ${p.type === "llama-cpp" && p.model ? p.model : model}`,
    async create(p, ctx) {
      const { fallbackEngines } = await import("../engines/llama-cpp/fallback.js");
      return fallbackEngines(ctx.baseDir, ctx.env).create(ctx.name, p, ctx.model);
    },
  },
};

/** The env variable holding a provider's key (its `api_key_env`, else its type's default), if any. */
export function keyEnvOf(p: ProviderConfig): string | undefined {
  return p.api_key_env ?? PROVIDERS[p.type].keyEnv;
}

/** Does a provider need a key: its type requires one, or the config names the variable explicitly? */
export function needsKey(p: ProviderConfig): boolean {
  return PROVIDERS[p.type].keyRequired || p.api_key_env !== undefined;
}

/** `${VAR}` in a header value, read from the environment. */
const HEADER_VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A provider's headers with `${VAR}` resolved; the resolved values that came from variables are secrets. */
/**
 * What a provider's config adds to every request it sends (ModelTarget.requestExtras), or undefined
 * when nothing: `extra_body` as configured, and `headers` with lower-cased names and the values as
 * written — a `${VAR}` stays a name, so no credential reaches the cache key.
 */
export function requestExtras(p: ProviderConfig): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  if (p.extra_body && Object.keys(p.extra_body).length > 0) out.extra_body = p.extra_body;
  const headers = Object.entries(p.headers ?? {});
  if (headers.length > 0) out.headers = Object.fromEntries(headers.map(([k, v]) => [k.toLowerCase(), v]));
  return Object.keys(out).length > 0 ? out : undefined;
}

export function resolveHeaders(
  name: string,
  p: ProviderConfig,
  env: Record<string, string | undefined>,
  source: string,
): { headers: Record<string, string>; secrets: string[] } {
  const headers: Record<string, string> = {};
  const secrets: string[] = [];
  for (const [key, raw] of Object.entries(p.headers ?? {})) {
    let secret = false;
    const value = raw.replace(HEADER_VAR, (_m, v: string) => {
      const found = env[v];
      if (found === undefined) throw new ConfigError(`${source}: providers.${name}.headers.${key} names \${${v}}, which is not set`);
      secret = true;
      return found;
    });
    headers[key] = value;
    if (secret) secrets.push(value);
  }
  return { headers, secrets };
}
