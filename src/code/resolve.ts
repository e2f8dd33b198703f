import { posix } from "node:path";

/**
 * Import specifiers to files of the map, per language: relative paths (TS/JS, Python's leading dots,
 * Rust's `mod x;`), and module paths matched against path suffixes (Python packages, Go import paths,
 * Rust `crate::` paths, Java's qualified names). An ambiguous specifier (more than 3 files) links none.
 */

const TS_EXTS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
const MAX_TARGETS = 3;

/** What resolving needs to know of the map's paths. */
export interface PathIndex {
  has(path: string): boolean;
  /** Files whose path without extension ends with these segments (`a/b` → `src/a/b.py`), segment-aligned. */
  bySuffix(suffix: string): readonly string[];
  /** Files directly in folders whose path ends with these segments. */
  inDirSuffix(suffix: string): readonly string[];
}

const stemOf = (path: string) => path.replace(/\.[^./]+$/, "");

/** Builds the suffix index of a map's paths. */
export function pathIndex(paths: readonly string[]): PathIndex {
  const set = new Set(paths);
  const suffix = new Map<string, string[]>();
  const dirs = new Map<string, string[]>();
  const add = (m: Map<string, string[]>, k: string, p: string) => {
    const list = m.get(k);
    if (list) list.push(p);
    else m.set(k, [p]);
  };
  for (const p of paths) {
    const segs = stemOf(p).split("/");
    for (let i = 0; i < segs.length; i++) add(suffix, segs.slice(i).join("/"), p);
    const dirSegs = segs.slice(0, -1);
    for (let i = 0; i < dirSegs.length; i++) add(dirs, dirSegs.slice(i).join("/"), p);
  }
  return { has: (p) => set.has(p), bySuffix: (s) => suffix.get(s) ?? [], inDirSuffix: (s) => dirs.get(s) ?? [] };
}

const norm = (p: string) => posix.normalize(p).replace(/^\.\//, "");
const capped = (xs: readonly string[]) => (xs.length > 0 && xs.length <= MAX_TARGETS ? [...xs] : []);

function tsRelative(from: string, spec: string, idx: PathIndex): string[] {
  if (!spec.startsWith(".")) return [];
  const base = norm(posix.join(posix.dirname(from), spec));
  if (base.startsWith("..")) return [];
  if (idx.has(base) && /\.[cm]?[jt]sx?$/.test(base) === false) return [base];
  const stem = base.replace(/\.(?:[cm]?js|jsx)$/, "");
  for (const c of [...(idx.has(base) ? [base] : []), ...TS_EXTS.map((e) => stem + e), ...TS_EXTS.map((e) => `${stem}/index${e}`)]) if (idx.has(c)) return [c];
  return [];
}

function python(from: string, spec: string, idx: PathIndex): string[] {
  const dots = /^\.+/.exec(spec)?.[0].length ?? 0;
  const rest = spec.slice(dots).replace(/\./g, "/");
  if (dots > 0) {
    let dir = posix.dirname(from);
    for (let i = 1; i < dots; i++) dir = posix.dirname(dir);
    const base = norm(rest ? posix.join(dir, rest) : dir);
    for (const c of [`${base}.py`, `${base}/__init__.py`, `${base}.pyi`]) if (idx.has(c)) return [c];
    return [];
  }
  if (!rest) return [];
  const direct = idx.bySuffix(rest).filter((p) => p.endsWith(".py") || p.endsWith(".pyi"));
  if (direct.length) return capped(direct);
  return capped(idx.bySuffix(`${rest}/__init__`));
}

function go(spec: string, idx: PathIndex): string[] {
  const segs = spec.split("/");
  // The longest suffix (two segments at least: `fmt` is the standard library's) naming one folder of the map: its .go files, tests aside.
  for (let i = 0; i + 2 <= segs.length; i++) {
    const files = idx.inDirSuffix(segs.slice(i).join("/")).filter((p) => p.endsWith(".go") && !p.endsWith("_test.go"));
    const dirs = new Set(files.map((p) => posix.dirname(p)));
    if (dirs.size === 1) return files.slice(0, 20);
    if (dirs.size > 1) return [];
  }
  return [];
}

function rust(from: string, spec: string, idx: PathIndex): string[] {
  if (spec.startsWith("mod ")) {
    const name = spec.slice(4);
    const dir = posix.dirname(from);
    const base = posix.basename(from, ".rs");
    const here = ["mod", "lib", "main"].includes(base) ? dir : posix.join(dir, base);
    for (const c of [posix.join(here, `${name}.rs`), posix.join(here, name, "mod.rs")]) if (idx.has(norm(c))) return [norm(c)];
    return [];
  }
  const path = spec
    .replace(/\{.*$/s, "")
    .replace(/::\*$/, "")
    .split("::")
    .filter((s) => s && !["crate", "self", "super"].includes(s));
  for (let n = path.length; n > 0; n--) {
    const key = path.slice(0, n).join("/");
    const hits = [...idx.bySuffix(key), ...idx.bySuffix(`${key}/mod`)].filter((p) => p.endsWith(".rs"));
    if (hits.length) return capped(hits);
  }
  return [];
}

function java(spec: string, idx: PathIndex): string[] {
  const path = spec.replace(/\./g, "/");
  const file = idx.bySuffix(path).filter((p) => p.endsWith(".java"));
  if (file.length) return capped(file);
  return idx
    .inDirSuffix(path)
    .filter((p) => p.endsWith(".java"))
    .slice(0, 20);
}

/** The files of the map an import of `from` names (none when it is a package outside the repository). */
export function resolveImport(language: string, from: string, spec: string, idx: PathIndex): string[] {
  switch (language) {
    case "typescript":
    case "javascript":
      return tsRelative(from, spec, idx);
    case "python":
      return python(from, spec, idx);
    case "go":
      return go(spec, idx);
    case "rust":
      return rust(from, spec, idx);
    case "java":
      return java(spec, idx);
    default:
      return [];
  }
}
