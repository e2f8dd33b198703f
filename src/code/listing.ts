import { lstatSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import pLimit from "p-limit";
import { ConfigError, GitError, Interrupted } from "../errors.js";
import { readBytesBounded } from "../files/read.js";
import { git } from "../implement/git.js";
import { blobHash } from "./hash.js";
import { binaryByName } from "./languages.js";
import { skipByContent, skipByPath } from "./skip.js";
import type { CodeIndexCache, CodeLimits, GitHubTreeReader, GitTreeEntry, RepoSource, SkippedCounts } from "./types.js";

/** A file the map will hold: its path, git blob hash and text. */
export interface ListedFile {
  path: string;
  hash: string;
  text: string;
}

/** What listing a repository found. */
export interface Listing {
  commit: string | null;
  where: string;
  dirty: boolean;
  files: ListedFile[];
  skipped: SkippedCounts;
}

/** The most git output a listing reads (paths, NUL-separated): past it the rest count as `over_count`. */
const LIST_BYTES = 32 * 1024 * 1024;
/** Folders a listing of a folder that is not a git checkout visits at most. */
const MAX_WALK_DIRS = 20_000;
/** Blobs read from GitHub at once. */
const BLOB_CONCURRENCY = 8;
/** Tree requests a truncated GitHub tree may take to walk one folder at a time. */
const MAX_TREE_REQUESTS = 2000;

export const noSkips = (): SkippedCounts => ({ ignored: 0, binary: 0, vendored: 0, generated: 0, too_large: 0, over_count: 0 });

const stopIfAborted = (signal: AbortSignal | undefined) => {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Interrupted("interrupted");
};

/** NUL-separated git output as entries (a cut last entry dropped). */
function nulList(out: { stdout: string; truncated: boolean }): string[] {
  const parts = out.stdout.split("\0");
  parts.pop(); // after the last NUL: "" or, when cut, a partial entry
  return parts;
}

/**
 * Takes files in path order while the bounds allow: each is sniffed (binary, generated) and hashed.
 * `bytesOf` reads one (undefined: it is gone, or not a regular file).
 */
function admit(
  candidates: readonly { path: string; size: number }[],
  limits: CodeLimits,
  skipped: SkippedCounts,
  bytesOf: (path: string) => Buffer | "too_large" | undefined,
): ListedFile[] {
  const files: ListedFile[] = [];
  let total = 0;
  for (const c of candidates) {
    if (c.size > limits.maxFileBytes) {
      skipped.too_large++;
      continue;
    }
    if (files.length >= limits.maxFiles || total + c.size > limits.maxTotalBytes) {
      skipped.over_count++;
      continue;
    }
    const bytes = bytesOf(c.path);
    if (bytes === undefined) continue;
    if (bytes === "too_large") {
      skipped.too_large++;
      continue;
    }
    const why = skipByContent(bytes);
    if (why) {
      skipped[why]++;
      continue;
    }
    total += bytes.length;
    files.push({ path: c.path, hash: blobHash(bytes), text: bytes.toString("utf8").replace(/^\uFEFF/, "") });
  }
  return files;
}

/** Paths skipped by name are counted; the rest are candidates. */
function byName(paths: readonly string[], skipped: SkippedCounts): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const why = skipByPath(p) ?? (binaryByName(p) ? "binary" : undefined);
    if (why) skipped[why]++;
    else out.push(p);
  }
  return out;
}

