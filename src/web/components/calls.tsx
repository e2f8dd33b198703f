import type { CallRow, Usage } from "../../read-models/types.js";
import { cachedShare, count, duration, estimateNote, usd, usageUsd } from "../format.js";

/** One table row per model call. */
export function CallsTable({ calls, showStage = false }: { calls: readonly CallRow[]; showStage?: boolean }) {
  return (
    <table class="calls">
      <thead>
        <tr>
          <th>role</th>
          {showStage ? <th>stage</th> : null}
          <th>model</th>
          <th>route</th>
          <th class="num">in</th>
          <th class="num">out</th>
          <th class="num">cost</th>
          <th class="num">latency</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {calls.map((c) => (
          <tr key={c.seq} data-call={c.seq}>
            <td>{c.role}</td>
            {showStage ? <td>{c.stage ? `${c.stage}${c.round !== undefined ? ` #${c.round}` : ""}` : ""}</td> : null}
            <td class="mono">
              {c.provider}:{c.model}
            </td>
            <td>{c.route}</td>
            <td class="num" title={c.cached_input_tokens ? `${count(c.cached_input_tokens)} from the provider's prompt cache` : undefined}>
              {count(c.input_tokens)}
            </td>
            <td class="num">{count(c.output_tokens)}</td>
            <td class="num" title={c.estimate ? `an estimate, at ${c.estimate.from}` : undefined}>
              {c.cached ? "cached" : c.cost_usd === null && c.estimate ? `≈${usd(c.estimate.usd)} est.` : usd(c.cost_usd)}
            </td>
            <td class="num">{duration(c.latency_ms)}</td>
            <td>
              {c.error ? (
                <span class="error" title={c.error}>
                  failed
                </span>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Calls, tokens and dollars in one line. Calls answered from the reply cache are free: they are
 * counted apart, with the tokens they had when first made (a run served from the cache says so,
 * rather than "0 in / 0 out · $0" above its calls' real figures).
 */
export function UsageLine({ usage }: { usage: Usage }) {
  const fromCache = usage.cached_calls ? (
    <span data-from-cache>
      {usage.cached_calls} call{usage.cached_calls === 1 ? "" : "s"} served from the reply cache ({count(usage.reply_cache_input_tokens)} in /{" "}
      {count(usage.reply_cache_output_tokens)} out when first made, free now)
    </span>
  ) : null;
  if (usage.calls === 0 && usage.cached_calls > 0)
    return (
      <span>
        no network call: {fromCache}
        {usage.failed_calls ? ` · ${usage.failed_calls} failed` : ""}
      </span>
    );
  return (
    <span>
      {usage.calls} network call{usage.calls === 1 ? "" : "s"} · {count(usage.input_tokens)} in
      {usage.cached_input_tokens ? ` (${cachedShare(usage)} from the provider's prompt cache)` : ""} / {count(usage.output_tokens)} out ·{" "}
      <span class="nowrap" title={estimateNote(usage)}>
        {usageUsd(usage)}
      </span>
      {fromCache ? <> · {fromCache}</> : null}
      {usage.failed_calls ? ` · ${usage.failed_calls} failed` : ""}
    </span>
  );
}
