import { realpathSync } from "node:fs";
import type { LanguageModel } from "ai";
import pLimit from "p-limit";
import type { Config, ProviderConfig } from "../contracts/config.js";
import { ConfigError } from "../errors.js";
import { costUsd, type PriceSpec } from "./pricing.js";
import { DEFAULT_MAX_REPLY_BYTES } from "./reply-cap.js";
import { keyEnvOf, needsKey, PROVIDERS, requestExtras, resolveHeaders, type StructuredMode } from "./providers.js";
import { roleChain } from "./role-chain.js";
import { localPathOf, parseModelRef } from "../engines/llama-cpp/model-ref.js";
import type { Limiter, ModelTarget, RoleRoute, Router } from "./types.js";

export { PRODUCER_ROLES, roleChain } from "./role-chain.js";

/** Splits "provider:model" at the first colon: the model may itself contain ':' (qwen3:8b). */
export function parseTarget(spec: string): { provider: string; model: string } {
  const i = spec.indexOf(":");
  return { provider: spec.slice(0, i), model: spec.slice(i + 1) };
}

/** Where a route of a role is configured, for messages: `routes.challenger.primary`. */
export interface RouteSpec {
  role: string;
  via: string;
  which: "primary" | "secondary";
  provider: string;
  model: string;
}

/** The configured route specs a role resolves to (without building targets). */
export function routeSpecs(config: Config, role: string): RouteSpec[] {
  for (const r of roleChain(role)) {
    const route = config.routes[r];
    if (!route) continue;
    const out: RouteSpec[] = [{ role, via: r, which: "primary", ...parseTarget(route.primary) }];
    if (route.secondary) out.push({ role, via: r, which: "secondary", ...parseTarget(route.secondary) });
    return out;
  }
  throw new ConfigError(`${config.source}: no route for role '${role}' (add routes.default or routes.${role})`);
}

function priceSpec(p: ProviderConfig, model: string): PriceSpec {
  if (p.prices) return { override: p.prices, model };
  if (p.type === "openai" || p.type === "anthropic") {
    // The table knows the vendor's own API; a base_url elsewhere (a proxy, a compatible host) is priced by its URL.
    return "base_url" in p && p.base_url ? { apiUrl: p.base_url, model } : { providerId: p.type, model };
  }
  if (p.type === "openai-compatible") return { apiUrl: p.base_url, model };
  return { model }; // an in-process engine: unknown unless `prices:` says (e.g. 0)
}