const sorted = (xs: string[]) => xs.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** A local checkout: `git ls-files` (tracked, and untracked that .gitignore does not exclude); a plain folder is walked. */
export async function listLocal(rootIn: string, limits: CodeLimits, signal?: AbortSignal): Promise<Listing> {
  const root = resolve(rootIn);
  const st = statSync(root, { throwIfNoEntry: false });
  if (!st?.isDirectory()) throw new ConfigError(`the repository ${root} (project.repo) is not a folder`);
  const opts = { allowFail: true, maxBytes: LIST_BYTES, ...(signal ? { signal } : {}) };
  const inside = await git(root, ["rev-parse", "--is-inside-work-tree"], opts).catch((e: unknown) => {
    stopIfAborted(signal);
    throw e;
  });
  stopIfAborted(signal);
  if (inside.code !== 0 || inside.stdout.trim() !== "true") return listFolder(root, limits, signal);
  const run = async (args: string[]) => {
    const out = await git(root, args, opts);
    stopIfAborted(signal);
    if (out.code !== 0) throw new GitError(`git ${args.slice(0, 2).join(" ")} failed in ${root} (exit ${out.code})`, { args });
    return out;
  };
  const head = await git(root, ["rev-parse", "--verify", "--quiet", "HEAD"], opts);
  stopIfAborted(signal);
  const commit = head.code === 0 && /^[0-9a-f]{40,64}$/.test(head.stdout.trim()) ? head.stdout.trim() : null;
  const all = await run(["ls-files", "--cached", "--others", "--exclude-standard", "-z"]);
  const staged = await run(["ls-files", "--stage", "-z"]);
  const ignored = await run(["ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"]);
  const skipped = noSkips();
  skipped.ignored = nulList(ignored).length;
  // Tracked files' modes and blob hashes: symlinks (120000) and submodules (160000) are not files of the map.
  const tracked = new Map<string, { mode: string; hash: string }>();
  for (const line of nulList(staged)) {
    const m = /^(\d{6}) ([0-9a-f]{40,64}) \d\t(.+)$/s.exec(line);
    if (m) tracked.set(m[3] as string, { mode: m[1] as string, hash: m[2] as string });
  }
  const paths = sorted([...new Set(nulList(all))]).filter((p) => {
    const mode = tracked.get(p)?.mode;
    return mode !== "120000" && mode !== "160000";
  });
  let gone = false;
  const candidates: { path: string; size: number }[] = [];
  for (const p of byName(paths, skipped)) {
    const ls = lstatSync(join(root, p), { throwIfNoEntry: false });
    if (!ls?.isFile()) {
      gone ||= ls === undefined; // deleted in the work tree
      continue; // …or a symlink, or a folder: not a file of the map
    }
    candidates.push({ path: p, size: ls.size });
  }
  const files = admit(candidates, limits, skipped, (p) => {
    const got = readBytesBounded(join(root, p), limits.maxFileBytes);
    if (got.ok) return got.bytes;
    return got.refusal === "too_large" ? "too_large" : undefined;
  });
  stopIfAborted(signal);
  // The map is of the work tree: it differs from HEAD when a file was changed, added or deleted.
  const dirty = gone || files.some((f) => tracked.get(f.path)?.hash !== f.hash);
  if (all.truncated) skipped.over_count++;
  return { commit, where: root, dirty, files, skipped };
}

/** A folder that is not a git checkout: walked in path order, hidden and vendored folders left out (no .gitignore without git). */
function listFolder(root: string, limits: CodeLimits, signal?: AbortSignal): Listing {
  const skipped = noSkips();
  const found: { path: string; size: number }[] = [];
  let dirs = 0;
  const walk = (rel: string) => {
    if (++dirs > MAX_WALK_DIRS || found.length > limits.maxFiles * 4) return;
    stopIfAborted(signal);
    let entries: string[];
    try {
      entries = readdirSync(join(root, rel));
    } catch {
      return;
    }
    for (const name of sorted(entries)) {
      const path = rel ? `${rel}/${name}` : name;
      const ls = lstatSync(join(root, path), { throwIfNoEntry: false });
      if (!ls) continue;
      if (ls.isDirectory()) {
        if (name.startsWith(".")) skipped.ignored++;
        else if (skipByPath(`${path}/x`) === "vendored") skipped.vendored++;
        else walk(path);
      } else if (ls.isFile()) {
        const why = skipByPath(path) ?? (binaryByName(path) ? "binary" : undefined);
        if (why) skipped[why]++;
        else found.push({ path, size: ls.size });
      }
    }
  };
  walk("");
  const files = admit(
    found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    limits,
    skipped,
    (p) => {
      const got = readBytesBounded(join(root, p), limits.maxFileBytes);
      if (got.ok) return got.bytes;
      return got.refusal === "too_large" ? "too_large" : undefined;
    },
  );
  return { commit: null, where: root, dirty: false, files, skipped };
}

