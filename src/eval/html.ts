import { existsSync, readFileSync } from "node:fs";
import { AUDIT_CATEGORIES } from "../contracts/audit.js";
import { RunError } from "../errors.js";
import { packagePath } from "../package-root.js";
import { GATE_RATES } from "./gate-metrics.js";
import { PIPELINE_RATES } from "./pipeline-metrics.js";
import type { EvalReport, GateReport, PipelineReport } from "./report.js";
import type { Estimate } from "./stats.js";

/**
 * The `--html` report: one self-contained page (docs/eval.md) — the numbers as static tables, and
 * the charts drawn by Chart.js, inlined from the copy vendored into the package at build time. No
 * request leaves the page: its Content-Security-Policy forbids every fetch.
 */

/** Where the vendored Chart.js may be: beside the built code, or (running from source) the build or the dev dependency. */
const CHART_JS = [
  ["dist", "vendor", "chart.umd.min.js"],
  ["node_modules", "chart.js", "dist", "chart.umd.min.js"],
];

/** The Chart.js bundle the page inlines. */
export function chartJsSource(): string {
  for (const rel of CHART_JS) {
    const path = packagePath(...rel);
    if (existsSync(path)) return readFileSync(path, "utf8");
  }
  throw new RunError("Chart.js is missing from this build (dist/vendor/chart.umd.min.js): rebuild with npm run build");
}

/** A rate or count as every table of the reports prints it: three decimals; "–" for nothing measured. */
export function formatValue(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  return Number.isInteger(v) ? String(v) : v.toFixed(3);
}

/** An interval as printed: "[0.714, 0.883]". */
export const formatCi = (ci: [number, number] | null) => (ci ? `[${formatValue(ci[0])}, ${formatValue(ci[1])}]` : "–");

/** Money as printed: "$0.0123", "unknown" for null. */
export const formatUsd = (v: number | null) => (v === null ? "unknown" : `$${v < 1 ? v.toFixed(4) : v.toFixed(2)}`);

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);
/** JSON inside a <script> element: `<` escaped, so no text of the report can close the element. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, "\\u003c");
/** A script's source inside a <script> element. */
const scriptSource = (s: string) => s.replace(/<\/(script)/gi, "<\\/$1").replace(/<!--/g, "<\\!--");

/** One chart of the page: the canvas id, its caption, and a Chart.js config (plain JSON: no callbacks). */
export interface ChartSpec {
  id: string;
  title: string;
  note?: string;
  config: Record<string, unknown>;
}

const COLORS = { blue: "#2f6fb0", orange: "#e07b28", green: "#3a9a5b", red: "#c8423b", grey: "#9aa3ad", purple: "#7b5ea7", teal: "#2a9d9a" };

const base = (extra: Record<string, unknown> = {}) => ({
  animation: false,
  responsive: true,
  maintainAspectRatio: false,
  plugins: { legend: { position: "bottom" } },
  ...extra,
});
const unitScale = { y: { min: 0, max: 1, ticks: { stepSize: 0.2 } } };

