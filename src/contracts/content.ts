/**
 * Whether a model's text says anything (issue 32, "weak models fail visibly"): a grammar-valid reply
 * of quote characters, or a plan that is one `"`, must never pass as an answer. The rules are
 * deliberately blunt — a weak model's empty output, not a strong model's short one.
 */

/** The fewest words an artifact or an acceptance criterion holds to be read as one (docs/issue.md). */
export const MIN_WORDS = 3;

/** Words: runs of letters or digits (any script), as a reader counts them. */
export function wordCount(text: string): number {
  return text.match(/[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu)?.length ?? 0;
}

/** Text with no letter at all, or one character repeated (blanks aside): nothing a reader could act on. */
export function isContentless(text: string): boolean {
  if (!/\p{L}/u.test(text)) return true;
  const chars = new Set(text.replace(/\s+/g, ""));
  return chars.size <= 1;
}
