/** Dollars as the page shows them: null is an unknown price (never shown as $0). */
export function usd(v: number | null | undefined): string {
  if (v === null || v === undefined) return "n/a";
  if (v === 0) return "$0";
  if (Math.abs(v) < 0.01) return `$${v.toFixed(4)}`;
  return `$${v.toFixed(2)}`;
}

/** A usage's dollars: the known part, marked when some calls had no known price. */
export function usageUsd(u: { known_usd: number; unpriced_calls: number }): string {
  return u.unpriced_calls > 0 ? `${u.known_usd > 0 ? `${usd(u.known_usd)} + ` : ""}${u.unpriced_calls} unpriced` : usd(u.known_usd);
}

export function count(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1000)}s`;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  const s = Math.round((Date.now() - d.getTime()) / 1000);
  if (s < 60) return `${Math.max(0, s)}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86_400) return `${Math.round(s / 3600)}h ago`;
  return d.toISOString().slice(0, 10);
}

export const short = (id: string) => (id.length > 12 ? id.slice(0, 8) : id);

/** The share of input tokens the provider's prompt cache served (docs/serve.md "Cost"), as a whole percentage. */
export function cachedShare(u: { input_tokens: number; cached_input_tokens: number }): string {
  return u.input_tokens > 0 ? `${Math.round((100 * u.cached_input_tokens) / u.input_tokens)}%` : "0%";
}