function gateCharts(r: GateReport): ChartSpec[] {
  const m = r.metrics;
  const cats = AUDIT_CATEGORIES.filter((c) => (m.per_category[c]?.defects ?? 0) > 0 || (m.per_category[c]?.concerns ?? 0) > 0);
  const conf = m.verdict_confusion;
  const grounded = r.items.reduce((n, o) => n + o.concerns.length, 0);
  const near = r.items.reduce((n, o) => n + o.ungrounded.filter((u) => u.near).length, 0);
  const short = r.items.reduce((n, o) => n + o.ungrounded.filter((u) => u.reason !== "not_found").length, 0);
  const far = r.items.reduce((n, o) => n + o.ungrounded.filter((u) => u.reason === "not_found" && !u.near).length, 0);
  const invalid = r.items.reduce((n, o) => n + o.invalid, 0);
  const roles = [...new Set(r.items.flatMap((o) => o.calls.map((c) => c.role)))];
  const roleCalls = (role: string) => r.items.flatMap((o) => o.calls.filter((c) => c.role === role));
  const tokens = (role: string, k: "input_tokens" | "output_tokens") => roleCalls(role).reduce((s, c) => s + c[k], 0);
  const priced = r.items.some((o) => o.calls.some((c) => typeof c.cost_usd === "number" && c.cost_usd > 0));
  const spent = (role: string) => Math.round(roleCalls(role).reduce((s, c) => s + (c.cost_usd ?? 0), 0) * 1e6) / 1e6;
  return [
    {
      id: "chart-categories",
      title: "Recall and precision by category",
      note: "A concern finds a planted defect when its quote overlaps the defect's and its category matches (leniently).",
      config: {
        type: "bar",
        data: {
          labels: cats,
          datasets: [
            { label: "recall", data: cats.map((c) => m.per_category[c]?.recall.value ?? null), backgroundColor: COLORS.blue },
            { label: "precision", data: cats.map((c) => m.per_category[c]?.precision.value ?? null), backgroundColor: COLORS.orange },
          ],
        },
        options: base({ scales: unitScale }),
      },
    },
    {
      id: "chart-confusion",
      title: "Verdict confusion",
      note: "Expected verdict (x) against the gate's verdict; failed: the challenger gave none.",
      config: {
        type: "bar",
        data: {
          labels: ["expected pass", "expected needs_work"],
          datasets: [
            { label: "said pass", data: [conf.pass.pass, conf.needs_work.pass], backgroundColor: COLORS.green },
            { label: "said needs_work", data: [conf.pass.needs_work, conf.needs_work.needs_work], backgroundColor: COLORS.red },
            { label: "failed", data: [conf.pass.failed, conf.needs_work.failed], backgroundColor: COLORS.grey },
          ],
        },
        options: base({ scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } }),
      },
    },
    {
      id: "chart-false-revisions",
      title: "Clean drafts: passed or revised",
      note: `False-revision rate ${formatValue(m.false_revision_rate.value)} ${formatCi(m.false_revision_rate.ci)} over ${m.clean_items} clean drafts.`,
      config: {
        type: "doughnut",
        data: {
          labels: ["passed (right)", "revised (false revision)", "challenger failed"],
          datasets: [{ data: [conf.pass.pass, conf.pass.needs_work, conf.pass.failed], backgroundColor: [COLORS.green, COLORS.red, COLORS.grey] }],
        },
        options: base(),
      },
    },
    {
      id: "chart-grounding",
      title: "Grounding of the concerns raised",
      note: `Grounding loss ${formatValue(m.grounding_loss.value)} ${formatCi(m.grounding_loss.ci)}: dropped as ungrounded, yet nearly in the draft.`,
      config: {
        type: "doughnut",
        data: {
          labels: ["grounded", "lost (nearly in the draft)", "not in the draft", "too short or empty", "invalid (schema)"],
          datasets: [{ data: [grounded, near, far, short, invalid], backgroundColor: [COLORS.green, COLORS.red, COLORS.orange, COLORS.purple, COLORS.grey] }],
        },
        options: base(),
      },
    },
    {
      id: "chart-cost",
      title: "Tokens and cost by role",
      note: `${m.usage.calls} calls (${m.usage.network_calls} over the network, ${m.usage.cached_calls} from the cache); spent ${formatUsd(m.usage.cost_usd)}, ${formatUsd(m.usage.model_cost_usd)} at the models' prices.`,
      config: {
        type: "bar",
        data: {
          labels: roles,
          datasets: [
            { label: "input tokens", data: roles.map((x) => tokens(x, "input_tokens")), backgroundColor: COLORS.teal, yAxisID: "y" },
            { label: "output tokens", data: roles.map((x) => tokens(x, "output_tokens")), backgroundColor: COLORS.purple, yAxisID: "y" },
            ...(priced ? [{ label: "USD spent", data: roles.map(spent), backgroundColor: COLORS.orange, yAxisID: "usd" }] : []),
          ],
        },
        options: base({
          scales: {
            y: { beginAtZero: true, title: { display: true, text: "tokens" } },
            ...(priced ? { usd: { beginAtZero: true, position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "USD" } } } : {}),
          },
        }),
      },
    },
  ];
}

