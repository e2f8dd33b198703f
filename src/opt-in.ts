import { createRequire } from "node:module";
import { posix, win32 } from "node:path";
import { ConfigError } from "./errors.js";
import { optionalDependencies, packageRoot, peerRange } from "./package-root.js";

/**
 * The parts of dissent a default install leaves out (ADR-024): each is heavy for
 * what most users need, is declared as an optional peer dependency in package.json (with the
 * version dissent is tested with), and is one npm command away. A command that needs one says that
 * command, never an internal error.
 */
export interface OptInPart {
  /** What the part does, as a user would name it. */
  what: string;
  /** The packages to install together, each at the version package.json's peer range starts at. */
  packages: readonly string[];
  /** The reference page (and section) that explains it. */
  doc: string;
}

/** Every opt-in part, by name. */
export const OPT_IN_PARTS = {
  engine: {
    what: "the in-process engine (provider type llama-cpp)",
    packages: ["node-llama-cpp"],
    doc: "docs/local-engine.md#adding-the-engine",
  },
  postgres: {
    what: "the PostgreSQL store and the factory's queue on it",
    packages: ["pg", "pg-boss"],
    doc: "docs/factory.md#many-machines-postgresql",
  },
  telemetry: {
    what: "OpenTelemetry traces",
    packages: ["@opentelemetry/sdk-trace-base", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/resources"],
    doc: "docs/serve.md#traces-opentelemetry",
  },
} as const satisfies Record<string, OptInPart>;

/** Where dissent runs from, as far as installing a package beside it is concerned. */
export interface InstallSite {
  /** dissent's package root. */
  root: string;
  /** The node binary (its folder locates npm's global prefix). */
  execPath: string;
  platform: NodeJS.Platform;
}

const here = (): InstallSite => ({ root: packageRoot(), execPath: process.execPath, platform: process.platform });

/** `^3.21.1` → `3.21.1`: the version dissent declares and is tested with. */
function testedVersion(name: string): string {
  const range = peerRange(name);
  const floor = range ? /^[\^~>=\s]*(\d+\.\d+\.\d+)/.exec(range)?.[1] : undefined;
  if (!floor) throw new Error(`${name} is not an optional peer dependency of dissent (package.json peerDependencies)`);
  return floor;
}

/** True when dissent is installed in npm's default global folder (`npm install -g` of it). */
function isGlobal(site: InstallSite): boolean {
  const { dirname, join } = site.platform === "win32" ? win32 : posix;
  const globalRoot = site.platform === "win32" ? join(dirname(site.execPath), "node_modules") : join(dirname(dirname(site.execPath)), "lib", "node_modules");
  return site.root === join(globalRoot, "dissent");
}

/** A path as one shell word (single-quoted when it holds anything but the safe characters). */
const shellWord = (s: string) => (/^[\w@%+=:,./\\-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * The folder a part is installed into beside this dissent: the project whose node_modules holds it
 * (pnpm's store path included), else dissent's own folder (a checkout or an unpacked tarball).
 */
function projectOf(site: InstallSite): string {
  const { sep } = site.platform === "win32" ? win32 : posix;
  const pnpm = site.root.indexOf(`${sep}node_modules${sep}.pnpm${sep}`);
  if (pnpm > 0) return site.root.slice(0, pnpm);
  const nm = site.root.lastIndexOf(`${sep}node_modules${sep}`);
  return nm > 0 ? site.root.slice(0, nm) : site.root;
}

/**
 * The one command that adds a part where this dissent runs: `npm install -g …` beside a global
 * dissent, `npx -p <this dissent's folder> -p …` for one run through npx (the folder, never the
 * name `dissent`, which would be fetched from the registry), else `npm install --prefix <the
 * project> …` — the folder named, so it works from wherever the user is (issue 32).
 */
export function installCommand(part: OptInPart, site: InstallSite = here()): string {
  const specs = part.packages.map((name) => `${name}@${testedVersion(name)}`);
  if (/[\\/]_npx[\\/]/.test(site.root)) return `npx ${[shellWord(site.root), ...specs].map((s) => `-p ${s}`).join(" ")} dissent …`;
  if (isGlobal(site)) return `npm install -g ${specs.join(" ")}`;
  return `npm install --prefix ${shellWord(projectOf(site))} ${specs.join(" ")}`;
}

/** The sentence a command that needs a missing part ends with: what to run, and where it is explained. */
export function addPart(part: OptInPart, site?: InstallSite): string {
  return `run ${installCommand(part, site)} (${part.doc})`;
}

/**
 * Whether node-llama-cpp can be imported from here, without importing it (a cached run never loads
 * it). Resolution goes through Node's loader, and so through any loader hooks, exactly as the import would.
 */
export function engineInstalled(): boolean {
  try {
    if (typeof import.meta.resolve === "function") import.meta.resolve("node-llama-cpp");
    else createRequire(import.meta.url).resolve("node-llama-cpp");
    return true;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") return false;
    throw e;
  }
}

/** The opt-in part a package belongs to. */
function partOf(name: string): OptInPart | undefined {
  return Object.values(OPT_IN_PARTS).find((p) => (p.packages as readonly string[]).includes(name));
}

/**
 * A command that needs a package the install left out: an opt-in part (never installed by default)
 * or an optional dependency npm skipped. A configuration error naming what to run; undefined for
 * anything else.
 */
export function missingOptional(e: unknown): ConfigError | undefined {
  const code = (e as { code?: unknown } | undefined)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return undefined;
  const name = /Cannot find (?:package|module) '((?:@[^/']+\/)?[^/']+)/.exec(e instanceof Error ? e.message : "")?.[1];
  if (name === undefined) return undefined;
  const part = partOf(name);
  if (part) return new ConfigError(`this needs ${name} (${part.what}), which a default install of dissent leaves out: ${addPart(part)}`, { cause: e });
  if (!optionalDependencies().includes(name)) return undefined;
  return new ConfigError(`this needs ${name}, an optional dependency of dissent that is not installed: run npm install ${name}`, { cause: e });
}
