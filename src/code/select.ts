import MiniSearch from "minisearch";
import { termOf, words } from "../adversarial/fingerprint.js";
import { sha256 } from "../hash.js";
import { fileGraph, rank, type Ranking } from "./graph.js";
import { extractSeeds, lowerTexts, vocabulary } from "./seeds.js";
import { charsFor, estimateTokens } from "./tokens.js";
import type { ChosenItem, CodeContext, ContextQuery, Definition, RepoFile, RepoIndex, RepoMap, Seeds } from "./types.js";

/**
 * The selection (docs/issue.md "The code the councils read", ADR-032): from the seeds an issue's
 * texts name, a ranked map block (files, and the signatures of their top-ranked definitions) and
 * excerpts — whole functions and classes around the ranked definitions and the lexical matches of
 * the seeds, each headed `### path:start-end` and its lines verbatim — within a token budget. A pure
 * function of (map, seeds, extra sources, budget): the same inputs give the same bytes.
 */

/** The share of the budget the map block may take. */
const MAP_SHARE = 0.2;
/** Signatures shown per file of the map block. */
const SIGS_PER_FILE = 4;
/** One excerpt may take at most this share of the excerpts' budget (a longer function is cut to a window). */
const EXCERPT_SHARE = 0.45;
/** Lines of a plain-text chunk. */
const CHUNK_LINES = 40;
/** Chunks searched lexically at most per selection: those holding the most seeds (then in map order). */
const MAX_LEXICAL_DOCS = 800;
/** Occurrences of one seed looked at per file. */
const MAX_HITS_PER_SEED = 200;

/** Where each line of a text starts. */
function lineStarts(text: string): Int32Array {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return Int32Array.from(starts);
}