function pipelineCharts(r: PipelineReport): ChartSpec[] {
  const m = r.metrics;
  const stages = Object.keys(m.stages);
  const outcomes = ["converged", "exhausted", "oscillation", "budget", "crashed"];
  const palette = [COLORS.green, COLORS.orange, COLORS.purple, COLORS.grey, COLORS.red];
  const cov = (list: PipelineReport["items"][number]["plan_checklist"]) => {
    const judged = list.filter((c) => c.covered !== null);
    return judged.length ? judged.filter((c) => c.covered).length / judged.length : null;
  };
  const clean = r.items.filter((o) => o.clean);
  return [
    {
      id: "chart-status",
      title: "Status mix",
      config: {
        type: "doughnut",
        data: {
          labels: ["ready", "needs_replan", "hitl", "failed"],
          datasets: [
            {
              data: [m.status.ready, m.status.needs_replan, m.status.hitl, m.status.failed],
              backgroundColor: [COLORS.green, COLORS.orange, COLORS.purple, COLORS.grey],
            },
          ],
        },
        options: base(),
      },
    },
    {
      id: "chart-coverage",
      title: "Checklist coverage by issue",
      note: `Judged by ${r.models.judge}. Plan ${formatValue(m.plan_coverage.value)} ${formatCi(m.plan_coverage.ci)}; council ${formatValue(m.council_coverage.value)} ${formatCi(m.council_coverage.ci)}.`,
      config: {
        type: "bar",
        data: {
          labels: r.items.map((o) => o.id),
          datasets: [
            { label: "plan must contain", data: r.items.map((o) => cov(o.plan_checklist)), backgroundColor: COLORS.blue },
            { label: "council must raise", data: r.items.map((o) => cov(o.council_checklist)), backgroundColor: COLORS.orange },
          ],
        },
        options: base({ scales: unitScale }),
      },
    },
    {
      id: "chart-stages",
      title: "Stage outcomes",
      config: {
        type: "bar",
        data: {
          labels: stages,
          datasets: outcomes.map((o, i) => ({ label: o, data: stages.map((s) => m.stages[s]?.outcomes[o] ?? 0), backgroundColor: palette[i] })),
        },
        options: base({ scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } }),
      },
    },
    {
      id: "chart-false-blocks",
      title: "Gold-clean issues: through or blocked",
      note: `False-block rate ${formatValue(m.false_block_rate.value)} ${formatCi(m.false_block_rate.ci)} over ${m.clean_issues} gold-clean issues.`,
      config: {
        type: "doughnut",
        data: {
          labels: ["through (right)", "blocked (false block)"],
          datasets: [{ data: [clean.filter((o) => !o.blocked).length, clean.filter((o) => o.blocked).length], backgroundColor: [COLORS.green, COLORS.red] }],
        },
        options: base(),
      },
    },
    {
      id: "chart-cost",
      title: "Calls by issue",
      note: `${m.usage.calls} calls (${m.usage.network_calls} over the network); spent ${formatUsd(m.usage.cost_usd)}, ${formatUsd(m.usage.model_cost_usd)} at the models' prices.`,
      config: {
        type: "bar",
        data: {
          labels: r.items.map((o) => o.id),
          datasets: [
            { label: "planning calls", data: r.items.map((o) => o.calls.length), backgroundColor: COLORS.teal },
            { label: "judge calls", data: r.items.map((o) => o.judge_calls.length), backgroundColor: COLORS.purple },
          ],
        },
        options: base({ scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } }),
      },
    },
  ];
}

/** The charts of a report (exported for tests: the page draws exactly these). */
export function chartSpecs(r: EvalReport): ChartSpec[] {
  return r.kind === "dissent.eval.gate" ? gateCharts(r) : pipelineCharts(r);
}

