import { extractSeeds } from "./seeds.js";
import { assemble, type Candidate, candidatesFor, defChunk, render, withSpans } from "./select.js";
import { charsFor } from "./tokens.js";
import type { CodeContext, Definition, RepoFile, RepoMap, Seeds } from "./types.js";

/** Names defined in more files than this are too common to find callers by. */
const MAX_DEFINERS = 5;

/** The lines a unified diff changes, by path (new side: added lines, and where lines were removed). */
export function changedLines(diff: string, side: "new" | "old" = "new"): Map<string, number[]> {
  const out = new Map<string, number[]>();
  let path: string | undefined;
  let oldPath: string | undefined;
  let line = 0;
  let inHunk = false;
  const mark = (p: string | undefined, n: number) => {
    if (!p) return;
    const list = out.get(p) ?? [];
    if (list[list.length - 1] !== n) list.push(n);
    out.set(p, list);
  };
  for (const raw of diff.split("\n")) {
    if (raw.startsWith("diff --git ")) {
      inHunk = false;
      path = undefined;
      oldPath = undefined;
      continue;
    }
    if (!inHunk && raw.startsWith("--- ")) {
      const p = raw.slice(4).trim();
      oldPath = p === "/dev/null" ? undefined : p.replace(/^a\//, "");
      continue;
    }
    if (!inHunk && raw.startsWith("+++ ")) {
      const p = raw.slice(4).trim();
      path = p === "/dev/null" ? undefined : p.replace(/^b\//, "");
      continue;
    }
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(raw);
    if (h) {
      inHunk = true;
      line = Number(side === "new" ? h[2] : h[1]);
      continue;
    }
    if (!inHunk) continue;
    const target = side === "new" ? path : oldPath;
    if (raw.startsWith("+")) {
      if (side === "new") mark(target, line++);
    } else if (raw.startsWith("-")) {
      if (side === "old") mark(target, line++);
      else mark(target, line);
    } else if (raw.startsWith(" ") || raw === "") line++;
    else if (raw.startsWith("\\")) {
      // "\ No newline at end of file"
    } else inHunk = false;
  }
  for (const [p, list] of out)
    out.set(
      p,
      [...new Set(list)].sort((a, b) => a - b),
    );
  return out;
}

/** The innermost definition of a file holding a line. */
function innermost(f: RepoFile, line: number): Definition | undefined {
  let best: Definition | undefined;
  for (const d of f.defs) if (d.start <= line && line <= d.end && (!best || d.end - d.start < best.end - best.start)) best = d;
  return best;
}

/**
 * The code around a diff (docs/implement.md): the definitions it changes, whole, and the definitions
 * elsewhere that use them (their callers), under `budgetTokens`; with `texts` (the plan), what they
 * name fills what is left. `map` is the repository of the diff's new side (`side: "old"` for the base).
 */
export function diffContext(map: RepoMap, diff: string, opts: { budgetTokens: number; texts?: readonly string[]; side?: "new" | "old" }): CodeContext {
  const index = map.index;
  const changed = changedLines(diff, opts.side ?? "new");
  const candidates: Candidate[] = [];
  const names = new Set<string>();
  const paths = new Set<string>();
  for (const [path, lines] of [...changed].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const f = index.byPath.get(path);
    if (!f) continue;
    paths.add(path);
    const defs = new Set<Definition>();
    for (const l of lines) {
      const d = innermost(f, l);
      if (d) defs.add(d);
    }
    for (const d of defs) {
      const chunk = defChunk(index, path, d);
      if (!chunk) continue;
      names.add(d.name);
      candidates.push({
        chunk,
        score: 10,
        terms: new Set([d.name]),
        why: [`changed by the diff (\`${d.name}\`)`],
        focus: lines.find((l) => l >= d.start && l <= d.end) ?? d.start,
      });
    }
  }
  // Callers: definitions that use a changed name, in files that do not define it themselves.
  const definers = new Map<string, number>();
  for (const f of index.files) for (const d of f.defs) if (names.has(d.name)) definers.set(d.name, (definers.get(d.name) ?? 0) + 1);
  for (const f of index.files) {
    for (const name of names) {
      if ((definers.get(name) ?? 0) > MAX_DEFINERS || name.length < 3) continue;
      const use = f.refs.get(name);
      if (!use) continue;
      const seen = new Set<Definition>();
      for (const l of use.lines) {
        const d = innermost(f, l);
        if (!d || seen.has(d) || d.name === name) continue;
        seen.add(d);
        const chunk = defChunk(index, f.path, d);
        if (chunk)
          candidates.push({
            chunk,
            score: 5 + Math.min(use.count, 5) / 10,
            terms: new Set([name]),
            why: [`calls \`${name}\`, which the diff changes`],
            focus: l,
          });
      }
    }
  }
  candidates.sort((a, b) => b.score - a.score || (a.chunk.path < b.chunk.path ? -1 : a.chunk.path > b.chunk.path ? 1 : 0) || a.chunk.start - b.chunk.start);
  let seeds: Seeds = { paths: [...paths].sort(), identifiers: [...names].sort(), terms: [], locations: [] };
  if (opts.texts?.length) {
    const { messages: _m, ...named } = extractSeeds(index, opts.texts);
    seeds = {
      paths: [...new Set([...seeds.paths, ...named.paths])].sort(),
      identifiers: [...new Set([...seeds.identifiers, ...named.identifiers])].sort(),
      terms: named.terms,
      locations: named.locations,
    };
    for (const c of candidatesFor(map, seeds)) candidates.push({ ...c, score: Math.min(c.score, 4.9) });
  }
  const budget = charsFor(opts.budgetTokens);
  return withSpans(render(seeds, undefined, assemble(candidates, budget), budget));
}
