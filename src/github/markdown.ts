/**
 * Small markdown helpers for what dissent writes on GitHub (the pull request's body, its reviews,
 * its check): text folded to one line, cut on a word boundary, and embedded documents kept under
 * the heading they are embedded at.
 */

/** Whitespace folded: one line. */
export const oneLine = (s: string): string => s.replace(/\s+/g, " ").trim();

/**
 * At most `max` characters, cut at the last word boundary before the limit (never mid-word, unless a
 * single word is longer than half of it) with an ellipsis; shorter text is returned as it is.
 */
export function cutAtWord(s: string, max: number): string {
  if (s.length <= max) return s;
  const room = s.slice(0, Math.max(1, max - 1));
  const at = room.search(/\s\S*$/);
  const cut = at >= max / 2 ? room.slice(0, at) : room;
  return `${cut.replace(/[\s,;:.—–-]+$/, "")}…`;
}

/** A quote for one line of prose: one line, cut on a word boundary. */
export const quoteLine = (s: string, max: number): string => cutAtWord(oneLine(s), max);

/**
 * Every ATX heading of an embedded document one level down (`## Steps` under `## Plan` becomes
 * `### Steps`; `######` stays), fenced code left alone — so a pasted plan never ends the section
 * it sits in, or opens a second `## Tests`.
 */
export function demoteHeadings(text: string): string {
  let fence: string | null = null;
  return text
    .split("\n")
    .map((line) => {
      const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
      if (f?.[1]) {
        if (fence === null) fence = f[1][0]?.repeat(f[1].length) ?? null;
        else if (f[1].startsWith(fence)) fence = null;
        return line;
      }
      if (fence !== null) return line;
      const h = /^(\s{0,3})(#{1,6})(\s|$)/.exec(line);
      if (!h) return line;
      const level = (h[2] ?? "").length;
      return level >= 6 ? line : `${h[1] ?? ""}#${line.slice((h[1] ?? "").length)}`;
    })
    .join("\n");
}

/** Text safe in one cell of a markdown table: one line, pipes escaped. */
export const cell = (s: string): string => oneLine(s).replace(/\|/g, "\\|");