/** The rows of a report's metric table: key (as in the JSON, dotted), label, estimate. */
export function metricRows(r: EvalReport): { key: string; label: string; est: Estimate }[] {
  const m = r.metrics as unknown as Record<string, unknown>;
  const defs = r.kind === "dissent.eval.gate" ? GATE_RATES : PIPELINE_RATES;
  const rows: { key: string; label: string; est: Estimate }[] = [];
  for (const def of defs) {
    const [head, cat] = def.key.split(".");
    const est = cat ? (m.per_category as Record<string, Record<string, Estimate>> | undefined)?.[cat]?.[head ?? ""] : (m[def.key] as Estimate | undefined);
    if (est) rows.push({ key: def.key, label: def.label.trim(), est });
  }
  return rows;
}

const STYLE = `
:root{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2329;background:#f6f7f9}
body{margin:0;padding:24px 32px;max-width:1280px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 10px}
.meta{color:#5b6670;font-size:13px;margin:0}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:12px;margin:18px 0}
.card{background:#fff;border:1px solid #dde2e7;border-radius:8px;padding:10px 14px}
.card .k{font-size:12px;color:#5b6670}.card .v{font-size:24px;font-weight:600}.card .ci{font-size:12px;color:#5b6670}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(380px,1fr));gap:14px}
figure{margin:0;background:#fff;border:1px solid #dde2e7;border-radius:8px;padding:12px}
figcaption{font-weight:600;font-size:14px;margin-bottom:6px}
.chart{position:relative;height:260px}
.note{font-size:12px;color:#5b6670;margin:6px 0 0}
table{border-collapse:collapse;background:#fff;font-size:13px;width:100%}
th,td{border-bottom:1px solid #e7ebef;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.warn{background:#fff4e0;border:1px solid #f0c36d;border-radius:6px;padding:8px 12px;font-size:13px}
`;

function cards(r: EvalReport): string {
  const m = r.metrics as unknown as Record<string, Estimate>;
  const keys =
    r.kind === "dissent.eval.gate"
      ? [
          ["verdict_accuracy", "verdict accuracy"],
          ["recall", "recall"],
          ["precision", "precision"],
          ["false_revision_rate", "false revisions"],
          ["grounding_loss", "grounding loss"],
          ["injection_success_rate", "injection success"],
        ]
      : [
          ["plan_coverage", "plan checklist covered"],
          ["council_coverage", "council checklist raised"],
          ["false_block_rate", "false blocks"],
          ["route_accuracy", "route accuracy"],
        ];
  return keys
    .map(([k, label]) => {
      const e = m[k ?? ""];
      return `<div class="card" data-card="${esc(k ?? "")}"><div class="k">${esc(label ?? "")}</div><div class="v">${formatValue(e?.value)}</div><div class="ci">95 % ${formatCi(e?.ci ?? null)}</div></div>`;
    })
    .join("");
}

