/**
 * What the map leaves out (docs/issue.md "The code the councils read", docs/limits.md): vendored
 * folders and bundles, generated files (lockfiles, protobuf output, files that say so), binaries.
 */

/** Path segments of vendored or built code: a file under one is skipped. */
const VENDORED_DIRS = new Set([
  "node_modules",
  "vendor",
  "vendors",
  "third_party",
  "third-party",
  "thirdparty",
  "bower_components",
  "jspm_packages",
  "dist",
  "build",
  "target",
  "coverage",
  "__pycache__",
  "site-packages",
  ".venv",
  "venv",
  ".tox",
  ".git",
  ".yarn",
  ".pnpm-store",
  ".next",
  ".nuxt",
  "Pods",
  "Carthage",
]);

/** dissent's own home, when it is the default ./.dissent of a checkout: never part of the map (counted as ignored). */
const OWN_HOME = ".dissent";

/** File names of bundles and source maps. */
const VENDORED_FILE = /\.(?:min|bundle|umd)\.(?:js|mjs|cjs|css)$|\.(?:js|css)\.map$|-min\.js$/i;

/** Lockfiles and other files written by tools, by name. */
const GENERATED_NAMES = new Set([
  "package-lock.json",
  "npm-shrinkwrap.json",
  "yarn.lock",
  "pnpm-lock.yaml",
  "bun.lock",
  "cargo.lock",
  "poetry.lock",
  "pipfile.lock",
  "uv.lock",
  "pdm.lock",
  "go.sum",
  "composer.lock",
  "gemfile.lock",
  "flake.lock",
  "packages.lock.json",
]);

/** Generated sources, by name (protobuf, gRPC, code generators' conventions). */
const GENERATED_FILE =
  /(?:\.pb\.go|\.pb\.gw\.go|_pb2(?:_grpc)?\.pyi?|\.pb\.(?:h|cc|ts|js)|_grpc_pb\.(?:js|ts)|\.generated\.\w+|\.gen\.go|_generated\.\w+|\.g\.dart|\.designer\.cs)$/i;

/** A file that says it was generated, in its first lines (Go's `// Code generated … DO NOT EDIT.`, `@generated`). */
const GENERATED_MARK =
  /code generated\b[^\n]*\bdo not edit|@generated\b|auto-?generated\b[^\n]*\bdo not (?:edit|modify)|this file (?:is|was) (?:automatically )?generated/i;

/** Why a path is skipped by its name, or undefined. */
export function skipByPath(path: string): "vendored" | "generated" | "ignored" | undefined {
  const parts = path.split("/");
  if (parts.length > 1 && parts.slice(0, -1).includes(OWN_HOME)) return "ignored";
  for (let i = 0; i < parts.length - 1; i++) if (VENDORED_DIRS.has(parts[i] as string)) return "vendored";
  const base = (parts[parts.length - 1] ?? "").toLowerCase();
  if (VENDORED_FILE.test(base)) return "vendored";
  if (GENERATED_NAMES.has(base) || GENERATED_FILE.test(base)) return "generated";
  return undefined;
}

/** How much of a file's start is sniffed for a NUL byte (as git does) and for a generated-file mark. */
const SNIFF_BYTES = 8000;

/** Why a file is skipped by its bytes (a NUL in its first 8,000 bytes, or a generated-file mark near the top), or undefined. */
export function skipByContent(bytes: Uint8Array): "binary" | "generated" | undefined {
  const head = bytes.subarray(0, SNIFF_BYTES);
  if (head.includes(0)) return "binary";
  const top = Buffer.from(bytes.subarray(0, 1024)).toString("utf8");
  if (GENERATED_MARK.test(top)) return "generated";
  return undefined;
}
