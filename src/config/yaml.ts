import { createRequire } from "node:module";
import type * as Yaml from "yaml";

let loaded: typeof Yaml | undefined;

/**
 * The `yaml` package, loaded on the first config file read: a library user who passes the config as
 * an object never parses YAML, and `yaml` is ~0.7 MB of heap once loaded (docs/library.md "What it
 * costs"). `createDissent` is synchronous, so this is a synchronous `require` of yaml's CommonJS
 * build. The CLI bundle swaps this module for yaml-inline.ts (scripts/postbuild.mjs): the CLI
 * inlines yaml (ADR-018) rather than opening its files one by one from node_modules.
 */
export function yaml(): typeof Yaml {
  loaded ??= createRequire(import.meta.url)("yaml") as typeof Yaml;
  return loaded;
}
