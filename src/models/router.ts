import type { LanguageModel } from "ai";
import type { Config, ProviderConfig } from "../contracts/config.js";
import { ConfigError } from "../errors.js";
import { sseTolerantFetch } from "./sse-fetch.js";
import type { ModelTarget, RoleRoute, Router } from "./types.js";

const DEFAULT_KEY_ENV: Record<ProviderConfig["type"], string | undefined> = {
  "openai-compatible": undefined,
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
};

/** `plan.builder` → [`plan.builder`, `plan`, `default`]: most specific first (CONTRACT §2). */
export function roleChain(role: string): string[] {
  const parts = role.split(".");
  const chain: string[] = [];
  for (let n = parts.length; n > 0; n--) chain.push(parts.slice(0, n).join("."));
  if (role !== "default") chain.push("default");
  return chain;
}

/** Splits "provider:model" at the first colon: the model may itself contain ':' (qwen3:8b). */
export function parseTarget(spec: string): { provider: string; model: string } {
  const i = spec.indexOf(":");
  return { provider: spec.slice(0, i), model: spec.slice(i + 1) };
}

/** The API key a provider needs, read from the environment it names (never from the config file). */
function apiKey(name: string, p: ProviderConfig, env: Record<string, string | undefined>, where: string): string | undefined {
  const keyEnv = p.api_key_env ?? DEFAULT_KEY_ENV[p.type];
  if (!keyEnv) return undefined;
  const key = env[keyEnv];
  if (!key && (p.type !== "openai-compatible")) {
    throw new ConfigError(`${where}: provider '${name}' needs an API key: set ${keyEnv}`);
  }
  return key || undefined;
}

function loader(name: string, p: ProviderConfig, model: string, getKey: () => string | undefined): () => Promise<LanguageModel> {
  let made: LanguageModel | undefined;
  return async () => {
    if (made) return made;
    // The key is needed only to reach the provider: a replay, or a secondary never tried, asks for none.
    const key = getKey();
    switch (p.type) {
      case "openai-compatible": {
        const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
        made = createOpenAICompatible({
          name,
          baseURL: p.base_url as string,
          ...(key ? { apiKey: key } : {}),
          fetch: sseTolerantFetch,
          includeUsage: true,
          supportsStructuredOutputs: p.structured_outputs ?? true,
        }).chatModel(model);
        break;
      }
      case "openai": {
        const { createOpenAI } = await import("@ai-sdk/openai");
        made = createOpenAI({ apiKey: key, ...(p.base_url ? { baseURL: p.base_url } : {}), fetch: sseTolerantFetch }).chat(model);
        break;
      }
      case "anthropic": {
        const { createAnthropic } = await import("@ai-sdk/anthropic");
        made = createAnthropic({ apiKey: key, ...(p.base_url ? { baseURL: p.base_url } : {}) })(model);
        break;
      }
    }
    return made;
  };
}

const DEFAULT_URL: Record<ProviderConfig["type"], string> = {
  "openai-compatible": "",
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
};

/** Builds the config router. Provider keys are read lazily, when a role first needs that provider. */
export function configRouter(config: Config, env: Record<string, string | undefined>, hints: { unreachable?: string } = {}): Router & { secrets(): string[] } {
  const secrets = new Set<string>();
  const targets = new Map<string, ModelTarget>();
  const target = (spec: string, route: "primary" | "secondary", where: string): ModelTarget => {
    const memo = `${route} ${spec}`;
    const known = targets.get(memo);
    if (known) return known;
    const { provider, model } = parseTarget(spec);
    const p = config.providers[provider];
    if (!p) {
      const names = Object.keys(config.providers);
      throw new ConfigError(`${where} names unknown provider '${provider}' (configured: ${names.length ? names.join(", ") : "none"})`);
    }
    // Known keys are redacted from every message, whether or not this target is ever loaded.
    const keyEnv = p.api_key_env ?? DEFAULT_KEY_ENV[p.type];
    const present = keyEnv ? env[keyEnv] : undefined;
    if (present) secrets.add(present);
    const t: ModelTarget = {
      provider,
      model,
      route,
      endpoint: `${p.type} ${p.base_url ?? DEFAULT_URL[p.type]}`,
      structured: p.type === "anthropic" ? "prompt" : p.structured_outputs === false ? "json_object" : "json_schema",
      ...(p.api_key_env ?? DEFAULT_KEY_ENV[p.type] ? { keyHint: p.api_key_env ?? DEFAULT_KEY_ENV[p.type] } : {}),
      ...(hints.unreachable ? { unreachableHint: hints.unreachable } : {}),
      load: loader(provider, p, model, () => apiKey(provider, p, env, config.source)),
    };
    targets.set(memo, t);
    return t;
  };
  const router = ((role: string): RoleRoute => {
    for (const r of roleChain(role)) {
      const route = config.routes[r];
      if (!route) continue;
      const where = `${config.source}: routes.${r}`;
      return {
        primary: target(route.primary, "primary", `${where}.primary`),
        ...(route.secondary ? { secondary: target(route.secondary, "secondary", `${where}.secondary`) } : {}),
      };
    }
    throw new ConfigError(`${config.source}: no route for role '${role}' (add routes.default or routes.${role})`);
  }) as Router & { secrets(): string[] };
  router.secrets = () => [...secrets];
  return router;
}

/** Validates every configured route up front, so a typo fails before any call is made. */
export function checkRoutes(config: Config): void {
  for (const [role, route] of Object.entries(config.routes)) {
    for (const [which, spec] of [["primary", route.primary], ["secondary", route.secondary]] as const) {
      if (!spec) continue;
      const { provider } = parseTarget(spec);
      if (!config.providers[provider]) {
        const names = Object.keys(config.providers);
        throw new ConfigError(
          `${config.source}: routes.${role}.${which} names unknown provider '${provider}' (configured: ${names.length ? names.join(", ") : "none"})`,
        );
      }
    }
  }
}

/** A router over fixed AI SDK models, for the library: no config, no fallback. */
export function fixedRouter(models: Record<string, LanguageModel>): Router {
  const targets = new Map<string, ModelTarget>();
  return (role: string) => {
    for (const r of roleChain(role)) {
      const m = models[r];
      if (!m) continue;
      let t = targets.get(r);
      if (!t) {
        const provider = typeof m === "string" ? "gateway" : m.provider;
        const modelId = typeof m === "string" ? m : m.modelId;
        // Anthropic's SDK turns a JSON response format into a forced tool: ask by prompt instead (no tools, ever).
        const structured = provider.startsWith("anthropic") ? "prompt" : "json_schema";
        t = { provider, model: modelId, route: "primary", endpoint: `sdk ${provider}`, structured, load: async () => m };
        targets.set(r, t);
      }
      return { primary: t };
    }
    throw new ConfigError(`no model given for role '${role}'`);
  };
}
