import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Files the package ships beside its code (prompts/, personas/, evals/, dist/web, package.json) are
 * found from the package's root: the nearest folder above this module whose package.json is
 * dissent's. That holds whether the code runs from src/ (tests), from dist/ (the library) or from
 * the bundled CLI (dist/cli/chunks/…), where paths relative to a module would differ.
 */
let root: string | undefined;
type Manifest = {
  name?: string;
  version?: string;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};
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

/** The packages a default install brings but dissent can run without (SQLite, serve): npm skips them where they cannot build. */
export function optionalDependencies(): string[] {
  packageRoot();
  return Object.keys(manifest?.optionalDependencies ?? {});
}

/** The version range dissent declares for a package it can use but does not install (its optional peers, ADR-024). */
export function peerRange(name: string): string | undefined {
  packageRoot();
  return manifest?.peerDependencies?.[name];
}
