import { ground, groundingText } from "../adversarial/grounding.js";
import { spansOf } from "./select.js";
import type { CodeContext } from "./types.js";

/**
 * Which chosen item of a code context a quote comes from, and its lines there (the grounding's own
 * normalisation, src/adversarial/grounding.ts): the first item the quote grounds in, narrowed to the
 * fewest lines that still hold it. Undefined when it is in none (made up, or from another block).
 */
export function locateQuote(ctx: CodeContext, evidence: string): { path: string; start_line: number; end_line: number } | undefined {
  for (const span of spansOf(ctx)) {
    const item = ctx.chosen[span.item];
    if (!item) continue;
    const lines = ctx.text.slice(span.from, span.to).split("\n");
    const holds = (a: number, b: number) => ground(groundingText(lines.slice(a, b + 1).join("\n")), evidence).grounded;
    if (!holds(0, lines.length - 1)) continue;
    let a = 0;
    let b = lines.length - 1;
    while (a < b && holds(a + 1, b)) a++;
    while (b > a && holds(a, b - 1)) b--;
    const from = span.lines[a] ?? 0;
    const to = span.lines[b] ?? from;
    // A map item's first line is its path (no line of the file): a quote of it names the file's first line.
    return { path: item.path, start_line: Math.max(1, from), end_line: Math.max(1, to) };
  }
  return undefined;
}