/** A blob as the code index keeps it: its text, or this mark for one that turned out binary. */
const BINARY_BLOB = "\u0000";
export const blobKey = (sha: string) => `blob:${sha}`;

/**
 * A GitHub repository's branch through the API: its tree (recursive; a truncated one walked a folder at a
 * time), then each file's blob, read from the code index when it holds that sha and fetched otherwise.
 */
export async function listGithub(
  source: Extract<RepoSource, { kind: "github" }>,
  limits: CodeLimits,
  cache: CodeIndexCache | undefined,
  signal?: AbortSignal,
): Promise<Listing> {
  const reader = source.reader;
  const { branch, commit } = await reader.head(source.ref);
  stopIfAborted(signal);
  const entries = await readTree(reader, commit, limits, signal);
  const skipped = noSkips();
  const blobs = new Map<string, GitTreeEntry>();
  for (const e of entries) if (e.type === "blob" && e.mode !== "120000") blobs.set(e.path, e);
  const paths = byName(sorted([...blobs.keys()]), skipped);
  // Bounds by the sizes GitHub states, before anything is fetched.
  const wanted: GitTreeEntry[] = [];
  let total = 0;
  for (const p of paths) {
    const e = blobs.get(p) as GitTreeEntry;
    const size = e.size ?? 0;
    if (size > limits.maxFileBytes) skipped.too_large++;
    else if (wanted.length >= limits.maxFiles || total + size > limits.maxTotalBytes) skipped.over_count++;
    else {
      wanted.push(e);
      total += size;
    }
  }
  const cached = cache ? await cache.getMany([...new Set(wanted.map((e) => blobKey(e.sha)))]) : new Map<string, string>();
  const fetched = new Map<string, string>();
  const limit = pLimit(BLOB_CONCURRENCY);
  await Promise.all(
    [...new Set(wanted.map((e) => e.sha))]
      .filter((sha) => !cached.has(blobKey(sha)))
      .map((sha) =>
        limit(async () => {
          stopIfAborted(signal);
          const bytes = await reader.blob(sha, limits.maxFileBytes);
          const why = skipByContent(bytes);
          fetched.set(
            blobKey(sha),
            why === "binary" ? BINARY_BLOB : why === "generated" ? `${BINARY_BLOB}generated` : bytes.toString("utf8").replace(/^\uFEFF/, ""),
          );
        }),
      ),
  );
  stopIfAborted(signal);
  if (cache && fetched.size) await cache.putMany([...fetched].map(([key, value]) => ({ key, value })));
  const files: ListedFile[] = [];
  for (const e of wanted) {
    const text = cached.get(blobKey(e.sha)) ?? fetched.get(blobKey(e.sha)) ?? "";
    if (text === BINARY_BLOB) skipped.binary++;
    else if (text === `${BINARY_BLOB}generated`) skipped.generated++;
    else files.push({ path: e.path, hash: e.sha, text });
  }
  return { commit, where: `${source.repo}@${branch}`, dirty: false, files, skipped };
}

/** The tree's entries: recursive in one request, or folder by folder when GitHub truncated it (bounded). */
async function readTree(reader: GitHubTreeReader, commit: string, limits: CodeLimits, signal?: AbortSignal): Promise<GitTreeEntry[]> {
  const whole = await reader.tree(commit, true);
  if (!whole.truncated) return whole.entries;
  const out: GitTreeEntry[] = [];
  const queue: { prefix: string; sha: string }[] = [{ prefix: "", sha: commit }];
  let requests = 0;
  while (queue.length && requests < MAX_TREE_REQUESTS && out.length < limits.maxFiles * 4) {
    stopIfAborted(signal);
    const { prefix, sha } = queue.shift() as { prefix: string; sha: string };
    requests++;
    const level = await reader.tree(sha, false);
    for (const e of level.entries) {
      const path = prefix ? `${prefix}/${e.path}` : e.path;
      if (e.type === "tree") {
        if (skipByPath(`${path}/x`) !== "vendored") queue.push({ prefix: path, sha: e.sha });
      } else out.push({ ...e, path });
    }
  }
  return out;
}
