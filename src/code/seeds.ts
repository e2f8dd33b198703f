import { termOf, words } from "../adversarial/fingerprint.js";
import { pathIndex, type PathIndex } from "./resolve.js";
import type { RepoIndex, Seeds } from "./types.js";

/**
 * What an issue names, read off its texts against the map (docs/issue.md "The code the councils
 * read"): paths and `path:line`s (stack frames, tracebacks, mentions), identifiers (camelCase,
 * snake_case, `backticked`, `calls()`), package names, quoted messages found in the code, and plain
 * words that are the names of its modules (a file's stem, a folder). Only what the map knows counts, and each is
 * a sorted set: a rewording that names the same things gives the same seeds, and so the same code.
 */

/** A word counts as a term only when the name it matches is in at most this share of the files (or 3). */
const COMMON_SHARE = 0.02;
const MAX_MATCHES = 3;
const MAX_MESSAGES = 12;
const MAX_TEXT = 200_000;

/** What seeds are read against, built once per map. */
export interface Vocabulary {
  paths: ReadonlySet<string>;
  idx: PathIndex;
  dirs: ReadonlySet<string>;
  /** Names defined, with the files defining them. */
  defined: ReadonlyMap<string, readonly string[]>;
  /** Names referenced somewhere. */
  used: ReadonlySet<string>;
  /** A word's stem → the lower-case file stems and folder names it matches. */
  stems: ReadonlyMap<string, ReadonlySet<string>>;
  /** A lower-case file stem or folder name → the files named after it (or under it). */
  named: ReadonlyMap<string, readonly string[]>;
  /** Package names (package.json, go.mod, pyproject.toml, Cargo.toml) → their folder. */
  packages: ReadonlyMap<string, string>;
}

const vocabularies = new WeakMap<RepoIndex, Vocabulary>();
const lowered = new WeakMap<RepoIndex, string[]>();

/** Each file's text in lower case (memoised per map: messages and terms are looked up in it). */
export function lowerTexts(index: RepoIndex): readonly string[] {
  let got = lowered.get(index);
  if (!got) lowered.set(index, (got = index.files.map((f) => f.text.toLowerCase())));
  return got;
}

const push = <K, V>(m: Map<K, V[]>, k: K, v: V) => {
  const list = m.get(k);
  if (list) {
    if (list[list.length - 1] !== v) list.push(v);
  } else m.set(k, [v]);
};

const stemOf = (name: string) => termOf(name.toLowerCase()) ?? name.toLowerCase();

/** The vocabulary of a map (memoised per map). */
export function vocabulary(index: RepoIndex): Vocabulary {
  const known = vocabularies.get(index);
  if (known) return known;
  const defined = new Map<string, string[]>();
  const used = new Set<string>();
  const named = new Map<string, string[]>();
  const dirs = new Set<string>();
  const packages = new Map<string, string>();
  for (const f of index.files) {
    for (const d of f.defs) push(defined, d.name, f.path);
    for (const name of f.refs.keys()) used.add(name);
    const segs = f.path.split("/");
    for (let i = 1; i < segs.length; i++) dirs.add(segs.slice(0, i).join("/"));
    const base = (segs[segs.length - 1] ?? "").replace(/\.[^.]*$/, "").toLowerCase();
    if (base.length >= 3 && base !== "index" && base !== "__init__" && base !== "mod") push(named, base, f.path);
    const pkg = packageName(f.path, f.text);
    if (pkg) packages.set(pkg, segs.slice(0, -1).join("/"));
  }
  for (const d of dirs) {
    const last = d.slice(d.lastIndexOf("/") + 1).toLowerCase();
    if (last.length >= 3) for (const f of index.files) if (f.path.startsWith(`${d}/`)) push(named, last, f.path);
  }
  const stems = new Map<string, Set<string>>();
  for (const name of named.keys()) {
    if (!/^[a-z][a-z0-9]*$/.test(name)) continue; // one word: what a plain word of prose can be
    const s = stemOf(name);
    const set = stems.get(s) ?? new Set<string>();
    set.add(name);
    stems.set(s, set);
  }
  const v: Vocabulary = {
    paths: new Set(index.files.map((f) => f.path)),
    idx: pathIndex(index.files.map((f) => f.path)),
    dirs,
    defined,
    used,
    stems,
    named,
    packages,
  };
  vocabularies.set(index, v);
  return v;
}