function gateItemsTable(r: GateReport): string {
  const rows = r.items.map((o) => {
    const found = o.defects.filter((d) => d.found).length;
    const fp = o.concerns.filter((c) => c.matches.length === 0).length;
    const rev = o.revision ? `${o.revision.status}${o.revision.drift.length ? ` · drift: ${o.revision.drift.map((d) => d.text).join(", ")}` : ""}` : "";
    return `<tr data-item="${esc(o.id)}"><td>${esc(o.id)}</td><td>${esc(o.expected_verdict)}</td><td>${esc(o.verdict ?? "failed")}</td><td class="num">${found}/${o.defects.length}</td><td class="num">${fp}</td><td class="num">${o.ungrounded.length}</td><td>${esc(rev)}</td><td>${esc(o.error ?? "")}</td></tr>`;
  });
  return `<table id="items"><thead><tr><th>item</th><th>expected</th><th>verdict</th><th>defects found</th><th>false positives</th><th>ungrounded</th><th>revision</th><th>error</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function pipelineItemsTable(r: PipelineReport): string {
  const yes = (l: PipelineReport["items"][number]["plan_checklist"]) => `${l.filter((c) => c.covered).length}/${l.length}`;
  const rows = r.items.map(
    (o) =>
      `<tr data-item="${esc(o.id)}"><td>${esc(o.id)}</td><td>${esc(o.kind ?? "")}</td><td>${esc(o.route ?? "–")}</td><td>${esc(o.status)}</td><td>${o.clean ? (o.blocked ? "blocked" : "through") : ""}</td><td class="num">${yes(o.plan_checklist)}</td><td class="num">${yes(o.council_checklist)}</td><td class="num">${o.calls.length}</td><td>${esc(o.error ?? "")}</td></tr>`,
  );
  return `<table id="items"><thead><tr><th>issue</th><th>kind</th><th>route</th><th>status</th><th>gold-clean</th><th>plan checklist</th><th>council checklist</th><th>calls</th><th>error</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** Renders a report as one self-contained HTML page (charts inlined; no network). */
export function renderHtml(r: EvalReport, chartJs: string = chartJsSource()): string {
  const specs = chartSpecs(r);
  const title = r.kind === "dissent.eval.gate" ? "dissent eval gate" : "dissent eval pipeline";
  const models = Object.entries(r.models)
    .map(([k, v]) => `${k} ${v}`)
    .join(" · ");
  const u = r.metrics.usage;
  const metricTable = metricRows(r)
    .map(
      (row) =>
        `<tr data-key="${esc(row.key)}" data-value="${row.est.value ?? ""}"><td>${esc(row.label)}</td><td class="num value">${formatValue(row.est.value)}</td><td class="num ci">${formatCi(row.est.ci)}</td><td class="num">${row.est.num}/${row.est.den}</td></tr>`,
    )
    .join("");
  const usageRows: [string, string][] = [
    ["calls", `${u.calls} (${u.network_calls} network, ${u.cached_calls} cached, ${u.failed_calls} failed)`],
    ["tokens", `${u.input_tokens} in / ${u.output_tokens} out`],
    ["cost", `${formatUsd(u.cost_usd)} this run · ${formatUsd(u.model_cost_usd)} at the models' prices`],
    ["wall time", `${(u.wall_ms / 1000).toFixed(1)} s`],
  ];
  const figures = specs
    .map(
      (s) =>
        `<figure><figcaption>${esc(s.title)}</figcaption><div class="chart"><canvas id="${esc(s.id)}" role="img" aria-label="${esc(s.title)}"></canvas></div>${s.note ? `<p class="note">${esc(s.note)}</p>` : ""}</figure>`,
    )
    .join("");
  const warnings = r.warnings.length ? `<p class="warn">${r.warnings.map(esc).join("<br>")}</p>` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} — ${esc(models)}</title>
<style>${STYLE}</style></head>
<body>
<header><h1>${esc(title)}</h1>
<p class="meta">${esc(models)} · set ${esc(r.set.name)} (${r.set.items} of ${r.set.total} items, sha256 ${esc(r.set.sha256.slice(0, 12))}) · 95 % intervals: percentile bootstrap, ${r.bootstrap.resamples} resamples, seed ${r.bootstrap.seed}</p></header>
${warnings}
<section class="cards">${cards(r)}</section>
<section class="charts">${figures}</section>
<h2>Metrics</h2>
<table id="metrics"><thead><tr><th>metric</th><th>value</th><th>95 % interval</th><th>n</th></tr></thead><tbody>${metricTable}</tbody></table>
<h2>Usage</h2>
<table id="usage"><tbody>${usageRows.map(([k, v]) => `<tr data-usage="${esc(k)}"><td>${esc(k)}</td><td class="num">${esc(v)}</td></tr>`).join("")}</tbody></table>
<h2>Items</h2>
${r.kind === "dissent.eval.gate" ? gateItemsTable(r) : pipelineItemsTable(r)}
<script id="report-data" type="application/json">${scriptJson(r)}</script>
<script id="chart-specs" type="application/json">${scriptJson(specs)}</script>
<script>${scriptSource(chartJs)}</script>
<script>
(function () {
  var specs = JSON.parse(document.getElementById("chart-specs").textContent);
  for (var i = 0; i < specs.length; i++) new Chart(document.getElementById(specs[i].id), specs[i].config);
  document.body.setAttribute("data-ready", "true");
})();
</script>
</body></html>
`;
}