/** The 1-based line of a character offset. */
function lineAt(starts: Int32Array, pos: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** The least score a candidate needs to be chosen; with seeds, also this share of the best candidate's score. */
const MIN_SCORE = 0.05;
const MIN_SHARE_OF_BEST = 0.15;

const MAP_HEAD = "Repository map (files ranked for this issue; `N: signature` is a definition at line N):";

/** Kinds whose members are candidates of their own: a container too long for an excerpt is left to them. */
const CONTAINERS = new Set(["class", "interface", "module", "enum"]);

/** A piece of a file (or of an extra source) a selection may show. */
interface Chunk {
  file: number;
  path: string;
  lines: readonly string[];
  start: number;
  end: number;
  def?: Definition;
  extra: boolean;
  /** Prose or data (a context file, a text file of the repository) rather than code. */
  plain: boolean;
}

/** A candidate excerpt, scored, with what it matched and why. */
export interface Candidate {
  chunk: Chunk;
  score: number;
  terms: Set<string>;
  why: string[];
  /** A line to keep in view when the excerpt must be cut to a window. */
  focus?: number;
}

const chunkCache = new WeakMap<RepoIndex, Chunk[][]>();

/** Windows of at most CHUNK_LINES over lines a..b (1-based, inclusive), blank-only ones dropped. */
function windows(file: number, path: string, lines: readonly string[], a: number, b: number, extra: boolean, plain: boolean): Chunk[] {
  const out: Chunk[] = [];
  for (let s = a; s <= b; s += CHUNK_LINES) {
    const e = Math.min(b, s + CHUNK_LINES - 1);
    if (lines.slice(s - 1, e).some((l) => l.trim() !== "")) out.push({ file, path, lines, start: s, end: e, extra, plain });
  }
  return out;
}

/** Markdown by its headings (a long section in windows); anything else in windows. */
function textChunks(file: number, path: string, lines: readonly string[], extra: boolean): Chunk[] {
  if (!/\.(?:md|mdx|markdown|rst)$/i.test(path)) return windows(file, path, lines, 1, lines.length, extra, true);
  const heads = lines.flatMap((l, i) => (/^#{1,6}\s/.test(l) ? [i + 1] : []));
  const starts = heads[0] === 1 ? heads : [1, ...heads];
  return starts.flatMap((s, i) => windows(file, path, lines, s, (starts[i + 1] ?? lines.length + 1) - 1, extra, true));
}

/** A file's chunks: each definition, and the lines outside its top-level definitions in windows; plain text in windows. */
function fileChunks(f: RepoFile, i: number): Chunk[] {
  if (!f.defs.length) return textChunks(i, f.path, f.lines, false);
  const out: Chunk[] = f.defs.map((def) => ({
    file: i,
    path: f.path,
    lines: f.lines,
    start: def.start,
    end: Math.min(def.end, f.lines.length),
    def,
    extra: false,
    plain: false,
  }));
  let line = 1;
  for (const d of f.defs) {
    if (d.start > line) out.push(...windows(i, f.path, f.lines, line, d.start - 1, false, false));
    line = Math.max(line, d.end + 1);
  }
  if (line <= f.lines.length) out.push(...windows(i, f.path, f.lines, line, f.lines.length, false, false));
  return out;
}

function chunksOf(index: RepoIndex): Chunk[][] {
  let got = chunkCache.get(index);
  if (!got) chunkCache.set(index, (got = index.files.map(fileChunks)));
  return got;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const chunkText = (c: Chunk) => c.lines.slice(c.start - 1, c.end).join("\n");

/** Identifier parts for the lexical index: `beforeRequest` is also `before` and `request`. */
function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const tok of text.split(/[^A-Za-z0-9_$]+/)) {
    if (!tok) continue;
    out.push(tok);
    if (/[a-z0-9][A-Z]|[A-Za-z0-9][_$][A-Za-z0-9]/.test(tok)) for (const part of tok.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+/g) ?? []) out.push(part);
  }
  return out;
}

/** Stems by word, kept across selections (bounded): stemming is most of indexing's cost. */
const stems = new Map<string, string | null>();
function processTerm(t: string): string | null {
  const low = t.toLowerCase();
  if (low.length < 2) return null;
  let s = stems.get(low);
  if (s === undefined) {
    s = termOf(low);
    if (stems.size < 200_000) stems.set(low, s);
  }
  return s;
}

/** A text's index terms (tokenized, stemmed, stop words out), space-separated. */
const termsOf = (text: string) =>
  tokenize(text)
    .map(processTerm)
    .filter((t): t is string => t !== null)
    .join(" ");

/** Each chunk's index terms, once per map (chunks live as long as their map). */
const chunkTerms = new WeakMap<Chunk, string>();
function termsOfChunk(c: Chunk): string {
  let t = chunkTerms.get(c);
  if (t === undefined) chunkTerms.set(c, (t = termsOf(`${c.path.replace(/[/._-]+/g, " ")} ${chunkText(c)}`)));
  return t;
}

/**
 * Lexical scores (BM25, MiniSearch) of the chunks that contain a seed at all, normalised to 0..1, with
 * the seeds each contains. Only chunks holding a seed are indexed, so the cost follows the seeds.
 */
function lexical(
  chunks: readonly Chunk[][],
  lows: readonly string[],
  needles: readonly string[],
  weak: ReadonlySet<string> = new Set(),
): Map<Chunk, { score: number; terms: string[] }> {
  const out = new Map<Chunk, { score: number; terms: string[] }>();
  if (!needles.length) return out;
  const lowNeedles = needles.map((n) => n.toLowerCase());
  const found: { chunk: Chunk; terms: string[] }[] = [];
  for (const list of chunks) {
    const first = list[0];
    if (!first) continue;
    // Where in the file each seed occurs (one scan of its text per seed), then which chunks hold those lines.
    const whole = first.extra ? first.lines.join("\n").toLowerCase() : (lows[first.file] as string);
    let starts: Int32Array | undefined;
    const at: number[][] = [];
    for (let i = 0; i < lowNeedles.length; i++) {
      const n = lowNeedles[i] as string;
      let pos = whole.indexOf(n);
      if (pos < 0) continue;
      starts ??= lineStarts(whole);
      const lines: number[] = [];
      while (pos >= 0 && lines.length < MAX_HITS_PER_SEED) {
        lines.push(lineAt(starts, pos));
        pos = whole.indexOf(n, pos + n.length);
      }
      at[i] = lines;
    }
    if (!starts) continue;
    for (const c of list) {
      const terms: string[] = [];
      at.forEach((lines, i) => {
        if (lines?.some((l) => l >= c.start && l <= c.end)) terms.push(needles[i] as string);
      });
      if (terms.length) found.push({ chunk: c, terms });
    }
  }
  // The chunks holding the most distinct seeds are the ones searched (a stable sort keeps map order among equals).
  const kept = found.length > MAX_LEXICAL_DOCS ? [...found].sort((a, b) => b.terms.length - a.terms.length).slice(0, MAX_LEXICAL_DOCS) : found;
  const docs = kept.map((k, id) => ({ id, text: termsOfChunk(k.chunk), name: termsOf(k.chunk.def?.name ?? "") }));
  const byId = kept.map((k) => k.chunk);
  const matched = kept.map((k) => k.terms);
  if (!docs.length) return out;
  // Documents and query arrive as their terms already (termsOf): MiniSearch only splits them.
  const search = new MiniSearch<{ id: number; text: string; name: string }>({
    fields: ["text", "name"],
    tokenize: (text) => text.split(" ").filter(Boolean),
    processTerm: (t) => t,
    searchOptions: { boost: { name: 3 }, combineWith: "OR", boostTerm: (t) => (weak.has(t) ? BODY_TERM_WEIGHT : 1) },
  });
  search.addAll(docs);
  const hits = search.search(termsOf(needles.join(" ")));
  const top = hits[0]?.score ?? 0;
  for (const h of hits) {
    const id = Number(h.id);
    const c = byId[id] as Chunk;
    out.set(c, { score: top > 0 ? h.score / top : 0, terms: matched[id] as string[] });
  }
  return out;
}

/** Prose words of the query a context file's sections are searched by, at most. */
const MAX_PROSE_WORDS = 48;
/** A prose word in more than this share of a context file's sections ranks none of them. */
const PROSE_DF_SHARE = 0.1;
/** A file goes into the map block only with at least this share of the best file's rank. */
const MAP_FLOOR = 0.1;

/**
 * The stems of the content words of the texts (four letters or more, stop words out), the
 * most frequent first, at most MAX_PROSE_WORDS, sorted: what ranks the sections of a context file —
 * prose names no identifier the map knows, so the seeds alone would choose none of it.
 */
export function proseWords(texts: readonly string[]): string[] {
  const count = new Map<string, number>();
  for (const w of words(texts.join("\n").slice(0, 200_000))) {
    if (w.length < 4 || !/^[a-z]+$/.test(w)) continue;
    const t = processTerm(w);
    if (t) count.set(t, (count.get(t) ?? 0) + 1);
  }
  return [...count]
    .sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]))
    .slice(0, MAX_PROSE_WORDS)
    .map(([t]) => t)
    .sort(cmp);
}

