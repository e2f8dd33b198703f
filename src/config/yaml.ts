import type * as Yaml from "yaml";
import { lazyRequire } from "../lazy-require.js";

/**
 * The `yaml` package, loaded on the first config file read: a library user who passes the config as
 * an object never parses YAML, and `yaml` is ~0.6 MB of heap once loaded (docs/library.md "What it
 * costs"). The CLI bundle swaps this module for yaml-inline.ts (scripts/postbuild.mjs): the CLI
 * inlines yaml (ADR-018) rather than opening its files one by one from node_modules.
 */
export const yaml: () => typeof Yaml = lazyRequire("yaml");
