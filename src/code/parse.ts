import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { gunzipSync } from "node:zlib";
import { dirname, join } from "node:path";
import type * as TreeSitter from "@vscode/tree-sitter-wasm";
import { packageRoot } from "../package-root.js";
import type { Definition, Extraction } from "./types.js";
import { type ParsedLanguage, QUERIES } from "./queries.js";

/**
 * tree-sitter through WebAssembly (ADR-032): the runtime and the grammars are the prebuilt files of
 * `@vscode/tree-sitter-wasm`, built together (one ABI) and copied into the package at build time
 * (scripts/postbuild.mjs; the grammars gzipped), loaded lazily — the runtime on the first parse,
 * each grammar and its query on the first file of its language — and once per process. Nothing is
 * compiled or downloaded.
 */

type Ts = typeof TreeSitter;
type TsNode = TreeSitter.Node;

/** The grammar file of each parsed language, in the package's wasm/ folder. */
const GRAMMAR: Record<ParsedLanguage, string> = {
  typescript: "tree-sitter-typescript.wasm",
  tsx: "tree-sitter-tsx.wasm",
  javascript: "tree-sitter-javascript.wasm",
  python: "tree-sitter-python.wasm",
  go: "tree-sitter-go.wasm",
  rust: "tree-sitter-rust.wasm",
  java: "tree-sitter-java.wasm",
};

interface Loaded {
  parser: TreeSitter.Parser;
  query: TreeSitter.Query;
}

let runtime: Promise<{ ts: Ts; dir: string; gz: boolean }> | undefined;
const languages = new Map<ParsedLanguage, Promise<Loaded>>();

/** Where the runtime and grammars are: the package's own copy (dist/vendor/tree-sitter, grammars gzipped), else the devDependency's. */
function locate(): { dir: string; runtime: string; gz: boolean } {
  const vendored = join(packageRoot(), "dist", "vendor", "tree-sitter");
  if (existsSync(join(vendored, "tree-sitter.cjs"))) return { dir: vendored, runtime: "tree-sitter.cjs", gz: true };
  return { dir: dirname(createRequire(import.meta.url).resolve("@vscode/tree-sitter-wasm")), runtime: "tree-sitter.js", gz: false };
}

/** The runtime, initialised once per process. */
function loadRuntime(): Promise<{ ts: Ts; dir: string; gz: boolean }> {
  runtime ??= (async () => {
    const { dir, runtime: file, gz } = locate();
    const ts = createRequire(import.meta.url)(join(dir, file)) as Ts;
    await ts.Parser.init({ locateFile: (file: string) => join(dir, file) });
    return { ts, dir, gz };
  })();
  runtime.catch(() => {
    runtime = undefined; // a failed load is tried again next time, never cached
  });
  return runtime;
}

/** A language's parser and compiled query, loaded on first need and kept. */
export function loadLanguage(lang: ParsedLanguage): Promise<Loaded> {
  let got = languages.get(lang);
  if (!got) {
    got = (async () => {
      const { ts, dir, gz } = await loadRuntime();
      const file = join(dir, GRAMMAR[lang]);
      const language = await ts.Language.load(gz ? new Uint8Array(gunzipSync(readFileSync(`${file}.gz`))) : file);
      const parser = new ts.Parser();
      parser.setLanguage(language);
      return { parser, query: new ts.Query(language, QUERIES[lang]) };
    })();
    languages.set(lang, got);
    got.catch(() => languages.delete(lang));
  }
  return got;
}

/** Containers whose name a member's `parent` is. */
const CONTAINERS = new Set([
  "class_declaration",
  "abstract_class_declaration",
  "class",
  "interface_declaration",
  "internal_module",
  "class_definition",
  "impl_item",
  "trait_item",
  "mod_item",
  "enum_declaration",
  "record_declaration",
  "type_spec",
]);
/** Wrappers a definition's excerpt extends to (an export, decorators, a one-spec Go declaration). */
const WRAPPERS = new Set(["export_statement", "decorated_definition", "type_declaration", "const_declaration", "var_declaration"]);
const COMMENTS = new Set(["comment", "line_comment", "block_comment"]);

const MAX_SIG = 200;
const MAX_DEFS = 5000;
const MAX_REF_LINES = 32;

/** A container's name (an impl's is its type's). */
function containerName(n: TsNode): string | undefined {
  const name = n.type === "impl_item" ? n.childForFieldName("type") : n.childForFieldName("name");
  return name?.text;
}

/** Where a definition's body starts (its signature ends there), or undefined when it has none. */
function bodyStart(n: TsNode): number | undefined {
  const body = n.childForFieldName("body");
  if (body) return body.startIndex;
  // `const f = (…) => …`: the declarator's value's body.
  for (const c of n.namedChildren) {
    if (c?.type !== "variable_declarator") continue;
    const b = c.childForFieldName("value")?.childForFieldName("body");
    if (b) return b.startIndex;
  }
  return undefined;
}

/** The signature shown in the map: the text up to the body, on one line, or the first line. */
function signatureOf(text: string, from: number, n: TsNode): string {
  const to = bodyStart(n);
  let s = to !== undefined && to > from && to - from < 2000 ? text.slice(from, to) : (text.slice(from, n.endIndex).split("\n")[0] ?? "");
  s = s.replace(/\s+/g, " ").trim();
  return s.length > MAX_SIG ? `${s.slice(0, MAX_SIG - 3)}...` : s;
}