/** BM25 of the context files' chunks against the query's prose words, normalised to 0..1, with the words each holds. */
function proseMatches(extras: readonly Chunk[], prose: readonly string[]): Map<Chunk, { score: number; terms: string[] }> {
  const out = new Map<Chunk, { score: number; terms: string[] }>();
  if (!prose.length || !extras.length) return out;
  // Only words that set a section apart count: one in more than a tenth of the sections ("change",
  // "area", "team") matches everything and ranks nothing, so it is left out of the query.
  const df = new Map<string, number>();
  for (const c of extras) for (const t of new Set(termsOfChunk(c).split(" "))) df.set(t, (df.get(t) ?? 0) + 1);
  const rare = prose.filter((t) => (df.get(t) ?? 0) > 0 && (df.get(t) ?? 0) <= Math.max(2, Math.ceil(extras.length * PROSE_DF_SHARE)));
  if (!rare.length) return out;
  const search = new MiniSearch<{ id: number; text: string }>({
    fields: ["text"],
    tokenize: (text) => text.split(" ").filter(Boolean),
    processTerm: (t) => t,
    searchOptions: { combineWith: "OR" },
  });
  search.addAll(extras.map((c, id) => ({ id, text: termsOfChunk(c) })));
  const hits = search.search(rare.join(" "));
  const top = hits[0]?.score ?? 0;
  for (const h of hits) out.set(extras[Number(h.id)] as Chunk, { score: top > 0 ? h.score / top : 0, terms: [...h.terms].sort(cmp) });
  return out;
}

