import type { ChartConfiguration } from "chart.js";
import { useMemo } from "preact/hooks";
import type { CostStats, ServedEvent, UsageRow } from "../../read-models/types.js";
import { ChartBox } from "../components/chart.js";
import { cachedShare, count, usageUsd } from "../format.js";
import { useData, useRendered } from "../live.js";
import { href } from "../route.js";

const isCall = (e: ServedEvent) => e.type === "ModelCall";
const COLORS = ["#3156d3", "#d9622b", "#0e8a4a", "#7a4cd9", "#b7891f", "#c2362b", "#2b8fb3", "#6b7788"];

function bars(rows: readonly UsageRow[], what: "usd" | "calls", horizontal: boolean): ChartConfiguration {
  return {
    type: "bar",
    data: {
      labels: rows.map((r) => r.key),
      datasets: [
        what === "usd"
          ? { label: "USD (priced calls)", data: rows.map((r) => r.known_usd), backgroundColor: COLORS[0] }
          : { label: "network calls", data: rows.map((r) => r.calls), backgroundColor: COLORS[3] },
      ],
    },
    options: { indexAxis: horizontal ? "y" : "x", plugins: { legend: { display: false } } },
  };
}

function tokens(rows: readonly UsageRow[]): ChartConfiguration {
  return {
    type: "bar",
    data: {
      labels: rows.map((r) => r.key),
      datasets: [
        // Input the provider's prompt cache served is billed at its cached rate: shown apart (docs/serve.md "Cost").
        { label: "input tokens", data: rows.map((r) => r.input_tokens - r.cached_input_tokens), backgroundColor: COLORS[6] },
        { label: "input tokens, prompt-cached", data: rows.map((r) => r.cached_input_tokens), backgroundColor: COLORS[2] },
        { label: "output tokens", data: rows.map((r) => r.output_tokens), backgroundColor: COLORS[1] },
      ],
    },
    options: { indexAxis: "y", scales: { x: { stacked: true }, y: { stacked: true } } },
  };
}

function byDay(rows: readonly UsageRow[], priced: boolean): ChartConfiguration {
  if (!priced)
    return {
      type: "bar",
      data: { labels: rows.map((r) => r.key), datasets: [{ label: "network calls", data: rows.map((r) => r.calls), backgroundColor: COLORS[1] }] },
    };
  return {
    type: "bar",
    data: {
      labels: rows.map((r) => r.key),
      datasets: [
        { type: "bar", label: "USD", data: rows.map((r) => r.known_usd), backgroundColor: COLORS[0], yAxisID: "usd" },
        { type: "line", label: "calls", data: rows.map((r) => r.calls), borderColor: COLORS[1], backgroundColor: COLORS[1], yAxisID: "calls" },
      ],
    },
    options: { scales: { usd: { type: "linear", position: "left" }, calls: { type: "linear", position: "right", grid: { drawOnChartArea: false } } } },
  };
}

function Table({ title, rows, link }: { title: string; rows: readonly UsageRow[]; link?: (key: string) => string }) {
  return (
    <div>
      <h3>{title}</h3>
      <table data-table={title}>
        <thead>
          <tr>
            <th />
            <th class="num">calls</th>
            <th class="num">cached</th>
            <th class="num">tokens in</th>
            <th class="num">prompt-cached</th>
            <th class="num">tokens out</th>
            <th class="num">USD</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key}>
              <td class="mono">{link ? <a href={link(r.key)}>{r.key}</a> : r.key}</td>
              <td class="num">{r.calls}</td>
              <td class="num">{r.cached_calls}</td>
              <td class="num">{count(r.input_tokens)}</td>
              <td class="num">{cachedShare(r)}</td>
              <td class="num">{count(r.output_tokens)}</td>
              <td class="num">{usageUsd(r)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Where the money went: calls, tokens and dollars by role, model and day. */
export function Costs() {
  const { data, error } = useData<CostStats>("/api/stats", isCall, 1000);
  useRendered("costs", data?.last_seq);
  // Dollar charts only when some call had a price: with none (local models without `prices:`) they
  // would draw an empty axis that reads as "$0" — an unknown price is never shown as zero.
  const priced = data ? data.totals.calls > data.totals.unpriced_calls : false;
  const charts = useMemo(
    () =>
      data
        ? {
            day: byDay(data.by_day, priced),
            role: bars(data.by_role, "usd", true),
            model: bars(data.by_model, "usd", true),
            callsByRole: bars(data.by_role, "calls", true),
            tokens: tokens(data.by_role),
          }
        : undefined,
    [data, priced],
  );
  if (error && !data) return <p class="error">{error}</p>;
  if (!data || !charts) return <p class="muted">Loading costs…</p>;
  const t = data.totals;
  return (
    <div>
      <h1>Costs</h1>
      <div class="totals">
        <div>
          <b>{usageUsd(t)}</b>
          <span class="muted">dollars (priced calls)</span>
        </div>
        <div>
          <b>{count(t.calls)}</b>
          <span class="muted">network calls</span>
        </div>
        <div>
          <b>{count(t.cached_calls)}</b>
          <span class="muted">from the cache (free)</span>
        </div>
        <div>
          <b>
            {count(t.input_tokens)} / {count(t.output_tokens)}
          </b>
          <span class="muted">tokens in / out</span>
        </div>
        <div>
          <b>{cachedShare(t)}</b>
          <span class="muted">of input from the provider's prompt cache</span>
        </div>
        <div>
          <b>{data.runs}</b>
          <span class="muted">audit runs</span>
        </div>
      </div>
      {t.unpriced_calls ? (
        <p class="muted">
          {t.unpriced_calls} network call(s) went to models with no known price (set prices: for a provider to count them; 0 for a local model). They are
          counted, never priced at $0.
        </p>
      ) : null}
      <div class="charts">
        <ChartBox key={priced ? "usd" : "calls"} label={priced ? "USD and calls by day (UTC)" : "Network calls by day (UTC)"} config={charts.day} />
        {priced ? <ChartBox label="USD by role" config={charts.role} /> : null}
        {priced ? <ChartBox label="USD by model" config={charts.model} /> : null}
        <ChartBox label="Network calls by role" config={charts.callsByRole} />
        <ChartBox label="Tokens by role" config={charts.tokens} />
      </div>
      <div class="grid2">
        <Table title="by role" rows={data.by_role} />
        <Table title="by model" rows={data.by_model} />
        <Table title="by day" rows={data.by_day} />
        <Table title="by issue (top 50)" rows={data.by_issue} link={(k) => href.issue(k)} />
      </div>
    </div>
  );
}
