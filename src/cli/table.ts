import type { Usage } from "../read-models/types.js";
import { terminalSafe } from "../terminal.js";

/** A plain left-aligned text table (no colours: output must read the same in a log file); cells are made terminal-safe. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const clean = rows.map((r) => r.map((c) => terminalSafe(c).replace(/\s+/g, " ")));
  const widths = headers.map((h, i) => Math.max(h.length, ...clean.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${[line(headers), ...clean.map(line)].join("\n")}\n`;
}

/**
 * Dollars as every CLI table shows them (docs/issue.md "Output"): what the network calls cost,
 * `$0.00 (cached)` when every call was served from the cache (free), `unpriced` when no call had a
 * known price, `$0.12 + 3 unpriced` when some had none — never `$0` for an unknown price.
 */
export function costText(u: Pick<Usage, "calls" | "cached_calls" | "known_usd" | "unpriced_calls">): string {
  const usd = (v: number) => `$${v > 0 && v < 0.01 ? v.toFixed(4) : v.toFixed(2)}`;
  if (u.calls === 0) return u.cached_calls > 0 ? `${usd(0)} (cached)` : usd(0);
  if (u.unpriced_calls === 0) return usd(u.known_usd);
  return u.unpriced_calls === u.calls ? "unpriced" : `${usd(u.known_usd)} + ${u.unpriced_calls} unpriced`;
}