/** The seeds as the ranking weighs them: files to start from, identifiers whose edges count ×10. */
function personalization(index: RepoIndex, seeds: Seeds, messages: ReadonlyMap<string, readonly string[]>): Map<number, number> {
  const at = new Map(index.files.map((f, i) => [f.path, i]));
  const v = vocabulary(index);
  const p = new Map<number, number>();
  const add = (path: string, w: number) => {
    const i = at.get(path);
    if (i !== undefined) p.set(i, (p.get(i) ?? 0) + w);
  };
  const spread = (paths: readonly string[], w: number) => {
    for (const x of paths) add(x, w / paths.length);
  };
  for (const s of seeds.paths) {
    if (s.endsWith("/"))
      spread(
        index.files
          .filter((f) => f.path.startsWith(s))
          .map((f) => f.path)
          .slice(0, 50),
        1,
      );
    else add(s, 1);
  }
  for (const id of seeds.identifiers) {
    const files = v.defined.get(id) ?? [];
    if (files.length && files.length <= 10) spread(files, 1);
  }
  for (const t of seeds.terms) {
    const msg = messages.get(t);
    if (msg) spread(msg, 1);
    else spread(v.named.get(t) ?? [], 0.5 * termWeight(seeds, t));
  }
  return p;
}

/** A module word only the body names counts this much beside one the title names (Seeds.subject). */
const BODY_TERM_WEIGHT = 0.1;

/** How much a term counts: 1, or BODY_TERM_WEIGHT for a module word outside a subject the title names. */
const termWeight = (seeds: Seeds, t: string) => (seeds.subject?.length && !seeds.subject.includes(t) ? BODY_TERM_WEIGHT : 1);

/** What a selection is built from: the seeds, the ranking and the lexical matches. */
interface Basis {
  index: RepoIndex;
  seeds: Seeds;
  ranking: Ranking;
  lex: Map<Chunk, { score: number; terms: string[] }>;
  extras: Chunk[];
}

function basis(
  map: RepoMap,
  seeds: Seeds,
  messages: ReadonlyMap<string, readonly string[]>,
  extraSources: ContextQuery["extraSources"],
  prose: readonly string[] = [],
): Basis {
  const index = map.index;
  const graph = fileGraph(index);
  const ranking = rank(graph, personalization(index, seeds, messages), new Set(seeds.identifiers));
  // Context files the repository also holds, unchanged, are its files already.
  const extraLists = (extraSources ?? [])
    .filter((x) => index.byPath.get(x.path)?.text.trim() !== x.text.trim())
    .map((x, i) => textChunks(-1 - i, x.path, x.text.split(/\r?\n/), true));
  const needles = [...seeds.identifiers, ...seeds.terms];
  // The index terms of the body's module words, where no stronger seed shares them: weighed down in the query.
  const strong = new Set(termsOf([...seeds.identifiers, ...seeds.terms.filter((t) => termWeight(seeds, t) === 1 || messages.has(t))].join(" ")).split(" "));
  const weak = new Set(
    termsOf(seeds.terms.filter((t) => termWeight(seeds, t) < 1 && !messages.has(t)).join(" "))
      .split(" ")
      .filter((t) => t && !strong.has(t)),
  );
  const lex = lexical([...chunksOf(index), ...extraLists], lowerTexts(index), needles, weak);
  const extras = extraLists.flat();
  // A context file's sections are also ranked by the prose (the stronger of the two counts).
  for (const [c, hit] of proseMatches(extras, prose)) {
    const seen = lex.get(c);
    if (!seen || seen.score < hit.score) lex.set(c, { score: hit.score, terms: [...new Set([...(seen?.terms ?? []), ...hit.terms])] });
  }
  return { index, seeds, ranking, lex, extras };
}

const lineIn = (c: Chunk, line: number) => line >= c.start && line <= c.end;

