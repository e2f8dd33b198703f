/** Dollars as the page shows them: null is an unknown price (never shown as $0). */
export function usd(v: number | null | undefined): string {
  if (v === null || v === undefined) return "n/a";
  if (v === 0) return "$0";
  if (Math.abs(v) < 0.01) return `$${v.toFixed(4)}`;
  return `$${v.toFixed(2)}`;
}

/** What a usage needs for its dollars. */
type Dollars = { known_usd: number; unpriced_calls: number; estimated_calls?: number; estimated_usd?: number; estimate_from?: readonly string[] };

/**
 * A usage's dollars: the known part, and for calls of unknown price their estimate, marked as one
 * (`≈ … est.`), or how many went unpriced when there is none. Never an unknown price as $0.
 */
export function usageUsd(u: Dollars): string {
  if (u.unpriced_calls === 0) return usd(u.known_usd);
  const known = u.known_usd > 0 ? `${usd(u.known_usd)} + ` : "";
  const estimated = u.estimated_calls ?? 0;
  if (estimated === u.unpriced_calls && u.estimated_usd !== undefined) return `${known}≈${usd(u.estimated_usd)} est.`;
  if (estimated > 0 && u.estimated_usd !== undefined) return `${known}≈${usd(u.estimated_usd)} est. + ${u.unpriced_calls - estimated} unpriced`;
  return `${known}${u.unpriced_calls} unpriced`;
}

/** The hover text of an estimate: that it is one, and from which price. */
export function estimateNote(u: Dollars): string | undefined {
  if (!u.estimated_calls) return undefined;
  return `An estimate for ${u.estimated_calls} call${u.estimated_calls === 1 ? "" : "s"} of unknown price, at ${(u.estimate_from ?? []).join("; ")}. Set prices: on the provider for the real figure.`;
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

/** The longest name a chart's axis draws whole (what fits beside a bar chart without being clipped at the canvas edge). */
export const LABEL_CHARS = 30;

/**
 * A name shortened to LABEL_CHARS for a chart's axis (the tooltip shows it whole): its last part
 * (after the last `.` or `:`, the role's own name) is kept whole when it fits, the start cut before
 * it — `discov….cheapest_test_advocate` — else the middle is cut.
 */
export function shortLabel(label: string): string {
  if (label.length <= LABEL_CHARS) return label;
  const cut = Math.max(label.lastIndexOf("."), label.lastIndexOf(":"));
  const tail = cut >= 0 ? label.slice(cut) : "";
  if (tail.length > 0 && tail.length <= LABEL_CHARS - 4) return `${label.slice(0, LABEL_CHARS - 1 - tail.length)}…${tail}`;
  return `${label.slice(0, 10)}…${label.slice(-(LABEL_CHARS - 11))}`;
}

/** A long name (a role, a model) broken only after its `.`, `:` and `_`, never inside a word. */
export function breakable(name: string): (string | { wbr: true })[] {
  return name.split(/(?<=[.:_])/).flatMap((part, i) => (i ? [{ wbr: true as const }, part] : [part]));
}
