/**
 * The code-aware councils' engine (issue 30, ADR-032): what a repository map is made of and what a
 * selection of it hands out. src/code/index.ts is the public face.
 */

/** The store's code index (a sub-port of the store, src/store/port.ts). */
export type { CodeIndexCache, CodeIndexStats } from "../store/port.js";

/** The repository an issue is about: a local checkout, or a GitHub repository's default branch read through the API. */
export type RepoSource = { kind: "local"; root: string } | { kind: "github"; repo: string; ref?: string; reader: GitHubTreeReader };

/** One entry of a GitHub tree (REST `GET /repos/{owner}/{repo}/git/trees/{sha}`), as the reader needs it. */
export interface GitTreeEntry {
  path: string;
  /** "blob" (a file), "tree" (a folder), "commit" (a submodule). */
  type: string;
  mode: string;
  sha: string;
  /** Bytes of a blob (absent for trees). */
  size?: number;
}

/** A tree as GitHub answers it: its sha, its entries and whether GitHub cut the listing (over 100,000 entries or 7 MB). */
export interface GitTree {
  sha: string;
  entries: GitTreeEntry[];
  truncated: boolean;
}

/**
 * What the map needs of GitHub (src/trackers/github/tree.ts implements it over the tracker's Octokit
 * client): the default branch and its commit, a tree (recursive or one level), and a blob's bytes.
 */
export interface GitHubTreeReader {
  /** The branch `ref` names (or the default branch) and the commit it points at. */
  head(ref?: string): Promise<{ branch: string; commit: string }>;
  /** `GET …/git/trees/{sha}` (`recursive=1` when asked). */
  tree(sha: string, recursive: boolean): Promise<GitTree>;
  /** `GET …/git/blobs/{sha}`, decoded: at most `limit` bytes (a larger blob is refused before it is read). */
  blob(sha: string, limit: number): Promise<Buffer>;
}

/** The map's bounds (docs/limits.md, `context.map.*` in the config). */
export interface CodeLimits {
  /** Files mapped at most (in path order, after the skips); the rest count as `over_count`. */
  maxFiles: number;
  /** A larger file is skipped (`too_large`). */
  maxFileBytes: number;
  /** Bytes of all mapped files together; files past it count as `over_count`. */
  maxTotalBytes: number;
  /** Time one file's parse and queries may take; past it the file is mapped as plain text. */
  parseMs: number;
}

/** Why files were left out of the map, by count. */
export interface SkippedCounts {
  ignored: number;
  binary: number;
  vendored: number;
  generated: number;
  too_large: number;
  over_count: number;
}

/** A definition found in a file (1-based lines; `start`…`end` is the whole function or class, decorators and doc comment-free). */
export interface Definition {
  name: string;
  kind: string;
  start: number;
  end: number;
  /** The line the name is on. */
  line: number;
  /** The signature: the definition's text up to its body, on one line (at most 200 characters). */
  sig: string;
  /** The enclosing class, interface, impl or module, when there is one. */
  parent?: string;
}

/** What the extractor keeps of one file (cached by content hash and extractor version). */
export interface Extraction {
  defs: Definition[];
  /** Identifiers the file uses: [name, how often, the lines of the first 32 uses], sorted by name. */
  refs: [string, number, number[]][];
  /** Module specifiers the file imports, as written (resolved to files when the map is built). */
  imports: string[];
  /** True when the parse ran past `parseMs` (the file is mapped as plain text). */
  timedOut?: boolean;
}

/** One mapped file. */
export interface RepoFile {
  path: string;
  language: string;
  /** The git blob hash of its bytes (sha1 of "blob <n>\0" + bytes): the same for a checkout and for GitHub. */
  hash: string;
  text: string;
  /** Its lines (verbatim, without line ends). */
  lines: readonly string[];
  defs: readonly Definition[];
  /** Identifiers it uses: how often, and the lines of the first uses. */
  refs: ReadonlyMap<string, { count: number; lines: readonly number[] }>;
  /** Files it imports (resolved paths in the map). */
  imports: readonly string[];
}

/** A repository map: what openRepoMap returns and every selection reads. */
export interface RepoMap {
  /** HEAD commit (local) or the branch's commit (GitHub); null for a folder that is not a git checkout. */
  commit: string | null;
  /** Where it was read from, for messages (a folder, or owner/name@branch). */
  where: string;
  files: number;
  languages: Record<string, number>;
  skipped: SkippedCounts;
  /** When this map was first built from these contents (a map read back from the store keeps its first time). */
  builtAt: string;
  /** True when every file's extraction came from the store's code index (nothing was parsed). */
  fromCache: boolean;
  /** Files parsed this time, and extractions reused from the code index. */
  parsed: number;
  reused: number;
  /** Local checkouts: files whose text differs from HEAD (the map is of the working tree). */
  dirty: boolean;
  readonly index: RepoIndex;
}

/** The map's files and what the selection derives from them (built once per map). */
export interface RepoIndex {
  readonly files: readonly RepoFile[];
  readonly byPath: ReadonlyMap<string, RepoFile>;
}

/** What a selection is asked for: the text and artifacts, and `project.context_files` to rank with the code. */
export interface ContextQuery {
  texts: readonly string[];
  extraSources?: readonly { path: string; text: string }[];
}

/** One thing a selection chose, and why. */
export interface ChosenItem {
  path: string;
  kind: "map" | "excerpt" | "file_chunk";
  start_line?: number;
  end_line?: number;
  /** Its place in the selection (1 = first chosen). */
  rank: number;
  /** The seeds (paths, identifiers, terms) it matched. */
  terms: string[];
  tokens: number;
  why: string;
}

/** What the issue names, as the selection reads it: sorted sets, so rewording that names the same things selects the same code. */
export interface Seeds {
  paths: string[];
  identifiers: string[];
  terms: string[];
  /** `path:line` of stack frames and `path:line` mentions. */
  locations: string[];
  /**
   * The module-name terms the title names (the first line of the first text): the subject. When there
   * are some, a term only the body names ("the logs", "a worker pool") counts for less in the ranking
   * and the lexical matches. Absent or empty: every term counts the same.
   */
  subject?: string[];
}

/** A selection: the code text (one `<data kind="code">` block), its token estimate, what was chosen and why, and a digest of the text. */
export interface CodeContext {
  text: string;
  tokens: number;
  chosen: ChosenItem[];
  seeds: Seeds;
  /** sha256 of `text` (empty text: of ""). */
  digest: string;
}
