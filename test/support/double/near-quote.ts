import type { Rng } from "./prng.js";

/**
 * Quotes a sentence the way models do when told to quote verbatim: nearly. Each variant is one a
 * grounding check that normalises as docs/run.md says must still accept.
 */
export function nearQuote(line: string, context: string, rng: Rng): string {
  const chars: ((s: string) => string)[] = [];
  if (/^[A-Za-z]/.test(line)) chars.push(flipCase);
  if (/['"\u2018\u2019\u201c\u201d]/.test(line)) chars.push(swapQuotes);
  if (/\w-\w|\s-\s|\u2013/.test(line)) chars.push(swapDashes);
  if (/\*\*[^*]+\*\*/.test(line)) chars.push(dropBold);
  const shapes: ((s: string) => string | undefined)[] = [];
  if (line.split(/\s+/).length >= 9) shapes.push(elide);
  const prev = previousBullet(line, context);
  if (prev !== undefined) shapes.push((s) => acrossBullet(prev, s));

  const variants = [...chars.map((f) => (s: string) => f(s)), ...shapes];
  if (variants.length === 0) return line;
  let out = rng.pick(variants)(line) ?? line;
  // Sometimes a second, character-level slip on top.
  if (chars.length > 0 && rng.chance(0.3)) out = rng.pick(chars)(out);
  return out;
}

function flipCase(s: string): string {
  const c = s.charAt(0);
  return (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + s.slice(1);
}

function swapQuotes(s: string): string {
  if (/[\u2018\u2019\u201c\u201d]/.test(s)) return s.replace(/[\u2018\u2019]/g, "'").replace(/[\u201c\u201d]/g, '"');
  let open = true;
  return s
    .replace(/(\w)'(\w)/g, "$1\u2019$2")
    .replace(/'/g, () => "\u2019")
    .replace(/"/g, () => {
      const q = open ? "\u201c" : "\u201d";
      open = !open;
      return q;
    });
}

function swapDashes(s: string): string {
  if (s.includes("\u2013")) return s.replace(/\u2013/g, "-");
  return s.replace(/(\w)-(\w)/g, "$1\u2013$2").replace(/\s-\s/g, " \u2013 ");
}

function dropBold(s: string): string {
  return s.replace(/\*\*([^*]+)\*\*/g, "$1");
}

function elide(s: string): string {
  const words = s.split(/\s+/);
  return `${words.slice(0, 4).join(" ")} \u2026 ${words.slice(-3).join(" ")}`;
}

/** The text of the bullet just before the line's own bullet, when the line is a bullet following another. */
function previousBullet(line: string, context: string): string | undefined {
  const lines = context.split("\n");
  const at = lines.findIndex((l) => l.startsWith("- ") && l.slice(2).startsWith(line));
  if (at <= 0) return undefined;
  const before = lines[at - 1];
  return before?.startsWith("- ") ? before.slice(2) : undefined;
}

function acrossBullet(prev: string, s: string): string | undefined {
  const tail = prev.split(/\s+/).slice(-4).join(" ");
  const head = s.split(/\s+/).slice(0, 6).join(" ");
  return `${tail}\n- ${head}`;
}
