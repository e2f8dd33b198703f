// Apart from read.ts (node:fs), so code the browser bundle type-checks can name a limit too.
/** 1048576 → "1 MiB", 262144 → "256 KiB": limits as the docs write them (docs/limits.md). */
export function formatLimit(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
