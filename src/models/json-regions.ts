/**
 * Where in a reply a JSON value is written whole, so that repair may read it even when its brackets
 * and quotes do not balance: a fenced block's body, or lines from one that opens JSON to where prose
 * resumes (docs/run.md "Replies"). Linear: each line is looked at a bounded number of times.
 */

/** A stretch `[start, end)` of the reply that holds one JSON value, if it holds any. */
export interface Region {
  start: number;
  end: number;
  /** A fenced block's body: its end is certain, so it is read before anything inside it. */
  fenced: boolean;
}

/** An unquoted key (`name:`) or a JS/Python literal, as models write them inside JSON. */
const BARE_KEY = /^[A-Za-z_$][\w$]*\s*:/;
const LITERAL = /^(true|false|null|none|undefined|nan|infinity)\b/i;

/**
 * Does the bracket at `at` open JSON rather than prose ("a { and never closes it")? `{` followed by
 * a key (quoted or not) or `}`; `[` followed by a value.
 */
export function opensJson(text: string, at: number): boolean {
  let i = at + 1;
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  const rest = text.slice(i, i + 64);
  const c = rest[0];
  if (c === undefined) return true; // an opening at the very end: a value cut off
  if ("\"'\u201c\u2018`/".includes(c)) return true;
  if (text[at] === "{") return c === "}" || BARE_KEY.test(rest);
  return "{[]-.,".includes(c) || (c >= "0" && c <= "9") || LITERAL.test(rest);
}

/** A line that reads as prose: words with a space or a sentence's end, no JSON syntax, not a key or a literal. */
const isProse = (line: string) =>
  /^[A-Za-z]/.test(line) && /\s|[.!?]$/.test(line) && !/"\s*[:,]|[}\],"]$/.test(line) && !BARE_KEY.test(line) && !LITERAL.test(line);

/**
 * Where a value that starts at `from` ends at the latest: at a fence, or at a line that reads as
 * prose — "Hope this helps." after a value is not part of it.
 */
export function proseResumes(text: string, from: number): number {
  let at = text.indexOf("\n", from);
  while (at !== -1) {
    const next = text.indexOf("\n", at + 1);
    const line = text.slice(at + 1, next === -1 ? text.length : next).trim();
    if (line.startsWith("```") || isProse(line)) return at;
    at = next;
  }
  return text.length;
}

/** A fence's opening line: three backticks and an optional json-ish language. */
const FENCE_OPEN = /^[ \t]*```[ \t]*(?:json5?|jsonc)?[ \t]*$/i;

/**
 * Every region of `text` in order: fenced blocks whose body opens JSON, and, outside fences, runs of
 * lines from one that starts with an opening bracket (`{`, or `[` with `arrays`) to where prose
 * resumes. Regions never overlap.
 */
export function jsonRegions(text: string, arrays: boolean): Region[] {
  const regions: Region[] = [];
  const opens = (c: string | undefined) => c === "{" || (arrays && c === "[");
  let lineStart = 0;
  while (lineStart < text.length) {
    const nl = text.indexOf("\n", lineStart);
    const lineEnd = nl === -1 ? text.length : nl;
    const line = text.slice(lineStart, lineEnd);
    if (FENCE_OPEN.test(line)) {
      const bodyStart = lineEnd + 1;
      const close = text.indexOf("\n```", lineEnd);
      const bodyEnd = close === -1 ? text.length : close; // an unclosed fence: a reply cut off inside it
      const body = text.slice(bodyStart, bodyEnd);
      const first = body.search(/\S/);
      const at = bodyStart + first;
      if (first !== -1 && opens(body[first])) regions.push({ start: at, end: bodyEnd, fenced: true });
      const after = close === -1 ? -1 : text.indexOf("\n", close + 1);
      lineStart = after === -1 ? text.length : after + 1;
      continue;
    }
    const first = line.search(/\S/);
    const at = lineStart + first;
    // A line that starts with `{` is worth a repair; one that starts with `[` must open a value (not "[RFC 7231] says").
    if (first !== -1 && opens(line[first]) && (line[first] === "{" || opensJson(text, at))) {
      const end = proseResumes(text, at);
      regions.push({ start: at, end, fenced: false });
      lineStart = end + 1;
      continue;
    }
    lineStart = lineEnd + 1;
  }
  return regions;
}
