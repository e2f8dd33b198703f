/**
 * Grounding (CONTRACT §3 r2): is a quoted excerpt really in the text under review? Both sides are
 * normalised the same way first — Unicode NFKC, curly quotes straightened, dashes and minus signs
 * to `-`, `…` to `...`, markdown emphasis/code marks and line-start list bullets removed,
 * whitespace collapsed, case folded — so the near-verbatim quotes real models write still ground,
 * while a two-letter "quote" like "mg" does not (3 words at least, unless it is the whole text).
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

/** The least an excerpt must be, in words, to count as a quote (CONTRACT §3 r2). */
export const MIN_EVIDENCE_WORDS = 3;

/** A text prepared once for many grounding checks. */
export interface GroundingText {
  readonly normalized: string;
}

export function groundingText(text: string): GroundingText {
  return { normalized: normalize(text) };
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
  if (wordCount(parts.join(" ")) < MIN_EVIDENCE_WORDS && e !== whole) return { grounded: false, reason: "too_short" };
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
 * Do two grounded excerpts point at the same place (CONTRACT §4 r2 corroboration)? One contains
 * the other, or they share at least 12 characters of the normalised artifact.
 */
export function overlaps(a: [number, number], b: [number, number], minShared = 12): boolean {
  const contains = (x: [number, number], y: [number, number]) => x[0] <= y[0] && y[1] <= x[1];
  if (contains(a, b) || contains(b, a)) return true;
  return Math.min(a[1], b[1]) - Math.max(a[0], b[0]) >= minShared;
}
