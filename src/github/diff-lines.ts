import { normalize } from "../adversarial/grounding.js";

/**
 * Where on a pull request's diff a finding's quote is (docs/implement.md "Reviews on the pull
 * request"): the unified diff read into its files and hunks, each line with its number on the side
 * GitHub comments on — RIGHT (the new file: added and context lines), LEFT (the old file: removed
 * lines) — and a quote matched to the lines it covers, normalised as grounding normalises it.
 */

/** One line of a hunk a review comment may be on. */
export interface DiffLine {
  side: "RIGHT" | "LEFT";
  /** The line's number in the new file (RIGHT) or the old one (LEFT). */
  line: number;
  kind: "added" | "removed" | "context";
  /** The line as written, without its diff marker. */
  text: string;
}

/** One file of the diff: its path (the new one; the old one for a deleted file) and its hunks. */
export interface DiffFile {
  path: string;
  hunks: DiffLine[][];
}

/** Where a comment goes: the file, its last line and side, and the first line when the quote spans several of one hunk. */
export interface DiffAnchor {
  path: string;
  line: number;
  side: "RIGHT" | "LEFT";
  startLine?: number;
}

/** The most lines of a diff read (a diff the review shows is bounded already: docs/limits.md). */
const MAX_LINES = 200_000;

const unquote = (p: string) => (p.startsWith('"') && p.endsWith('"') ? p.slice(1, -1).replace(/\\(.)/g, "$1") : p);

/** The files and hunks of a unified diff (`git diff`'s output): binary files and renames' headers carry no lines. */
export function parseDiff(diff: string): DiffFile[] {
  const files: DiffFile[] = [];
  let file: DiffFile | undefined;
  let oldPath = "";
  let hunk: DiffLine[] | undefined;
  let oldNo = 0;
  let newNo = 0;
  const lines = diff.split("\n", MAX_LINES);
  for (const raw of lines) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.startsWith("diff --git ")) {
      file = undefined;
      hunk = undefined;
      continue;
    }
    if (line.startsWith("--- ") && !hunk) {
      oldPath = unquote(line.slice(4)).replace(/^a\//, "");
      continue;
    }
    if (line.startsWith("+++ ") && !hunk) {
      const newPath = unquote(line.slice(4)).replace(/^b\//, "");
      file = { path: newPath === "/dev/null" ? oldPath : newPath, hunks: [] };
      files.push(file);
      continue;
    }
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (h && file) {
      oldNo = Number(h[1]);
      newNo = Number(h[2]);
      hunk = [];
      file.hunks.push(hunk);
      continue;
    }
    if (!hunk) continue;
    const mark = line[0];
    if (mark === "+") hunk.push({ side: "RIGHT", line: newNo++, kind: "added", text: line.slice(1) });
    else if (mark === "-") hunk.push({ side: "LEFT", line: oldNo++, kind: "removed", text: line.slice(1) });
    else if (mark === " " || line === "") {
      hunk.push({ side: "RIGHT", line: newNo++, kind: "context", text: line.slice(1) });
      oldNo++;
    } else if (mark === "\\") {
      // "\ No newline at end of file"
    } else hunk = undefined; // the next file's header
  }
  return files;
}

/** The least a quote must be, normalised, to be placed: shorter ones ("}", "x") are on too many lines. */
const MIN_QUOTE_CHARS = 6;

/** The quote as lines of code: markers a model kept ("+  return a;") and wrapping quote marks or ellipses dropped. */
function quoteParts(quote: string): string[][] {
  const clean = (s: string) => normalize(s).replace(/^(?:["'`]|\.\.\.)+|(?:["'`]|\.\.\.)+$/g, "");
  const asIs = quote.split("\n").map((l) => l.replace(/\s+$/, ""));
  const unmarked = asIs.map((l) => l.replace(/^[+-](?=[\s\S])/, ""));
  return [asIs, unmarked].map((ls) => ls.map(clean).filter((l) => l.length > 0));
}

/**
 * The lines a quote covers, on one side of one hunk: its lines matched in order to consecutive diff
 * lines (each quoted line inside its diff line, the first and last as a tail and a head, the middle
 * ones whole), added and removed lines preferred to context. Undefined when no hunk holds it (a quote
 * of the test output, or a paraphrase): the finding then goes in the review's body.
 */
export function locateQuote(files: readonly DiffFile[], quote: string): DiffAnchor | undefined {
  let best: { anchor: DiffAnchor; score: number } | undefined;
  for (const parts of quoteParts(quote)) {
    if (!parts.length || parts.join(" ").length < MIN_QUOTE_CHARS) continue;
    for (const file of files) {
      for (const hunk of file.hunks) {
        for (const side of ["RIGHT", "LEFT"] as const) {
          const lines = hunk.filter((l) => l.side === side).map((l) => ({ ...l, n: normalize(l.text) }));
          for (let i = 0; i + parts.length <= lines.length; i++) {
            const span = lines.slice(i, i + parts.length);
            // Consecutive on their side: no gap in the numbering.
            if (span.some((l, k) => k > 0 && l.line !== (span[k - 1]?.line ?? 0) + 1)) continue;
            const fits = parts.every((p, k) => {
              const n = span[k]?.n ?? "";
              if (parts.length === 1) return n.includes(p);
              if (k === 0) return n.endsWith(p);
              if (k === parts.length - 1) return n.startsWith(p);
              return n === p;
            });
            if (!fits) continue;
            const changed = span.filter((l) => l.kind !== "context").length;
            const score = changed * 10 + (side === "RIGHT" ? 1 : 0);
            if (best && best.score >= score) continue;
            const first = span[0] as DiffLine;
            const last = span.at(-1) as DiffLine;
            best = { anchor: { path: file.path, line: last.line, side, ...(span.length > 1 ? { startLine: first.line } : {}) }, score };
          }
        }
      }
    }
    if (best) return best.anchor;
  }
  return best?.anchor;
}
