/**
 * dissent as a user installs it, offline: `npm pack`, then `npm ci --offline` of the tarball into an
 * empty folder from the npm cache the repo's own `npm ci` filled. npm cannot resolve version ranges
 * offline (the cache holds tarballs, not the registry's package lists), so the app gets a lockfile
 * built from the repo's: the same versions the repo is tested with, each found in the cache by its
 * integrity. Install scripts are off — a test must neither compile SQLite for minutes nor reach the
 * network for prebuilt binaries — so `withSqliteBinary` puts in the one file better-sqlite3's
 * install would have produced, copied from the repo's own build.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** One package of a lockfile (`packages["node_modules/…"]`). */
interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  [key: string]: unknown;
}
type Lock = Record<string, LockEntry>;

/** The repo's package.json. */
export interface Manifest {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  bin: Record<string, string>;
}

/** The repo's package.json, read now. */
export const manifest = (): Manifest => JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Manifest;
const repoLock = (): Lock => (JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Lock }).packages;

/** Where Node would find `name` from the package at lock path `from` (its own node_modules, then up). */
function resolveIn(lock: Lock, from: string, name: string): string | undefined {
  for (let dir = from; ; ) {
    const candidate = `${dir ? `${dir}/` : ""}node_modules/${name}`;
    if (lock[candidate]) return candidate;
    if (!dir) return undefined;
    const cut = dir.lastIndexOf("/node_modules/");
    dir = cut === -1 ? "" : dir.slice(0, cut);
  }
}

/** Every lock path `roots` need, with their dependencies (optional ones too unless `requiredOnly`) as Node resolves them. */
function closure(lock: Lock, roots: readonly string[], requiredOnly = false): Set<string> {
  const seen = new Set<string>();
  const todo = roots.map((r) => resolveIn(lock, "", r) ?? `missing:${r}`);
  for (let path = todo.pop(); path !== undefined; path = todo.pop()) {
    if (seen.has(path)) continue;
    const entry = lock[path];
    if (!entry) throw new Error(`${path.replace("missing:", "")} is not in the repo's package-lock.json`);
    seen.add(path);
    for (const dep of Object.keys({ ...entry.dependencies, ...(requiredOnly ? {} : entry.optionalDependencies) })) {
      const found = resolveIn(lock, path, dep);
      if (found) todo.push(found); // an optional dependency for another platform is not in the lock
    }
  }
  return seen;
}

/** The first node_modules folder in `dir`'s ancestors, where Node would look after the app's own. */
function nodeModulesAbove(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, "node_modules"))) return join(d, "node_modules");
    if (dirname(d) === d) return undefined;
  }
}

/**
 * A scratch folder for user apps with no node_modules above it: Node resolves a package the app
 * lacks from any node_modules among its folder's ancestors (a `/tmp/node_modules` would make a
 * missing engine look installed). The system's temporary folder, else /var/tmp.
 */
export function appScratch(prefix: string): string {
  for (const base of [tmpdir(), "/var/tmp"]) if (existsSync(base) && !nodeModulesAbove(base)) return mkdtempSync(join(base, prefix));
  throw new Error(
    `every temporary folder has a node_modules above it (${nodeModulesAbove(tmpdir())}): an installed app there would find packages it does not have`,
  );
}

/** The packed tarball: its file name in `work`, and what it holds. */
export interface Packed {
  filename: string;
  files: { path: string }[];
}