/** A manifest's package name, when the file is one. */
function packageName(path: string, text: string): string | undefined {
  const base = path.slice(path.lastIndexOf("/") + 1);
  if (base === "package.json") return /"name"\s*:\s*"([^"]{1,214})"/.exec(text)?.[1];
  if (base === "go.mod") return /^module\s+(\S+)/m.exec(text)?.[1];
  if (base === "pyproject.toml" || base === "Cargo.toml") return /^name\s*=\s*"([^"]{1,214})"/m.exec(text)?.[1];
  return undefined;
}

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** The map's files a path named in prose stands for: exact, by suffix (an absolute path of a traceback), or a folder. */
export function resolvePath(raw: string, v: Vocabulary): string[] {
  let p = raw
    .replace(/\\/g, "/")
    .replace(/^[ab]\/(?=[\w.-])/, "")
    .replace(/^\.\//, "");
  p = p.replace(/[),.;:'"`\]]+$/, "");
  if (!p || p.length > 400) return [];
  if (v.paths.has(p)) return [p];
  const trimmed = p.replace(/\/+$/, "");
  if (v.dirs.has(trimmed)) return [`${trimmed}/`];
  const dot = p.lastIndexOf(".");
  const slash = p.lastIndexOf("/");
  const hasExt = dot > slash + 1;
  const stem = (hasExt ? p.slice(0, dot) : p).replace(/^\/+/, "");
  const segs = stem.split("/").filter((s) => s && s !== "..");
  // The longest suffix of the path that names files of the map (absolute paths of another machine, `../x`).
  for (let i = 0; i < segs.length; i++) {
    const hits = v.idx.bySuffix(segs.slice(i).join("/")).filter((f) => !hasExt || f.endsWith(p.slice(dot)));
    if (hits.length > 0) return hits.length <= MAX_MATCHES ? [...hits] : [];
    if (i === 0 && !hasExt && v.dirs.has(segs.join("/"))) return [`${segs.join("/")}/`];
  }
  return [];
}

const PY_FRAME = /File "([^"\n]{1,400})", line (\d{1,7})(?:, in ([A-Za-z_]\w*))?/g;
const JAVA_FRAME = /\bat ((?:[\w$]+\.)+)([\w$<>]+)\(([\w$]+\.java):(\d{1,7})\)/g;
const JS_FRAME = /\bat (?:(?:async )?([\w$.<>]+) )?\(?((?:[A-Za-z]:)?[^\s():]{1,400}?\.\w{1,6}):(\d{1,7})(?::\d{1,7})?\)?/g;
const PATH_LINE = /((?:[\w.@-]+\/)*[\w.@-]+\.[A-Za-z]\w{0,5}):(\d{1,7})(?::\d{1,7})?/g;
const PATH =
  /(?:^|[\s(["'`])((?:\.{0,2}\/)?(?:[\w.@-]+\/)+[\w.@-]+\/?|[\w@-][\w.-]*\.(?:tsx?|jsx?|mjs|cjs|mts|cts|py|pyi|go|rs|java|md|json|ya?ml|toml))(?=$|[\s)\]"'`,;:!?]|\.(?:\s|$))/gm;
const CODE_SPAN = /`([^`\n]{1,300})`/g;
const IDENT_SHAPED = /(?<![\w$])(?:[a-z_$][\w$]*[A-Z][\w$]*|[A-Z][a-z0-9]+[A-Z][\w$]*|[A-Za-z][A-Za-z0-9]*_[\w$]+|_[A-Za-z][\w$]*|[A-Za-z_$][\w$]*(?=\())/g;
const IDENT = /[A-Za-z_$][\w$]*/g;
/** Quoted texts, paired as written (a short one is skipped afterwards, not matched across). */
const QUOTED = /"([^"\n]{1,200})"|\u201C([^\u201D\n]{1,200})\u201D|(?<![\w])'([^'\n]{1,200})'(?![\w])/g;
const PACKAGE = /(?<![\w@/-])(@[\w.-]+\/[\w.-]+|[a-z][\w.-]{1,100})(?![\w/-])/g;

/** The seeds of an issue's texts, against a map's vocabulary; `messages` are quoted texts found verbatim in files. */
export function extractSeeds(index: RepoIndex, texts: readonly string[]): Seeds & { messages: Map<string, string[]> } {
  const v = vocabulary(index);
  const text = texts.join("\n\n").slice(0, MAX_TEXT);
  const paths = new Set<string>();
  const identifiers = new Set<string>();
  const terms = new Set<string>();
  const locations = new Set<string>();
  const addPaths = (raw: string) => {
    for (const p of resolvePath(raw, v)) paths.add(p);
  };
  const addIdent = (id: string) => {
    if (id.length >= 3 && id.length <= 100 && (v.defined.has(id) || v.used.has(id))) identifiers.add(id);
  };
  const addLocation = (raw: string, line: string) => {
    const files = resolvePath(raw, v).filter((p) => !p.endsWith("/"));
    for (const p of files) {
      paths.add(p);
      locations.add(`${p}:${Number(line)}`);
    }
  };
  for (const m of text.matchAll(PY_FRAME)) {
    addLocation(m[1] as string, m[2] as string);
    if (m[3]) addIdent(m[3]);
  }
  for (const m of text.matchAll(JAVA_FRAME)) {
    const dir = (m[1] as string).split(".").slice(0, -2).join("/");
    addLocation(dir ? `${dir}/${m[3]}` : (m[3] as string), m[4] as string);
    addIdent((m[2] as string).replace(/[<>]/g, ""));
  }
  for (const m of text.matchAll(JS_FRAME)) {
    addLocation(m[2] as string, m[3] as string);
    for (const part of (m[1] ?? "").split(".")) addIdent(part);
  }
  for (const m of text.matchAll(PATH_LINE)) addLocation(m[1] as string, m[2] as string);
  for (const m of text.matchAll(PATH)) addPaths(m[1] as string);
  for (const m of text.matchAll(CODE_SPAN)) {
    const span = m[1] as string;
    for (const id of span.match(IDENT) ?? []) addIdent(id);
    if (/[/.]/.test(span) && !/\s/.test(span)) addPaths(span);
  }
  for (const id of text.match(IDENT_SHAPED) ?? []) addIdent(id);
  for (const m of text.matchAll(PACKAGE)) {
    const dir = v.packages.get(m[1] as string);
    if (dir) paths.add(`${dir}/`);
  }
  // Quoted messages (an error's text) found in the code: the files that say them.
  const messages = new Map<string, string[]>();
  for (const m of text.matchAll(QUOTED)) {
    if (messages.size >= MAX_MESSAGES) break;
    const msg = (m[1] ?? m[2] ?? m[3] ?? "").trim();
    if (msg.length < 8 || msg.split(/\s+/).length < 3) continue;
    const lower = msg.toLowerCase();
    const lows = lowerTexts(index);
    const files = index.files.filter((_, i) => (lows[i] as string).includes(lower)).map((f) => f.path);
    if (files.length && files.length <= MAX_MATCHES) messages.set(msg, files);
  }
  for (const msg of messages.keys()) terms.add(msg);
  // Plain words that are the names of modules here (a file's stem, a folder), not too common: "the retry
  // logic" names src/http/retry.ts. Definitions count only when the text names them as code (above).
  const common = Math.max(MAX_MATCHES, Math.ceil(index.files.length * COMMON_SHARE));
  const moduleWords = (t: string) => {
    // …of the prose only: paths, frames and code spans have been read above.
    const prose = t.replace(PY_FRAME, " ").replace(JS_FRAME, " ").replace(PATH_LINE, " ").replace(CODE_SPAN, " ").replace(PATH, " ");
    const out = new Set<string>();
    for (const w of new Set(words(prose))) {
      if (w.length < 4 || !/^[a-z]+$/.test(w)) continue;
      const s = termOf(w);
      if (!s) continue;
      for (const name of v.stems.get(s) ?? []) {
        const files = v.named.get(name) ?? [];
        if (files.length > 0 && files.length <= common && !identifiers.has(name)) out.add(name);
      }
    }
    return out;
  };
  for (const name of moduleWords(text)) terms.add(name);
  // The title (the first line of the first text: the issue's) names the subject; the body's other
  // module words may be incidental ("the logs", "a worker pool", "several times a day").
  const title = (texts[0] ?? "").slice(0, MAX_TEXT).split("\n", 1)[0] ?? "";
  const subject = sorted([...moduleWords(title)].filter((t) => terms.has(t)));
  return {
    paths: sorted(paths),
    identifiers: sorted(identifiers),
    terms: sorted(terms),
    locations: sorted(locations),
    ...(subject.length ? { subject } : {}),
    messages,
  };
}
