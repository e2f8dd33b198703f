import { sha256 } from "../hash.js";
import { isFatal } from "../errors.js";
import { languageOf } from "./languages.js";
import { DEFAULT_CODE_LIMITS } from "./limits.js";
import { type ListedFile, listGithub, listLocal, type Listing } from "./listing.js";
import { extract } from "./parse.js";
import { QUERY_VERSION } from "./queries.js";
import { pathIndex, resolveImport } from "./resolve.js";
import type { CodeIndexCache, CodeLimits, Extraction, RepoFile, RepoMap, RepoSource } from "./types.js";

/** The cache key of one file's extraction: its content, its language and the extractor's version. */
export const extractionKey = (parsed: string, hash: string) => `x${QUERY_VERSION}:${parsed}:${hash}`;
/** The key of a map's manifest (when it was first built), by source and contents. */
const manifestKey = (digest: string) => `map${QUERY_VERSION}:${digest}`;

/** Extractions written to the code index at a time. */
const PUT_BATCH = 200;

const EMPTY: Extraction = { defs: [], refs: [], imports: [] };

/** A cached extraction read back (a damaged entry is parsed again). */
function readExtraction(text: string | undefined): Extraction | undefined {
  if (text === undefined) return undefined;
  try {
    const x = JSON.parse(text) as Extraction;
    return Array.isArray(x.defs) && Array.isArray(x.refs) && Array.isArray(x.imports) ? x : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Opens the map of a repository (docs/issue.md "The code the councils read"): lists its files within
 * the bounds, and extracts each parsed file's definitions, references and imports — from the code
 * index when it holds that content (same blob hash, same extractor version), parsing otherwise and
 * keeping the result there. A second issue on the same commit parses nothing; a new commit parses
 * only the files it changed.
 */
export async function openRepoMap(
  source: RepoSource,
  opts: { cache?: CodeIndexCache; limits?: Partial<CodeLimits>; signal?: AbortSignal; clock?: () => Date } = {},
): Promise<RepoMap> {
  const limits: CodeLimits = { ...DEFAULT_CODE_LIMITS, ...opts.limits };
  const cache = opts.cache;
  const listing: Listing = source.kind === "local" ? await listLocal(source.root, limits, opts.signal) : await listGithub(source, limits, cache, opts.signal);
  const kinds = listing.files.map((f) => ({ file: f, ...languageOf(f.path) }));
  const keys = kinds.flatMap((k) => (k.parsed ? [extractionKey(k.parsed, k.file.hash)] : []));
  const digest = sha256(`${QUERY_VERSION}\n${listing.files.map((f) => `${f.path}\t${f.hash}`).join("\n")}`);
  const got = cache ? await safeGet(cache, [...new Set(keys)].concat(manifestKey(digest))) : new Map<string, string>();
  const extractions = new Map<ListedFile, Extraction>();
  const fresh: { key: string; value: string }[] = [];
  let parsed = 0;
  let reused = 0;
  for (const k of kinds) {
    if (!k.parsed) continue;
    const key = extractionKey(k.parsed, k.file.hash);
    const known = readExtraction(got.get(key));
    if (known) {
      reused++;
      extractions.set(k.file, known);
      continue;
    }
    if (opts.signal?.aborted) throw opts.signal.reason;
    const x = await extract(k.parsed, k.file.text, limits.parseMs);
    parsed++;
    extractions.set(k.file, x);
    const value = JSON.stringify(x);
    got.set(key, value); // a second file with the same content reuses it
    fresh.push({ key, value });
    if (cache && fresh.length >= PUT_BATCH) await safePut(cache, fresh.splice(0));
  }
  // The manifest: when these contents were first mapped, and their imports resolved (they depend on every path).
  const manifest = readManifest(got.get(manifestKey(digest)));
  const builtAt = manifest?.builtAt ?? (opts.clock ?? (() => new Date()))().toISOString();
  let resolved = manifest?.imports;
  if (!resolved) {
    const idx = pathIndex(listing.files.map((f) => f.path));
    resolved = {};
    for (const k of kinds) {
      const imports = new Set<string>();
      for (const spec of (extractions.get(k.file) ?? EMPTY).imports)
        for (const p of resolveImport(k.language, k.file.path, spec, idx)) if (p !== k.file.path) imports.add(p);
      if (imports.size) resolved[k.file.path] = [...imports].sort();
    }
    fresh.push({ key: manifestKey(digest), value: JSON.stringify({ builtAt, imports: resolved }) });
  }
  if (cache && fresh.length) await safePut(cache, fresh);

  const languages: Record<string, number> = {};
  const imports = resolved;
  const files: RepoFile[] = kinds.map((k) => {
    languages[k.language] = (languages[k.language] ?? 0) + 1;
    const x = extractions.get(k.file) ?? EMPTY;
    return mappedFile(k.file, k.language, x, imports[k.file.path] ?? []);
  });
  return {
    commit: listing.commit,
    where: listing.where,
    files: files.length,
    languages: Object.fromEntries(Object.entries(languages).sort(([a], [b]) => (a < b ? -1 : 1))),
    skipped: listing.skipped,
    builtAt,
    fromCache: parsed === 0,
    parsed,
    reused,
    dirty: listing.dirty,
    index: { files, byPath: new Map(files.map((f) => [f.path, f])) },
  };
}

/** A manifest read back (a damaged or older one is built again). */
function readManifest(text: string | undefined): { builtAt: string; imports: Record<string, string[]> } | undefined {
  if (text === undefined) return undefined;
  try {
    const m = JSON.parse(text) as { builtAt?: unknown; imports?: unknown };
    if (typeof m.builtAt !== "string" || typeof m.imports !== "object" || m.imports === null) return undefined;
    return { builtAt: m.builtAt, imports: m.imports as Record<string, string[]> };
  } catch {
    return undefined;
  }
}

/** A mapped file; its lines are split on first use (most files of a map are never excerpted). */
function mappedFile(f: ListedFile, language: string, x: Extraction, imports: readonly string[]): RepoFile {
  let lines: string[] | undefined;
  let refs: Map<string, { count: number; lines: readonly number[] }> | undefined;
  return {
    path: f.path,
    language,
    hash: f.hash,
    text: f.text,
    get lines() {
      lines ??= f.text.split(/\r?\n/);
      return lines;
    },
    defs: x.defs,
    get refs() {
      refs ??= new Map(x.refs.map(([name, count, at]) => [name, { count, lines: at }]));
      return refs;
    },
    imports,
  };
}

/** A code index that fails (a store gone away) costs its speed, never the map: fatal errors still stop the run. */
async function safeGet(cache: CodeIndexCache, keys: string[]): Promise<Map<string, string>> {
  try {
    return await cache.getMany(keys);
  } catch (e) {
    if (isFatal(e)) throw e;
    return new Map();
  }
}

async function safePut(cache: CodeIndexCache, entries: { key: string; value: string }[]): Promise<void> {
  try {
    await cache.putMany(entries);
  } catch (e) {
    if (isFatal(e)) throw e;
  }
}
