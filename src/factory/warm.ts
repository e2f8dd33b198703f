import type { Config } from "../contracts/config.js";
import { prepare } from "../models/attempt.js";
import { configRouter } from "../models/router.js";

/** Provider types whose model is a network client (a llama-cpp model is a file to load: never loaded ahead). */
const NETWORK = new Set(["openai-compatible", "openai", "anthropic"]);

/**
 * Loads what a round needs before the factory takes its first one (docs/factory.md "What it
 * costs"): the pipeline's modules, the AI SDK, each network provider's client and Node's HTTP
 * client. Without it the first `concurrency` rounds all wait on the module loading the first of
 * them starts, and their leases, call timeouts and times carry it. Nothing is called and nothing
 * is written; a failure here is left to the round that needs the part, which reports it in its own words.
 */
export async function warmUp(config: Config, env: Record<string, string | undefined>, roles: readonly string[], implement: boolean): Promise<void> {
  const modules: Promise<unknown>[] = [
    import("../pipeline/plan-issue.js"),
    import("../prompting/project.js"),
    import("../carryover/relevance.js"),
    import("../adversarial/second-opinion.js"),
    ...(implement ? [import("../implement/implement-issue.js")] : []),
  ];
  // The round that needs a part that failed to load says why (a missing package, a bad route), in its own words.
  await Promise.allSettled([...modules, clients(config, env, roles)]);
}

/** Each network target of the roles, loaded once (one per endpoint and model). */
async function clients(config: Config, env: Record<string, string | undefined>, roles: readonly string[]): Promise<void> {
  const router = configRouter(config, env);
  const loads = new Map<string, Promise<unknown>>();
  for (const role of roles) {
    const route = router(role);
    for (const t of [route.primary, route.secondary]) {
      const type = t ? config.providers[t.provider]?.type : undefined;
      if (!t || type === undefined || !NETWORK.has(type) || loads.has(`${t.endpoint} ${t.model}`)) continue;
      loads.set(`${t.endpoint} ${t.model}`, prepare(t));
    }
  }
  await Promise.allSettled(loads.values());
}
