import type { CallRow, Usage } from "../../read-models/types.js";
import { cachedShare, count, duration, usd, usageUsd } from "../format.js";

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
            <td class="num">{c.cached ? "cached" : usd(c.cost_usd)}</td>
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

/** Calls, tokens and dollars in one line. */
export function UsageLine({ usage }: { usage: Usage }) {
  return (
    <span>
      {usage.calls} network call{usage.calls === 1 ? "" : "s"}
      {usage.cached_calls ? ` (+${usage.cached_calls} cached)` : ""} · {count(usage.input_tokens)} in
      {usage.cached_input_tokens ? ` (${cachedShare(usage)} from the provider's prompt cache)` : ""} / {count(usage.output_tokens)} out · {usageUsd(usage)}
      {usage.failed_calls ? ` · ${usage.failed_calls} failed` : ""}
    </span>
  );
}
