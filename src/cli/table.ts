import { safe } from "./io.js";

/** A plain left-aligned text table (no colours: output must read the same in a log file); cells are made terminal-safe. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const clean = rows.map((r) => r.map((c) => safe(c).replace(/\s+/g, " ")));
  const widths = headers.map((h, i) => Math.max(h.length, ...clean.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${[line(headers), ...clean.map(line)].join("\n")}\n`;
}