/** The definition node's excerpt: widened to its export/decorator wrapper, then up over the comment right above it. */
function excerptRange(n: TsNode): { node: TsNode; startRow: number; endRow: number } {
  let node = n;
  while (
    node.parent &&
    WRAPPERS.has(node.parent.type) &&
    node.parent.namedChildren.filter((c) => c && !COMMENTS.has(c.type) && c.type !== "decorator").length === 1
  )
    node = node.parent;
  let startRow = node.startPosition.row;
  let prev = node.previousNamedSibling;
  while (prev && COMMENTS.has(prev.type) && prev.endPosition.row >= startRow - 1) {
    startRow = prev.startPosition.row;
    prev = prev.previousNamedSibling;
  }
  const endRow = node.endPosition.column === 0 && node.endPosition.row > node.startPosition.row ? node.endPosition.row - 1 : node.endPosition.row;
  return { node, startRow, endRow };
}

/** The kind a definition is: a function inside a class or an impl is a method. */
function kindOf(captured: string, n: TsNode): string {
  const kind = captured.slice("definition.".length);
  if (kind !== "function") return kind;
  for (let p = n.parent; p; p = p.parent) {
    if (p.type === "class_definition" || p.type === "impl_item" || p.type === "trait_item" || p.type === "class_body") return "method";
    if (p.type === "function_definition" || p.type === "function_item" || p.type === "function_declaration") return kind;
  }
  return kind;
}

/** The enclosing container's name. */
function parentOf(n: TsNode): string | undefined {
  for (let p = n.parent; p; p = p.parent) if (CONTAINERS.has(p.type)) return containerName(p);
  return undefined;
}

/**
 * Definitions, references and imports of one file, from its language's query. Bounded in time: a
 * parse or query past `parseMs` gives the file up (`timedOut`, mapped as plain text).
 */
export async function extract(lang: ParsedLanguage, text: string, parseMs: number): Promise<Extraction> {
  const { parser, query } = await loadLanguage(lang);
  const deadline = performance.now() + parseMs;
  let tree: TreeSitter.Tree | null = null;
  try {
    tree = parser.parse(text, null, { progressCallback: () => performance.now() > deadline });
  } catch {
    tree = null;
  }
  if (!tree) {
    parser.reset();
    return { defs: [], refs: [], imports: [], timedOut: true };
  }
  try {
    const micros = Math.max(1000, Math.round((deadline - performance.now()) * 1000));
    const matches = query.matches(tree.rootNode, { timeoutMicros: micros });
    if (performance.now() > deadline) return { defs: [], refs: [], imports: [], timedOut: true };
    const refs = new Map<string, { count: number; lines: number[] }>();
    const imports: string[] = [];
    const refNodes: TsNode[] = [];
    // One definition per name node: where two patterns match it (a `const` holding an arrow function), the more specific kind wins.
    const found = new Map<number, { def: TsNode; name: TsNode; kind: string }>();
    for (const m of matches) {
      let def: TsNode | undefined;
      let name: TsNode | undefined;
      let kind = "";
      for (const c of m.captures) {
        if (c.name === "name") name = c.node;
        else if (c.name.startsWith("definition.")) {
          def = c.node;
          kind = c.name;
        } else if (c.name === "reference") refNodes.push(c.node);
        else if (c.name === "import") imports.push(c.node.text.trim());
      }
      if (!def || !name) continue;
      const known = found.get(name.startIndex);
      if (known && known.kind !== "definition.constant") continue;
      if (!known && found.size >= MAX_DEFS) continue;
      found.set(name.startIndex, { def, name, kind });
    }
    const defs: Definition[] = [];
    for (const { def, name, kind } of found.values()) {
      // Rust's `mod name;` (no body) is an import of name.rs or name/mod.rs.
      if (lang === "rust" && def.type === "mod_item" && !def.childForFieldName("body")) imports.push(`mod ${name.text}`);
      const r = excerptRange(def);
      const parent = parentOf(def);
      defs.push({
        name: name.text,
        kind: kindOf(kind, def),
        start: r.startRow + 1,
        end: r.endRow + 1,
        line: name.startPosition.row + 1,
        sig: signatureOf(text, r.node.startIndex, def),
        ...(parent !== undefined && parent !== name.text ? { parent } : {}),
      });
    }
    for (const n of refNodes) {
      if (found.has(n.startIndex)) continue;
      const id = n.text;
      if (id.length < 2 || id.length > 100) continue;
      const r = refs.get(id) ?? { count: 0, lines: [] };
      r.count++;
      const line = n.startPosition.row + 1;
      if (r.lines.length < MAX_REF_LINES && r.lines[r.lines.length - 1] !== line) r.lines.push(line);
      refs.set(id, r);
    }
    defs.sort((a, b) => a.start - b.start || a.line - b.line || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const sortedRefs = [...refs]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([id, r]): [string, number, number[]] => [id, r.count, [...new Set(r.lines)].sort((x, y) => x - y)]);
    return { defs, refs: sortedRefs, imports: [...new Set(imports)].sort() };
  } finally {
    tree.delete();
  }
}
