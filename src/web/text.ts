import { diffLines, diffWordsWithSpace } from "diff";

/** A piece of a text: plain, or marked (a quoted excerpt, `n` the quote's number). */
export type Piece = { text: string; mark?: number };

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Curly quotes, dashes and markdown marks a model changes when it quotes: matched loosely, as grounding does (docs/run.md). */
const loose = (s: string) =>
  escapeRe(s.replace(/[*_`]/g, ""))
    .replace(/['\u2018\u2019]/g, "['\u2018\u2019]")
    .replace(/["\u201C\u201D]/g, '["\u201C\u201D]')
    .replace(/[-\u2013\u2014]/g, "[-\u2013\u2014]")
    .replace(/\s+/g, "[\\s*_`]+");

/** A quote as a model wraps it: the ellipses that trim it, and a pair of quote marks around it, are not part of it. */
function unwrap(quote: string): string {
  let q = quote
    .trim()
    .replace(/^(?:\.\.\.|…)\s*/, "")
    .replace(/\s*(?:\.\.\.|…)$/, "");
  if (/^["'`\u201C\u2018]/.test(q) && /["'`\u201D\u2019]$/.test(q)) q = q.slice(1, -1).trim();
  return q;
}

/**
 * Where quoted excerpts sit in a text: each excerpt (its `...`-separated parts in order) is looked
 * for case-insensitively, whitespace and markdown marks ignored; an excerpt that is not there marks
 * nothing. The pieces cover the whole text, in order.
 */
export function highlight(text: string, quotes: readonly string[]): Piece[] {
  const spans: { from: number; to: number; n: number }[] = [];
  quotes.forEach((q, n) => {
    let from = 0;
    for (const part of unwrap(q)
      .split(/\.\.\.|…/)
      .map((p) => p.trim())
      .filter((p) => p.length >= 3)) {
      const re = new RegExp(loose(part), "giu");
      re.lastIndex = from;
      const m = re.exec(text);
      if (!m) return;
      spans.push({ from: m.index, to: m.index + m[0].length, n });
      from = m.index + m[0].length;
    }
  });
  spans.sort((a, b) => a.from - b.from || b.to - a.to);
  const out: Piece[] = [];
  let at = 0;
  for (const s of spans) {
    if (s.from < at) continue; // overlapping quotes: the first one marks
    if (s.from > at) out.push({ text: text.slice(at, s.from) });
    out.push({ text: text.slice(s.from, s.to), mark: s.n });
    at = s.to;
  }
  if (at < text.length) out.push({ text: text.slice(at) });
  return out;
}

/** One line of a diff between two drafts: kept, added or removed (its changed words marked), or unchanged lines left out. */
export type DiffLine = { kind: "same" | "added" | "removed"; parts: { text: string; changed: boolean }[] } | { kind: "skipped"; lines: number };

const linesOf = (value: string) => value.replace(/\n$/, "").split("\n");

/** Changed words with only spaces between them read as one change: "[Sign in by email]", not "[Sign] [in] [by] [email]". */
function joinChanged(parts: { text: string; changed: boolean }[]): { text: string; changed: boolean }[] {
  const out: { text: string; changed: boolean }[] = [];
  parts.forEach((p, i) => {
    const gap = !p.changed && /^[ \t]+$/.test(p.text) && out.at(-1)?.changed === true && parts[i + 1]?.changed === true;
    const changed = p.changed || gap;
    const last = out.at(-1);
    if (last && last.changed === changed) last.text += p.text;
    else out.push({ text: p.text, changed });
  });
  return out;
}

/**
 * The line diff between two drafts (jsdiff), with `context` unchanged lines kept around each change
 * and the rest folded; where lines were replaced, the words that changed are marked.
 */
export function draftDiff(before: string, after: string, context = 2): DiffLine[] {
  // A last line is the same line whether or not a newline ends the text.
  const eol = (t: string) => (t.endsWith("\n") ? t : `${t}\n`);
  const changes = diffLines(eol(before), eol(after));
  const rows: DiffLine[] = [];
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i];
    if (!c) continue;
    const next = changes[i + 1];
    if (c.removed && next?.added) {
      // A replaced block: word-level marks on both sides.
      const words = diffWordsWithSpace(c.value, next.value);
      const side = (keep: (w: (typeof words)[number]) => boolean, changed: (w: (typeof words)[number]) => boolean) => {
        const lines: { text: string; changed: boolean }[][] = [[]];
        for (const w of words.filter(keep))
          w.value.split("\n").forEach((piece, k) => {
            if (k > 0) lines.push([]);
            if (piece) lines.at(-1)?.push({ text: piece, changed: changed(w) });
          });
        if (lines.length > 1 && (lines.at(-1)?.length ?? 0) === 0) lines.pop();
        return lines.map(joinChanged);
      };
      for (const parts of side(
        (w) => !w.added,
        (w) => Boolean(w.removed),
      ))
        rows.push({ kind: "removed", parts });
      for (const parts of side(
        (w) => !w.removed,
        (w) => Boolean(w.added),
      ))
        rows.push({ kind: "added", parts });
      i++;
      continue;
    }
    const kind = c.added ? "added" : c.removed ? "removed" : "same";
    for (const line of linesOf(c.value)) rows.push({ kind, parts: [{ text: line, changed: kind !== "same" }] });
  }
  // Fold the unchanged lines far from any change.
  const near = rows.map((r, i) => r.kind !== "same" || rows.slice(Math.max(0, i - context), i + context + 1).some((x) => x.kind !== "same"));
  const out: DiffLine[] = [];
  rows.forEach((r, i) => {
    const last = out.at(-1);
    if (near[i]) out.push(r);
    else if (last?.kind === "skipped") last.lines++;
    else out.push({ kind: "skipped", lines: 1 });
  });
  return out;
}
