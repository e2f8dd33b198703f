import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { codeOf, ConfigError } from "./errors.js";

/**
 * Files the package ships beside its code (prompts/, personas/, evals/, dist/web, package.json) are
 * found from the package's root: the nearest folder above this module whose package.json is
 * dissent's. That holds whether the code runs from src/ (tests), from dist/ (the library) or from
 * the bundled CLI (dist/cli/chunks/…), where paths relative to a module would differ.
 */
let root: string | undefined;
type Manifest = { name?: string; version?: string; optionalDependencies?: Record<string, string> };
let manifest: Manifest | undefined;

export function packageRoot(): string {
  if (root !== undefined) return root;
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      try {
        const json = JSON.parse(readFileSync(file, "utf8")) as Manifest;
        if (json.name === "dissent") {
          manifest = json;
          return (root = dir);
        }
      } catch {
        // not ours: keep looking
      }
    }
    if (dirname(dir) === dir) throw new Error(`dissent's package.json was not found above ${start}: the installation is damaged (reinstall dissent)`);
  }
}

/** A path inside the package, from its root. */
export const packagePath = (...parts: string[]): string => join(packageRoot(), ...parts);

/** dissent's own version, from its package.json. */
export function packageVersion(): string {
  packageRoot();
  return manifest?.version ?? "unknown";
}

/** The packages dissent can run without (each needed by one part: SQLite, GitHub, PostgreSQL, serve, telemetry, the local engine). */
export function optionalDependencies(): string[] {
  packageRoot();
  return Object.keys(manifest?.optionalDependencies ?? {});
}

/**
 * A command that needs an optional dependency the install left out (`npm install --omit=optional`):
 * a configuration error naming the package, never an internal error.
 */
export function missingOptional(e: unknown): ConfigError | undefined {
  const code = codeOf(e);
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return undefined;
  const name = /Cannot find (?:package|module) '((?:@[^/']+\/)?[^/']+)/.exec(e instanceof Error ? e.message : "")?.[1];
  if (name === undefined || !optionalDependencies().includes(name)) return undefined;
  return new ConfigError(`this needs ${name}, an optional dependency of dissent that is not installed: run npm install ${name}`, { cause: e });
}
