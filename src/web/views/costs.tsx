import type { ChartConfiguration } from "chart.js";
import { useMemo } from "preact/hooks";
import type { CostStats, ServedEvent, UsageRow } from "../../read-models/types.js";
import { barsHeight, ChartBox } from "../components/chart.js";
import { breakable, cachedShare, count, estimateNote, shortLabel, usd, usageUsd } from "../format.js";
import { useData, useRendered } from "../live.js";
import { href } from "../route.js";

const isCall = (e: ServedEvent) => e.type === "ModelCall";
const COLORS = ["#3156d3", "#d9622b", "#0e8a4a", "#7a4cd9", "#b7891f", "#c2362b", "#2b8fb3", "#6b7788"];

/** An axis of names (roles, models): each label shortened to fit, never clipped at the canvas edge. */
function names(): { ticks: { callback: (this: { getLabelForValue(v: number): string }, v: number | string) => string; autoSkip: false } } {
  return {
    ticks: {
      autoSkip: false,
      callback(v) {
        return shortLabel(this.getLabelForValue(Number(v)));
      },
    },
  };
}

/** Estimated dollars of calls of unknown price, drawn beside the priced ones in a paler colour and named as estimates. */
const ESTIMATED = "#9fb2ec";

function bars(rows: readonly UsageRow[], what: "usd" | "calls", horizontal: boolean, estimated = false): ChartConfiguration {
  const usd = [
    { label: "USD (priced calls)", data: rows.map((r) => r.known_usd), backgroundColor: COLORS[0] },
    ...(estimated ? [{ label: "≈ USD estimated (unpriced calls)", data: rows.map((r) => r.estimated_usd), backgroundColor: ESTIMATED }] : []),
  ];
  return {
    type: "bar",
    data: {
      labels: rows.map((r) => r.key),
      datasets: what === "usd" ? usd : [{ label: "network calls", data: rows.map((r) => r.calls), backgroundColor: COLORS[3] }],
    },
    options: {
      indexAxis: horizontal ? "y" : "x",
      plugins: { legend: { display: what === "usd" && estimated } },
      scales: horizontal ? { y: { ...names(), stacked: true }, x: { stacked: true } } : { x: { ...names(), stacked: true }, y: { stacked: true } },
    },
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
    options: { indexAxis: "y", scales: { x: { stacked: true }, y: { ...names(), stacked: true } } },
  };
}

function byDay(rows: readonly UsageRow[], priced: boolean, estimated = false): ChartConfiguration {
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
        { type: "bar", label: "USD", data: rows.map((r) => r.known_usd), backgroundColor: COLORS[0], yAxisID: "usd", stack: "usd" },
        ...(estimated
          ? [
              {
                type: "bar" as const,
                label: "≈ USD estimated",
                data: rows.map((r) => r.estimated_usd),
                backgroundColor: ESTIMATED,
                yAxisID: "usd",
                stack: "usd",
              },
            ]
          : []),
        { type: "line", label: "calls", data: rows.map((r) => r.calls), borderColor: COLORS[1], backgroundColor: COLORS[1], yAxisID: "calls" },
      ],
    },
    options: {
      scales: { usd: { type: "linear", position: "left", stacked: true }, calls: { type: "linear", position: "right", grid: { drawOnChartArea: false } } },
    },
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
              <td class="mono key">
                {link ? <a href={link(r.key)}>{r.key}</a> : breakable(r.key).map((p, i) => (typeof p === "string" ? p : <wbr key={i} />))}
              </td>
              <td class="num">{r.calls}</td>
              <td class="num">{r.cached_calls}</td>
              <td class="num">{count(r.input_tokens)}</td>
              <td class="num">{cachedShare(r)}</td>
              <td class="num">{count(r.output_tokens)}</td>
              <td class="num" title={estimateNote(r)}>
                {usageUsd(r)}
              </td>
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
  // Estimates of unpriced calls are drawn too, paler and named as estimates (never as a bill).
  const estimated = data ? data.totals.estimated_calls > 0 : false;
  const known = data ? data.totals.calls > data.totals.unpriced_calls : false;
  const priced = known || estimated;
  // With no known price at all, the dollar charts are estimates, and named so.
  const usdTitle = (what: string) => (known ? `USD ${what}` : `≈ USD ${what} (estimated)`);
  const charts = useMemo(
    () =>
      data
        ? {
            day: byDay(data.by_day, priced, estimated),
            role: bars(data.by_role, "usd", true, estimated),
            model: bars(data.by_model, "usd", true, estimated),
            callsByRole: bars(data.by_role, "calls", true),
            tokens: tokens(data.by_role),
          }
        : undefined,
    [data, priced, estimated],
  );
  if (error && !data) return <p class="error">{error}</p>;
  if (!data || !charts) return <p class="muted">Loading costs…</p>;
  const t = data.totals;
  return (
    <div>
      <h1>Costs</h1>
      <div class="totals">
        <div title={estimateNote(t)}>
          <b class="nowrap">{usageUsd(t)}</b>
          <span class="muted">{t.estimated_calls ? "dollars (≈ an estimate for unpriced calls)" : "dollars (priced calls)"}</span>
        </div>
        <div>
          <b>{count(t.calls)}</b>
          <span class="muted">network calls</span>
        </div>
        <div>
          <b>{count(t.cached_calls)}</b>
          <span class="muted">from the reply cache (free)</span>
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
        <p class="muted" data-unpriced>
          {t.unpriced_calls} network call(s) went to models with no known price: they are counted, never priced at $0.
          {t.estimated_calls
            ? ` ${t.estimated_calls === t.unpriced_calls ? "Their" : `${t.estimated_calls} of them have an`} estimate from their tokens: ≈${usd(t.estimated_usd)}, at ${t.estimate_from.join("; ")} — an estimate, not what they cost.`
            : ""}{" "}
          Set prices: on a provider for the real figure (0 for a local model); serve.estimate_at picks the price estimates use.
        </p>
      ) : null}
      <div class="charts">
        <ChartBox
          key={priced ? "usd" : "calls"}
          label={known ? "USD and calls by day (UTC)" : estimated ? "≈ USD (estimated) and calls by day (UTC)" : "Network calls by day (UTC)"}
          config={charts.day}
        />
        {priced ? <ChartBox label={usdTitle("by role")} config={charts.role} height={barsHeight(data.by_role.length)} /> : null}
        {priced ? <ChartBox label={usdTitle("by model")} config={charts.model} height={barsHeight(data.by_model.length)} /> : null}
        <ChartBox label="Network calls by role" config={charts.callsByRole} height={barsHeight(data.by_role.length)} />
        <ChartBox label="Tokens by role" config={charts.tokens} height={barsHeight(data.by_role.length)} />
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
