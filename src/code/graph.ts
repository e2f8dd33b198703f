import type { RepoFile, RepoIndex } from "./types.js";

/**
 * The file graph and its personalized PageRank (after aider's repo map, ADR-032). A file that uses
 * an identifier another file defines points at it, weighted by √uses and by what the identifier is:
 * ×10 when the issue names it, ×10 for a long camelCase/snake_case name, ×0.1 for `_private` names
 * and for names defined in more than five files. Each such edge has a reverse edge at 0.3 of its
 * weight (a definition's callers are its neighbours too), and an import is an edge of weight 1 each
 * way (0.3 back). Ranks start from, and teleport to, the files the issue names.
 */

/** Identifiers defined in more files than this link nothing (`get`, `constructor`, `toString`). */
const MAX_DEFINERS = 30;
const REVERSE = 0.3;
const IMPORT = 1;
const DAMPING = 0.85;
const ITERATIONS = 40;
const TOLERANCE = 1e-7;

/** The graph of a map, before the identifiers weigh in (built once per map). */
export interface FileGraph {
  paths: readonly string[];
  /** Edge lists: source, target, base weight, identifier index (-1: an import), forward (1) or reverse (0). */
  src: Int32Array;
  dst: Int32Array;
  weight: Float64Array;
  ident: Int32Array;
  forward: Uint8Array;
  idents: readonly string[];
  /** Files defining each identifier. */
  definers: ReadonlyMap<string, readonly number[]>;
}

/** aider's weight of an identifier, before the mentions. */
function identWeight(name: string, definers: number): number {
  let mul = 1;
  const snake = name.includes("_") && /[a-zA-Z]/.test(name);
  const camel = /[A-Z]/.test(name) && /[a-z]/.test(name);
  if ((snake || camel) && name.length >= 8) mul *= 10;
  if (name.startsWith("_")) mul *= 0.1;
  if (definers > 5) mul *= 0.1;
  return mul;
}

const graphs = new WeakMap<RepoIndex, FileGraph>();

/** The graph of a map's files (memoised per map). */
export function fileGraph(index: RepoIndex): FileGraph {
  const known = graphs.get(index);
  if (known) return known;
  const files = index.files;
  const at = new Map(files.map((f, i) => [f.path, i]));
  const definers = new Map<string, number[]>();
  files.forEach((f, i) => {
    for (const name of new Set(f.defs.map((d) => d.name))) {
      const list = definers.get(name);
      if (list) list.push(i);
      else definers.set(name, [i]);
    }
  });
  const src: number[] = [];
  const dst: number[] = [];
  const weight: number[] = [];
  const ident: number[] = [];
  const forward: number[] = [];
  const idents: string[] = [];
  const identAt = new Map<string, number>();
  const edge = (s: number, d: number, w: number, id: number, fwd: number) => {
    src.push(s);
    dst.push(d);
    weight.push(w);
    ident.push(id);
    forward.push(fwd);
  };
  files.forEach((f: RepoFile, i) => {
    for (const [name, use] of f.refs) {
      const defs = definers.get(name);
      if (!defs || defs.length > MAX_DEFINERS) continue;
      let id = identAt.get(name);
      if (id === undefined) {
        id = idents.length;
        idents.push(name);
        identAt.set(name, id);
      }
      const w = identWeight(name, defs.length) * Math.sqrt(use.count);
      for (const d of defs) {
        if (d === i) continue;
        edge(i, d, w, id, 1);
        edge(d, i, w * REVERSE, id, 0);
      }
    }
    for (const p of f.imports) {
      const d = at.get(p);
      if (d === undefined || d === i) continue;
      edge(i, d, IMPORT, -1, 1);
      edge(d, i, IMPORT * REVERSE, -1, 0);
    }
  });
  const graph: FileGraph = {
    paths: files.map((f) => f.path),
    src: Int32Array.from(src),
    dst: Int32Array.from(dst),
    weight: Float64Array.from(weight),
    ident: Int32Array.from(ident),
    forward: Uint8Array.from(forward),
    idents,
    definers,
  };
  graphs.set(index, graph);
  return graph;
}

/** Ranks of files, and of each (file, identifier) definition by the rank that flows into it. */
export interface Ranking {
  file: Float64Array;
  /** By file index: identifier → rank. */
  defs: Map<string, number>[];
}

/**
 * Personalized PageRank over the graph: `personal` gives each seeded file its weight (none: every
 * file alike), `mentioned` the identifiers the issue names (their edges ×10). Deterministic: a fixed
 * number of passes at most, in edge order.
 */
export function rank(graph: FileGraph, personal: ReadonlyMap<number, number>, mentioned: ReadonlySet<string>): Ranking {
  const n = graph.paths.length;
  const p = new Float64Array(n);
  let total = 0;
  for (const [i, w] of [...personal].sort((a, b) => a[0] - b[0])) {
    p[i] = (p[i] ?? 0) + w;
    total += w;
  }
  if (total > 0) for (let i = 0; i < n; i++) p[i] = (p[i] as number) / total;
  else p.fill(n ? 1 / n : 0);
  const m = graph.src.length;
  const w = new Float64Array(m);
  const out = new Float64Array(n);
  const boosted = graph.idents.map((name) => mentioned.has(name));
  for (let e = 0; e < m; e++) {
    const id = graph.ident[e] as number;
    const we = (graph.weight[e] as number) * (id >= 0 && boosted[id] ? 10 : 1);
    w[e] = we;
    const s = graph.src[e] as number;
    out[s] = (out[s] as number) + we;
  }
  let r = Float64Array.from(p);
  for (let iter = 0; iter < ITERATIONS; iter++) {
    const next = new Float64Array(n);
    let dangling = 0;
    for (let i = 0; i < n; i++) if ((out[i] as number) === 0) dangling += r[i] as number;
    for (let e = 0; e < m; e++) {
      const s = graph.src[e] as number;
      const d = graph.dst[e] as number;
      next[d] = (next[d] as number) + (DAMPING * (r[s] as number) * (w[e] as number)) / (out[s] as number);
    }
    let delta = 0;
    for (let i = 0; i < n; i++) {
      next[i] = (next[i] as number) + (1 - DAMPING + DAMPING * dangling) * (p[i] as number);
      delta += Math.abs((next[i] as number) - (r[i] as number));
    }
    r = next;
    if (delta < TOLERANCE) break;
  }
  const defs: Map<string, number>[] = Array.from({ length: n }, () => new Map());
  for (let e = 0; e < m; e++) {
    const id = graph.ident[e] as number;
    if (id < 0 || !graph.forward[e]) continue;
    const s = graph.src[e] as number;
    const d = graph.dst[e] as number;
    const name = graph.idents[id] as string;
    const map = defs[d] as Map<string, number>;
    map.set(name, (map.get(name) ?? 0) + ((r[s] as number) * (w[e] as number)) / (out[s] as number));
  }
  return { file: r, defs };
}
