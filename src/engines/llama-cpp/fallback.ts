import { homedir } from "node:os";
import { join } from "node:path";
import { createLlamaEngines, type LlamaEngines } from "./engine.js";
import { streamReporter } from "./progress.js";

const engines = new Map<string, LlamaEngines>();

/**
 * Engines for a router built without them (`configRouter(config, env)` with no `engines`): the
 * default `models_dir`, DISSENT_OFFLINE, progress on stderr. `createDissent` always passes its own,
 * which know the config's `models_dir` and `offline` and key the cache by the file's hash.
 */
export function fallbackEngines(baseDir: string, env: Record<string, string | undefined>): LlamaEngines {
  let e = engines.get(baseDir);
  if (!e) {
    e = createLlamaEngines({
      config: {
        source: "config",
        baseDir,
        modelsDir: join(homedir(), ".cache", "dissent", "models"),
        offline: ["1", "true", "yes"].includes((env.DISSENT_OFFLINE ?? "").toLowerCase()),
        providers: {},
      },
      env,
      reporter: streamReporter(process.stderr),
    });
    engines.set(baseDir, e);
  }
  return e;
}