/** Every chunk scored (seeds named, ranks, lexical matches), best first; ties in path and line order. */
function scoreChunks(b: Basis): Candidate[] {
  const { index, seeds, ranking, lex } = b;
  const maxFile = Math.max(0, ...ranking.file);
  let maxDef = 0;
  for (const m of ranking.defs) for (const r of m.values()) maxDef = Math.max(maxDef, r);
  const idents = new Set(seeds.identifiers);
  const locations = new Map<string, number[]>();
  for (const l of seeds.locations) {
    const cut = l.lastIndexOf(":");
    const list = locations.get(l.slice(0, cut)) ?? [];
    list.push(Number(l.slice(cut + 1)));
    locations.set(l.slice(0, cut), list);
  }
  const namedPath = (path: string) => seeds.paths.some((p) => p === path || (p.endsWith("/") && path.startsWith(p)));
  const out: Candidate[] = [];
  const consider = (c: Chunk) => {
    let score = 0;
    const terms = new Set<string>();
    const why: string[] = [];
    let focus: number | undefined;
    const f = c.extra ? undefined : index.files[c.file];
    for (const line of locations.get(c.path) ?? []) {
      if (!lineIn(c, line)) continue;
      score += 4;
      focus ??= line;
      terms.add(`${c.path}:${line}`);
      why.push(`holds ${c.path}:${line}, named in the issue`);
    }
    if (c.def && idents.has(c.def.name)) {
      score += 3;
      terms.add(c.def.name);
      why.push(`defines \`${c.def.name}\`, named in the issue`);
    }
    if (f && c.def) {
      for (const id of seeds.identifiers) {
        if (id === c.def.name) continue;
        const use = f.refs.get(id)?.lines.find((l) => lineIn(c, l));
        if (use === undefined) continue;
        score += 1.5;
        focus ??= use;
        terms.add(id);
        why.push(`uses \`${id}\``);
      }
    }
    if (namedPath(c.path)) {
      score += 1;
      terms.add(c.path);
      why.push("in a file the issue names");
    }
    const hit = lex.get(c);
    if (hit && hit.score > 0) {
      // BM25 relative to the best match, and half a point for each identifier of the issue it names (a
      // section of a context file that names two of them is as much about the issue as the code is).
      score += 1.5 * hit.score + Math.min(1.5, 0.5 * hit.terms.filter((t) => idents.has(t)).length);
      for (const t of hit.terms) terms.add(t);
      why.push(`matches ${hit.terms.slice(0, 4).join(", ")}`);
    }
    if (f && c.def && maxDef > 0) {
      const r = (ranking.defs[c.file]?.get(c.def.name) ?? 0) / maxDef;
      if (r > 0.01) {
        score += r;
        why.push(`ranked definition (${r.toFixed(2)})`);
      }
    }
    if (f && maxFile > 0) score += 0.5 * ((ranking.file[c.file] ?? 0) / maxFile);
    if (score >= MIN_SCORE) out.push({ chunk: c, score, terms, why, ...(focus !== undefined ? { focus } : {}) });
  };
  for (const list of chunksOf(index)) for (const c of list) consider(c);
  for (const c of b.extras) consider(c);
  // What the issue names leads; code that is only near it in the ranking comes in while it is not far behind.
  const hasSeeds = seeds.paths.length + seeds.identifiers.length + seeds.terms.length + seeds.locations.length > 0;
  const best = Math.max(0, ...out.map((c) => c.score));
  const floor = hasSeeds ? best * MIN_SHARE_OF_BEST : 0;
  return out
    .filter((c) => c.score >= floor)
    .sort((x, y) => y.score - x.score || cmp(x.chunk.path, y.chunk.path) || x.chunk.start - y.chunk.start || x.chunk.end - y.chunk.end);
}

/** An excerpt as rendered: `### path:start-end`, then its lines verbatim. */
const excerptText = (path: string, lines: readonly string[], start: number, end: number) =>
  `### ${path}:${start}-${end}\n${lines.slice(start - 1, end).join("\n")}`;

/** Prefix sums of line lengths, per file's lines (the excerpts' costs are sums of them). */
const prefixes = new WeakMap<readonly string[], Float64Array>();
function prefixOf(lines: readonly string[]): Float64Array {
  let p = prefixes.get(lines);
  if (!p) {
    p = new Float64Array(lines.length + 1);
    for (let i = 0; i < lines.length; i++) p[i + 1] = (p[i] as number) + (lines[i] as string).length;
    prefixes.set(lines, p);
  }
  return p;
}

