/** Text helpers: the loose comparison a model's "I quoted that" deserves, and JSON found inside text. */

/** Normalised for comparison, the way docs/run.md grounds evidence (quotes, dashes, emphasis, bullets, case, spaces). */
export function norm(text: string): string {
  return text
    .normalize("NFKC")
    .replace(/[\u2018\u2019\u201a\u201b\u2032]/g, "'")
    .replace(/[\u201c\u201d\u201e\u201f\u2033]/g, '"')
    .replace(/[\u2010-\u2015\u2212]/g, "-")
    .replace(/\u2026/g, "...")
    .replace(/^\s*[-*+]\s+/gm, "")
    .replace(/[*_`]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

/** Whether `needle` occurs in `hay`, normalised; a needle with `...` matches when its parts occur in order. */
export function contains(hay: string, needle: string): boolean {
  const h = norm(hay);
  const parts = norm(needle)
    .split("...")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (parts.length === 0) return false;
  let from = 0;
  for (const p of parts) {
    const at = h.indexOf(p, from);
    if (at === -1) return false;
    from = at + p.length;
  }
  return true;
}

/** Two concern texts say the same thing word for word (up to case, spacing and end punctuation). */
export function sameWords(a: string, b: string): boolean {
  const strip = (s: string) => norm(s).replace(/[.!?;:]+$/, "");
  return strip(a) === strip(b);
}

/** The JSON objects written inside a text (balanced `{…}` spans that parse), outermost first. */
export function jsonObjectsIn(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  while ((i = text.indexOf("{", i)) !== -1) {
    const end = balancedEnd(text, i);
    if (end !== -1) {
      const span = text.slice(i, end + 1);
      try {
        const v: unknown = JSON.parse(span);
        if (v && typeof v === "object" && !Array.isArray(v)) {
          out.push(span);
          i = end + 1;
          continue;
        }
      } catch {
        // not JSON: look further
      }
    }
    i += 1;
  }
  return out;
}

function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Parses JSON, or gives `undefined`. */
export function tryJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The first sentence of a text (up to 200 characters), or "". */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const m = /^(.{1,200}?[.!?])(\s|$)/.exec(flat);
  return m?.[1] ?? flat.slice(0, 200);
}