/** The release tarball (`npm run release`: scripts/release.mjs) of the built repo, into `work` (no second build: dist is built already). */
export function pack(work: string): Packed {
  const out = execFileSync(process.execPath, [join(ROOT, "scripts/release.mjs"), "--no-build", "--json", "--out", work], {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return JSON.parse(out) as Packed;
}

/** What goes into a user's app: the tarball, and what the user adds beside it. */
export interface AppSpec {
  /** The tarball, as a path relative to the app folder. */
  tarball: string;
  /** The tarball's bytes (their sha512 is its integrity in the lock). */
  tarballBytes: Buffer;
  /** Packages the user adds beside dissent (`npm install node-llama-cpp@…`), at the repo's versions. */
  add?: string[];
}

/**
 * Writes package.json and package-lock.json of an app that depends on the tarball (and `add`), then
 * `npm ci --offline`: what `npm install dissent` gives, at the repo's locked versions. With
 * `omitOptional`, optional dependencies are left out — except `add`, which the app names itself.
 */
export function installApp(app: string, spec: AppSpec, omitOptional = false): void {
  mkdirSync(app, { recursive: true });
  const m = manifest();
  const lock = repoLock();
  const at = (name: string) => {
    const v = lock[`node_modules/${name}`]?.version;
    if (!v) throw new Error(`${name} is not in the repo's package-lock.json`);
    return v;
  };
  const add = spec.add ?? [];
  const dependencies = { dissent: `file:${spec.tarball}`, ...Object.fromEntries(add.map((n) => [n, at(n)])) };
  const packages: Lock = {
    "": { name: "user-app", dependencies },
    "node_modules/dissent": {
      version: m.version,
      resolved: `file:${spec.tarball}`,
      integrity: `sha512-${createHash("sha512").update(spec.tarballBytes).digest("base64")}`,
      license: "MIT",
      dependencies: m.dependencies,
      optionalDependencies: m.optionalDependencies,
      peerDependencies: m.peerDependencies,
      peerDependenciesMeta: m.peerDependenciesMeta,
      bin: m.bin,
      engines: { node: ">=20" },
    },
  };
  // npm's flags, computed for this app: optional = reachable only through an optional dependency.
  const needed = closure(lock, [...Object.keys(m.dependencies), ...Object.keys(m.optionalDependencies), ...add]);
  const required = closure(lock, [...Object.keys(m.dependencies), ...add], true);
  for (const path of [...needed].sort()) {
    const { dev: _d, devOptional: _o, optional: _p, ...entry } = lock[path] as LockEntry;
    packages[path] = { ...entry, ...(required.has(path) ? {} : { optional: true }) };
  }
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "user-app", private: true, type: "module", dependencies }, null, 2));
  writeFileSync(join(app, "package-lock.json"), JSON.stringify({ name: "user-app", lockfileVersion: 3, requires: true, packages }, null, 2));
  execFileSync("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", ...(omitOptional ? ["--omit=optional"] : [])], {
    cwd: app,
    stdio: ["ignore", "ignore", "pipe"],
    // A clean environment (no npm_config_* of the npm running the tests), but the same cache.
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...(process.env.npm_config_cache ? { npm_config_cache: process.env.npm_config_cache } : {}),
    },
    timeout: 240_000,
  });
}

/** The file better-sqlite3's install script builds (or downloads prebuilt): the repo's own build of the same version. */
export const SQLITE_BINARY = join("better-sqlite3", "build", "Release", "better_sqlite3.node");

/** Puts better-sqlite3's native binary into an app, as its install script would have. */
export function withSqliteBinary(app: string): void {
  const to = join(app, "node_modules", SQLITE_BINARY);
  mkdirSync(join(to, ".."), { recursive: true });
  copyFileSync(join(ROOT, "node_modules", SQLITE_BINARY), to);
}

/** The packages under a node_modules folder, nested ones included: every `name` and `@scope/name` folder (what npm counts as added). */
export function packagesIn(nodeModules: string): string[] {
  const out: string[] = [];
  const visit = (dir: string, prefix: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name.startsWith(".")) continue;
      if (e.name.startsWith("@") && !prefix.includes("@")) {
        visit(join(dir, e.name), `${e.name}/`);
        continue;
      }
      const pkg = join(dir, e.name);
      out.push(`${prefix}${e.name}`);
      try {
        if (lstatSync(join(pkg, "node_modules")).isDirectory()) visit(join(pkg, "node_modules"), "");
      } catch {
        // no nested node_modules
      }
    }
  };
  visit(nodeModules, "");
  return out;
}

/** Bytes of every file under `dir` (sizes, not disk blocks: the same on every file system), skipping `except` folders. */
export function treeBytes(dir: string, except: readonly string[] = []): number {
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (except.includes(p)) continue;
    if (e.isDirectory()) bytes += treeBytes(p, except);
    else if (e.isFile()) bytes += lstatSync(p).size;
  }
  return bytes;
}

/** node-llama-cpp's CPU build for this machine: the one prebuilt package a CPU run needs. */
export function llamaCpuPackage(): string {
  const os = { linux: "linux", darwin: "mac", win32: "win" }[process.platform as "linux" | "darwin" | "win32"];
  if (!os) throw new Error(`node-llama-cpp has no prebuilt binary for ${process.platform}`);
  const arch = process.platform === "darwin" && process.arch === "arm64" ? "arm64-metal" : process.arch;
  return `@node-llama-cpp/${os}-${arch}`;
}