/** excerptText(…).length, without building it. */
function excerptLength(path: string, lines: readonly string[], start: number, end: number): number {
  const p = prefixOf(lines);
  const s = Math.max(1, start);
  const e = Math.min(lines.length, end);
  const body = e >= s ? (p[e] as number) - (p[s - 1] as number) + (e - s) : 0;
  return `### ${path}:${start}-${end}\n`.length + body;
}

/** A chosen excerpt (ranges of one file merge as they are added). */
interface Excerpt {
  path: string;
  lines: readonly string[];
  start: number;
  end: number;
  extra: boolean;
  plain: boolean;
  order: number;
  score: number;
  terms: Set<string>;
  why: string[];
  cut: boolean;
}

/** The window of a too-long chunk that fits `cap` characters, kept around `focus` (or from its start). */
function windowOf(c: Chunk, focus: number | undefined, cap: number): { start: number; end: number } | undefined {
  const head = `### ${c.path}:${c.start}-${c.end}\n`.length;
  let start = Math.max(c.start, Math.min(focus ?? c.start, c.end));
  let end = start;
  let size = head + (c.lines[start - 1]?.length ?? 0);
  if (size > cap) return undefined;
  for (;;) {
    const down = end < c.end ? (c.lines[end]?.length ?? 0) + 1 : Number.POSITIVE_INFINITY;
    const up = start > c.start && focus !== undefined ? (c.lines[start - 2]?.length ?? 0) + 1 : Number.POSITIVE_INFINITY;
    const step = Math.min(down, up);
    if (step === Number.POSITIVE_INFINITY || size + step > cap) break;
    size += step;
    if (down <= up) end++;
    else start--;
  }
  return { start, end };
}

/** Greedy: candidates in score order while they fit `room` characters; overlapping or adjacent ranges of a file merge. */
export function assemble(candidates: readonly Candidate[], room: number): Excerpt[] {
  const chosen: Excerpt[] = [];
  const cap = Math.max(600, Math.floor(room * EXCERPT_SHARE));
  let used = 0;
  const cost = (e: { path: string; lines: readonly string[]; start: number; end: number }) => excerptLength(e.path, e.lines, e.start, e.end) + 2;
  for (const cand of candidates) {
    if (used >= room) break;
    const c = cand.chunk;
    let range: { start: number; end: number } | undefined = { start: c.start, end: c.end };
    let cut = false;
    if (cost({ ...c, ...range }) > cap) {
      if (c.def && CONTAINERS.has(c.def.kind)) continue;
      range = windowOf(c, cand.focus, cap);
      cut = true;
      if (!range) continue;
    }
    const same = chosen.filter((e) => e.path === c.path && e.extra === c.extra && e.start <= range.end + 1 && range.start <= e.end + 1);
    if (same.length === 1 && (same[0] as Excerpt).start <= range.start && (same[0] as Excerpt).end >= range.end) {
      const e = same[0] as Excerpt;
      for (const t of cand.terms) e.terms.add(t);
      continue; // already shown
    }
    const start = Math.min(range.start, ...same.map((e) => e.start));
    const end = Math.max(range.end, ...same.map((e) => e.end));
    const delta = cost({ path: c.path, lines: c.lines, start, end }) - same.reduce((n, e) => n + cost(e), 0);
    if (used + delta > room) continue;
    used += delta;
    const merged: Excerpt = {
      path: c.path,
      lines: c.lines,
      start,
      end,
      extra: c.extra,
      plain: c.plain,
      order: Math.min(chosen.length, ...same.map((e) => e.order)),
      score: Math.max(cand.score, ...same.map((e) => e.score)),
      terms: new Set([...same.flatMap((e) => [...e.terms]), ...cand.terms]),
      // The reasons of the better-scored part first (the record shows the first few).
      why: [
        ...new Set(
          cand.score > Math.max(0, ...same.map((e) => e.score)) ? [...cand.why, ...same.flatMap((e) => e.why)] : [...same.flatMap((e) => e.why), ...cand.why],
        ),
      ],
      cut: cut || same.some((e) => e.cut),
    };
    for (const e of same) chosen.splice(chosen.indexOf(e), 1);
    chosen.push(merged);
  }
  return chosen;
}

