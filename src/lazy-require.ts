import { createRequire } from "node:module";

/**
 * A package's CommonJS build, required on the first call and kept: for packages only a rare path
 * needs (jsonrepair for a broken reply, yaml for a config file, an edit distance for a misspelt
 * route), so importing "dissent" does not load them (docs/library.md "What it costs"). Synchronous,
 * as the callers are. Only packages that ship a CommonJS build, and the CLI bundle keeps them
 * external (scripts/postbuild.mjs), so the bundle finds them in node_modules.
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= createRequire(import.meta.url)(name) as T;
    return loaded;
  };
}