/** Builds the config router: one target per (route, provider, model), one concurrency limiter per provider. */
export function configRouter(
  config: Config,
  env: Record<string, string | undefined>,
  hints: { unreachable?: string } = {},
  engines: {
    create?: (name: string, p: ProviderConfig, model: string) => Promise<LanguageModel>;
    identity?: (name: string, p: ProviderConfig, model: string) => string;
  } = {},
): Router {
  const targets = new Map<string, ModelTarget>();
  const limiters = new Map<string, Limiter>();
  const limiterOf = (name: string, p: ProviderConfig): Limiter | undefined => {
    if (p.max_concurrency === undefined) return undefined;
    let l = limiters.get(name);
    if (!l) {
      const limit = pLimit(p.max_concurrency);
      l = (fn) => limit(fn);
      limiters.set(name, l);
    }
    return l;
  };
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
    const type = PROVIDERS[p.type];
    const keyEnv = keyEnvOf(p);
    let made: Promise<LanguageModel> | undefined;
    const prices = priceSpec(p, model);
    const structured: StructuredMode = type.structured(p);
    const limiter = limiterOf(provider, p);
    const maxReplyBytes = p.max_reply_bytes ?? config.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    const extras = requestExtras(p);
    const t: ModelTarget = {
      provider,
      model,
      route,
      endpoint: engines.identity && p.type === "llama-cpp" ? engines.identity(provider, p, model) : type.cacheIdentity(p, model),
      ...(p.type === "llama-cpp" ? { local: true } : {}),
      structured,
      ...(extras ? { requestExtras: extras } : {}),
      ...(keyEnv ? { keyHint: keyEnv } : {}),
      ...(hints.unreachable ? { unreachableHint: hints.unreachable } : {}),
      ...(p.max_tokens ? { maxTokens: p.max_tokens } : {}),
      maxReplyBytes,
      maxReplyBytesFrom: p.max_reply_bytes !== undefined ? `providers.${provider}.max_reply_bytes` : "max_reply_bytes",
      ...(limiter ? { limiter } : {}),
      // Anthropic caches a prompt prefix only where a request marks it (docs/serve.md "Cost").
      ...(p.type === "anthropic" ? { cacheBreakpoints: true } : {}),
      cost: (input, output, cache) => costUsd(prices, input, output, cache),
      load: () => {
        made ??= (async () => {
          if (p.type === "llama-cpp" && engines.create) return engines.create(provider, p, model);
          const key = keyEnv ? env[keyEnv] || undefined : undefined;
          if (!key && needsKey(p)) throw new ConfigError(`${config.source}: provider '${provider}' needs an API key: set ${keyEnv}`);
          const { headers } = resolveHeaders(provider, p, env, config.source);
          return type.create(p, { name: provider, model, apiKey: key, headers, baseDir: config.baseDir, env, maxReplyBytes });
        })();
        made.catch(() => (made = undefined)); // a failed load is tried again by the next call
        return made;
      },
    };
    targets.set(memo, t);
    return t;
  };
  return (role: string): RoleRoute => {
    const specs = routeSpecs(config, role);
    const where = (s: RouteSpec) => `${config.source}: routes.${s.via}.${s.which}`;
    const [primary, secondary] = specs;
    if (!primary) throw new ConfigError(`${config.source}: no route for role '${role}'`);
    return {
      primary: target(`${primary.provider}:${primary.model}`, "primary", where(primary)),
      ...(secondary ? { secondary: target(`${secondary.provider}:${secondary.model}`, "secondary", where(secondary)) } : {}),
    };
  };
}

