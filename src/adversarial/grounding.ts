/**
 * Grounding (docs/run.md, "Grounding"): is a quoted excerpt really in the text under review? Both
 * sides are normalised the same way first — Unicode NFKC, curly quotes straightened, dashes and
 * minus signs to `-`, `…` to `...`, markdown emphasis/code marks and line-start list bullets
 * removed, whitespace collapsed, case folded — so the near-verbatim quotes real models write still
 * ground, while a two-letter "quote" like "mg" does not: 3 words at least, unless it is the whole
 * text, or a whole line or whole inline code span of at least 12 characters (`import requests`).
 */

const QUOTES: [RegExp, string][] = [
  [/[\u2018\u2019\u201A\u201B\u2032\u02BC]/g, "'"],
  [/[\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB]/g, '"'],
  [/[\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uFE58\uFE63\uFF0D]/g, "-"],
  [/\u2026/g, "..."],
];
const NON_ASCII = /[^\x00-\x7f]/;
const BULLET = /^[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]+/gm;
const MARKS = /[*_`]/g;

/** Normalises a text for grounding; the same function is applied to the draft and to the evidence. */
export function normalize(text: string): string {
  let s = text;
  // NFKC and the quote, dash and ellipsis folds change only non-ASCII characters: plain ASCII skips them.
  if (NON_ASCII.test(s)) {
    s = s.normalize("NFKC");
    for (const [re, to] of QUOTES) s = s.replace(re, to);
  }
  s = s.replace(BULLET, "").replace(MARKS, "");
  return s.replace(/\s+/g, " ").trim().toLowerCase();
}

/** Quote marks and trimming ellipses a model wraps around an excerpt are not part of it. */
const unwrap = (s: string) => s.replace(/^(?:["'`]|\.\.\.|\s)+|(?:["'`]|\.\.\.|\s)+$/g, "");

/** Words of a normalised excerpt: space-separated tokens, each CJK character counted as a word. */
function wordCount(s: string): number {
  let n = 0;
  for (const token of s.split(" ")) {
    if (!token || !/[\p{L}\p{N}]/u.test(token)) continue;
    const cjk = token.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu)?.length ?? 0;
    n += cjk > 1 ? cjk : 1;
  }
  return n;
}

/** The least an excerpt must be, in words, to count as a quote (docs/run.md). */
export const MIN_EVIDENCE_WORDS = 3;
/** The least a one- or two-word excerpt must be, in normalised characters, to ground as a whole line or code span (docs/run.md). */
export const MIN_SHORT_QUOTE_CHARS = 12;

/** A text prepared once for many grounding checks. */
export interface GroundingText {
  readonly normalized: string;
  /** Its whole lines and whole inline code spans, normalised: what a one- or two-word excerpt may be. Built on first need. */
  readonly units: () => ReadonlySet<string>;
}

/** A fence line of a fenced code block: its backticks open or close a block, not a code span. */
const FENCE_LINE = /^ {0,3}(?:`{3,}|~{3,})[^\n]*$/gm;
/** An inline code span: a run of backticks, then the first run of exactly as many (CommonMark). */
const CODE_SPAN = /(?<!`)(`+)(?!`)([\s\S]+?)(?<!`)\1(?!`)/g;

/** The normalised whole lines and inline code spans of a text that are long enough to be a short quote. */
function unitsOf(text: string): Set<string> {
  const units = new Set<string>();
  const add = (s: string) => {
    const n = normalize(s);
    if (n.length >= MIN_SHORT_QUOTE_CHARS) units.add(n);
  };
  for (const line of text.split(/\r?\n/)) add(line);
  for (const m of text.replace(FENCE_LINE, "").matchAll(CODE_SPAN)) add(m[2] ?? "");
  return units;
}

export function groundingText(text: string): GroundingText {
  let units: Set<string> | undefined;
  return { normalized: normalize(text), units: () => (units ??= unitsOf(text)) };
}

/**
 * May an excerpt of fewer than 3 words still ground? Only as one contiguous quote of at least 12
 * characters that is a whole line or a whole inline code span of the text: the faulty line of code
 * a real model quotes (`import requests`), never a fragment like "400 mg" or "the".
 */
function shortQuoteGrounds(text: GroundingText, e: string, parts: readonly string[]): boolean {
  return parts.length === 1 && e.length >= MIN_SHORT_QUOTE_CHARS && wordCount(e) > 0 && text.units().has(e);
}

/** Where an excerpt was found in the normalised text, or why it was not. */
export type Grounding = { grounded: true; span: [number, number] | null } | { grounded: false; reason: "empty" | "too_short" | "not_found" };

/**
 * Grounds one excerpt. Evidence with `...` inside matches when each part occurs in order. An
 * empty excerpt is `empty` (the caller decides whether that is allowed, as for missing_verification).
 */
export function ground(text: GroundingText, evidence: string): Grounding {
  const e = unwrap(normalize(evidence));
  if (e === "") return { grounded: false, reason: "empty" };
  const parts = e
    .split("...")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  const whole = text.normalized;
  if (wordCount(parts.join(" ")) < MIN_EVIDENCE_WORDS && e !== whole && !shortQuoteGrounds(text, e, parts)) return { grounded: false, reason: "too_short" };
  let from = 0;
  let start = -1;
  for (const part of parts) {
    const at = whole.indexOf(part, from);
    if (at === -1) return { grounded: false, reason: "not_found" };
    if (start === -1) start = at;
    from = at + part.length;
  }
  return { grounded: true, span: [start, from] };
}

/**
 * Do two grounded excerpts point at the same place (docs/issue.md corroboration)? One contains
 * the other, or they share at least 12 characters of the normalised artifact.
 */
export function overlaps(a: [number, number], b: [number, number], minShared = 12): boolean {
  const contains = (x: [number, number], y: [number, number]) => x[0] <= y[0] && y[1] <= x[1];
  if (contains(a, b) || contains(b, a)) return true;
  return Math.min(a[1], b[1]) - Math.max(a[0], b[0]) >= minShared;
}