/** Where each chosen item's text lies in the context, for locateQuote: its characters, and the file line of each of its lines. */
export interface Span {
  item: number;
  from: number;
  to: number;
  lines: number[];
}

/** The map block: files in rank order, each with the signatures of its top-ranked definitions, while they fit `room`. */
function mapBlock(b: Basis, room: number): { text: string; items: { path: string; text: string; lines: number[]; terms: string[]; why: string }[] } {
  const { index, ranking, seeds } = b;
  const order = index.files
    .map((_, i) => i)
    .sort((x, y) => (ranking.file[y] ?? 0) - (ranking.file[x] ?? 0) || cmp(index.files[x]?.path ?? "", index.files[y]?.path ?? ""));
  const items: { path: string; text: string; lines: number[]; terms: string[]; why: string }[] = [];
  let used = MAP_HEAD.length;
  const idents = new Set(seeds.identifiers);
  const best = ranking.file[order[0] ?? 0] ?? 0;
  for (const i of order) {
    // Files far below the best are not about this issue: the block ends before them.
    if (best > 0 && (ranking.file[i] ?? 0) < best * MAP_FLOOR) break;
    const f = index.files[i] as RepoFile;
    const defRank = ranking.defs[i] ?? new Map<string, number>();
    const defs = [...f.defs]
      .filter((d) => d.kind !== "constant" || idents.has(d.name))
      .sort((x, y) => Number(idents.has(y.name)) - Number(idents.has(x.name)) || (defRank.get(y.name) ?? 0) - (defRank.get(x.name) ?? 0) || x.line - y.line)
      .slice(0, SIGS_PER_FILE)
      .sort((x, y) => x.line - y.line);
    const body = [f.path, ...defs.map((d) => `  ${d.line}: ${d.sig}`)].join("\n");
    if (used + 1 + body.length > room) break; // files below it rank lower still: the block ends here
    used += 1 + body.length;
    const named = seeds.paths.filter((p) => p === f.path || (p.endsWith("/") && f.path.startsWith(p)));
    const terms = [...named, ...defs.filter((d) => idents.has(d.name)).map((d) => d.name)];
    items.push({
      path: f.path,
      text: body,
      lines: [0, ...defs.map((d) => d.line)],
      terms,
      why: `ranked ${items.length + 1} of ${index.files.length} files (${(ranking.file[i] ?? 0).toPrecision(3)})${named.length ? "; named in the issue" : ""}`,
    });
  }
  return { text: items.length ? [MAP_HEAD, ...items.map((x) => x.text)].join("\n") : "", items };
}

/** Puts the map block and the excerpts together as the code text, with what was chosen and where each item lies. */
export function render(
  seeds: Seeds,
  map: ReturnType<typeof mapBlock> | undefined,
  excerpts: readonly Excerpt[],
  budgetChars: number,
): CodeContext & { spans: Span[] } {
  // Excerpts grouped by file (the file of the best first), in line order within a file.
  const firstOrder = new Map<string, number>();
  for (const e of [...excerpts].sort((a, b) => a.order - b.order))
    if (!firstOrder.has(`${e.extra}:${e.path}`)) firstOrder.set(`${e.extra}:${e.path}`, firstOrder.size);
  const ordered = [...excerpts].sort(
    (a, b) => (firstOrder.get(`${a.extra}:${a.path}`) ?? 0) - (firstOrder.get(`${b.extra}:${b.path}`) ?? 0) || a.start - b.start,
  );
  const chosen: ChosenItem[] = [];
  const spans: Span[] = [];
  let text = "";
  const append = (part: string) => {
    if (text) text += "\n\n";
    const from = text.length;
    text += part;
    return from;
  };
  if (map?.text) {
    let at = append(MAP_HEAD) + MAP_HEAD.length + 1;
    for (const item of map.items) {
      text += `\n${item.text}`;
      chosen.push({
        path: item.path,
        kind: "map",
        rank: chosen.length + 1,
        terms: [...new Set(item.terms)].sort(cmp),
        tokens: estimateTokens(item.text),
        why: item.why,
      });
      spans.push({ item: chosen.length - 1, from: at, to: at + item.text.length, lines: item.lines });
      at += item.text.length + 1;
    }
  }
  for (const e of ordered) {
    const body = excerptText(e.path, e.lines, e.start, e.end);
    if (text.length + (text ? 2 : 0) + body.length > budgetChars) continue;
    const from = append(body);
    const head = body.indexOf("\n") + 1;
    chosen.push({
      path: e.path,
      kind: e.plain ? "file_chunk" : "excerpt",
      start_line: e.start,
      end_line: e.end,
      rank: chosen.length + 1,
      terms: [...e.terms].sort(cmp),
      tokens: estimateTokens(body),
      why: `${e.why.slice(0, 4).join("; ") || "ranked in the map"}${e.cut ? " (a window of a longer definition)" : ""}`,
    });
    spans.push({
      item: chosen.length - 1,
      from: from + head,
      to: from + body.length,
      lines: Array.from({ length: e.end - e.start + 1 }, (_, k) => e.start + k),
    });
  }
  return { text, tokens: estimateTokens(text), chosen, seeds, digest: sha256(text), spans };
}