/** Validates every configured route up front, so a typo fails before any call is made. */
export function checkRoutes(config: Config): void {
  for (const [role, route] of Object.entries(config.routes)) {
    for (const [which, spec] of [
      ["primary", route.primary],
      ["secondary", route.secondary],
    ] as const) {
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

/**
 * Every route the given roles may call over the network has its API key (docs/configuration.md): a missing
 * key is a configuration error at the start of the command, never a silently missing critic.
 */
export function requireKeys(config: Config, env: Record<string, string | undefined>, roles: readonly string[]): void {
  for (const role of roles) {
    for (const spec of routeSpecs(config, role)) {
      const p = config.providers[spec.provider];
      if (!p) continue;
      const keyEnv = keyEnvOf(p);
      if (needsKey(p) && keyEnv && !env[keyEnv]) {
        throw new ConfigError(
          `${config.source}: provider '${spec.provider}' (routes.${spec.via}.${spec.which}, used by ${role}) needs an API key: set ${keyEnv}`,
        );
      }
      // A secret header naming an unset variable fails here too, not mid-run.
      resolveHeaders(spec.provider, p, env, config.source);
    }
  }
}

/**
 * The model a role's primary route resolves to: `provider:model` for a provider across the network,
 * the model file (its real path) for the in-process engine — so two aliases of one GGUF, or two
 * llama-cpp providers naming the same file, are the same model (issue 32). `shown` is what a warning says.
 */
export function resolvedModel(
  config: Pick<Config, "routes" | "providers" | "baseDir" | "modelsDir">,
  role: string,
): { key: string; shown: string } | undefined {
  const s = routeSpecs(config as Config, role)[0];
  if (!s) return undefined;
  const named = `${s.provider}:${s.model}`;
  const p = config.providers[s.provider];
  if (p?.type !== "llama-cpp") return { key: named, shown: named };
  const ref = parseModelRef(p.model ?? s.model, config.baseDir);
  if ("error" in ref) return { key: named, shown: named };
  const path = localPathOf(ref, config.modelsDir);
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // not here yet (an hf: model not downloaded): its path is still the file it will be
  }
  return { key: `gguf ${real}`, shown: `the model file ${real}` };
}

/**
 * A one-line warning when a producer and every one of its critics (or the executor and the
 * challenger) resolve to the same model (resolvedModel: the same GGUF under two aliases included):
 * a model reviewing itself is weak dissent.
 */
export function sameModelWarning(config: Config, producer: string, critics: readonly string[], what: string): string | undefined {
  const p = resolvedModel(config, producer);
  if (!p || critics.length === 0 || !critics.every((c) => resolvedModel(config, c)?.key === p.key)) return undefined;
  return `${what}: ${producer} and ${critics.length === 1 ? critics[0] : `all ${critics.length} critics`} use the same model (${p.shown}); a model reviewing itself is weak dissent — route the ${critics.length === 1 ? "reviewer" : "critics"} to another model family`;
}

/**
 * A one-line warning when the verifier (the second opinion on a lone HIGH) resolves to the same
 * provider and model as a critic it checks: a model confirming its own finding is no second opinion.
 */
export function verifierWarning(config: Config, verifier: string, critics: readonly string[]): string | undefined {
  const v = resolvedModel(config, verifier);
  if (!v) return undefined;
  const same = [...new Set(critics)].filter((c) => resolvedModel(config, c)?.key === v.key);
  if (!same.length) return undefined;
  const who = same.length <= 3 ? same.join(", ") : `${same.slice(0, 3).join(", ")} and ${same.length - 3} more`;
  return `the ${verifier} uses the same model as the critic${same.length === 1 ? "" : "s"} it checks (${who}: ${v.shown}); a second opinion from the model that raised the finding is weak — route ${verifier} to another model family`;
}

/** One target per AI SDK model object, across routers: a library caller's second run finds its model already prepared. */
const sdkTargets = new WeakMap<object, ModelTarget>();

/** The target of an AI SDK model given to the library. */
function sdkTarget(m: LanguageModel): ModelTarget {
  const known = typeof m === "object" ? sdkTargets.get(m) : undefined;
  if (known) return known;
  const provider = typeof m === "string" ? "gateway" : m.provider;
  const modelId = typeof m === "string" ? m : m.modelId;
  // Anthropic's SDK turns a JSON response format into a forced tool: ask by prompt instead (no tools, ever).
  const structured: StructuredMode = provider.startsWith("anthropic") ? "prompt" : "json_schema";
  const spec: PriceSpec = provider.startsWith("openai")
    ? { providerId: "openai", model: modelId }
    : provider.startsWith("anthropic")
      ? { providerId: "anthropic", model: modelId }
      : { model: modelId };
  const t: ModelTarget = {
    provider,
    model: modelId,
    route: "primary",
    endpoint: `sdk ${provider}`,
    structured,
    ...(provider.startsWith("anthropic") ? { cacheBreakpoints: true } : {}),
    cost: (i, o, c) => costUsd(spec, i, o, c),
    load: async () => m,
  };
  if (typeof m === "object") sdkTargets.set(m, t);
  return t;
}

/** A router over fixed AI SDK models, for the library: no config, no fallback. */
export function fixedRouter(models: Record<string, LanguageModel>): Router {
  const routes = new Map<string, RoleRoute>(); // a role resolves once: the models are fixed
  return (role: string) => {
    const known = routes.get(role);
    if (known) return known;
    for (const r of roleChain(role)) {
      const m = models[r];
      if (!m) continue;
      const t = sdkTarget(m);
      const route = { primary: t };
      routes.set(role, route);
      return route;
    }
    throw new ConfigError(`no model given for role '${role}'`);
  };
}

/**
 * With `budget.max_usd_per_issue` set, every route the roles may call must have a known price
 * (docs/serve.md): a model of unknown price is a configuration error, never a ceiling that cannot hold.
 */
export async function requirePrices(config: Config, roles: readonly string[]): Promise<void> {
  if (config.budget.maxUsdPerIssue === null) return;
  for (const role of roles) {
    for (const spec of routeSpecs(config, role)) {
      const p = config.providers[spec.provider];
      if (!p) continue;
      if ((await costUsd(priceSpec(p, spec.model), 1_000_000, 0)) === null) {
        throw new ConfigError(
          `${config.source}: budget.max_usd_per_issue is set, but the price of ${spec.provider}:${spec.model} (routes.${spec.via}.${spec.which}) is unknown: set providers.${spec.provider}.prices (input_per_mtok, output_per_mtok; 0 for a local model)`,
        );
      }
    }
  }
}