/** A context with its spans kept out of JSON (they serve locateQuote only). */
export function withSpans(ctx: CodeContext & { spans: Span[] }): CodeContext {
  const { spans, ...rest } = ctx;
  Object.defineProperty(rest, "spans", { value: spans, enumerable: false });
  return rest;
}

/** The spans of a context built here. */
export function spansOf(ctx: CodeContext): readonly Span[] {
  const s: unknown = Reflect.get(ctx, "spans");
  return Array.isArray(s) ? (s as Span[]) : [];
}

/**
 * The code for a request (docs/issue.md): the seeds of `query.texts`, the map block (a fifth of the
 * budget at most) and the excerpts that fit the rest, as one text under `budgetTokens` by
 * estimateTokens. Depends on the texts only through their seeds.
 */
export function selectContext(map: RepoMap, query: ContextQuery, opts: { budgetTokens: number }): CodeContext {
  const { messages, ...seeds } = extractSeeds(map.index, query.texts);
  const prose = query.extraSources?.length ? proseWords(query.texts) : [];
  return selectFromSeeds(map, seeds, messages, query.extraSources, opts.budgetTokens, prose);
}

/** The selection for given seeds (selectContext after reading them off the texts). */
export function selectFromSeeds(
  map: RepoMap,
  seeds: Seeds,
  messages: ReadonlyMap<string, readonly string[]>,
  extraSources: ContextQuery["extraSources"],
  budgetTokens: number,
  prose: readonly string[] = [],
): CodeContext {
  const budget = charsFor(budgetTokens);
  if (budget <= 0 || map.index.files.length + (extraSources?.length ?? 0) === 0) return withSpans(render(seeds, undefined, [], 0));
  const b = basis(map, seeds, messages, extraSources, prose);
  const block = mapBlock(b, Math.floor(budget * MAP_SHARE));
  const room = budget - block.text.length - (block.text ? 2 : 0);
  const excerpts = assemble(scoreChunks(b), room);
  return withSpans(render(seeds, withoutExcerpted(block, excerpts), excerpts, budget));
}

/**
 * The map block with a file that has excerpts below as its path alone: its signatures are in the
 * excerpts verbatim, and the path keeps its place in the ranking.
 */
function withoutExcerpted(block: ReturnType<typeof mapBlock>, excerpts: readonly Excerpt[]): ReturnType<typeof mapBlock> {
  const shown = new Set(excerpts.filter((e) => !e.extra).map((e) => e.path));
  if (!block.items.some((x) => shown.has(x.path))) return block;
  const items = block.items.map((x) => (shown.has(x.path) ? { ...x, text: x.path, lines: [0] } : x));
  return { text: [MAP_HEAD, ...items.map((x) => x.text)].join("\n"), items };
}

/** Scored candidates for callers outside this module (diffContext). */
export function candidatesFor(map: RepoMap, seeds: Seeds, extraSources?: ContextQuery["extraSources"]): Candidate[] {
  return scoreChunks(basis(map, seeds, new Map(), extraSources));
}

/** The chunk of a file's definition, as candidates carry it. */
export function defChunk(index: RepoIndex, path: string, def: Definition): Chunk | undefined {
  const i = index.files.findIndex((f) => f.path === path);
  return chunksOf(index)[i]?.find((c) => c.def === def);
}
