import { existsSync, lstatSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UsageError } from "../errors.js";
import { writeNoFollow } from "../files/write.js";
import { compareReports, readReport, type Comparison } from "../eval/compare.js";
import { loadDriftSet, runDriftEval, type DriftReport } from "../eval/drift-eval.js";
import { formatCi, formatUsd, formatValue, metricRows, renderHtml } from "../eval/html.js";
import { JUDGE_ROLE, judgeSameModelWarning } from "../eval/judge.js";
import type { EvalReport, UsageJson } from "../eval/report.js";
import { runGateEval, type EvalProgress } from "../eval/run-gate.js";
import { runPipelineEval } from "../eval/run-pipeline.js";
import { loadGateSet, loadPipelineSet } from "../eval/sets.js";
import { requireKeys, requirePrices, sameModelWarning } from "../models/router.js";
import { PIPELINE_ROLES, STAGES } from "../pipeline/stages.js";
import { json, withDissent, type Common, type StatusLine } from "./common.js";
import { fail, type Io } from "./io.js";
import { table } from "./table.js";

/** Flags of `eval gate` and `eval pipeline`. */
export interface EvalOptions extends Common {
  set?: string;
  limit?: string;
  html?: string;
}

/** `--limit N`: a positive whole number. */
function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`--limit must be a positive whole number, not '${value}'`);
  return n;
}

/** `--html FILE`: checked before the run, so a long run never ends on a folder that does not exist. */
function htmlTarget(value: string | undefined, cwd: string): string | undefined {
  if (value === undefined) return undefined;
  const path = resolve(cwd, value);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`--html ${value}: the folder ${dir} does not exist`);
  if (existsSync(path) && statSync(path).isDirectory()) throw new UsageError(`--html ${value} is a folder; give a file name`);
  if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink())
    throw new UsageError(`--html ${value} is a symbolic link: dissent never writes through a link`);
  return path;
}

/** A progress bar fitted to the terminal: `eval gate  [████░░░░]  23/77  cook-008`. */
export function progressLine(what: string, p: EvalProgress, columns: number): string {
  const count = `${p.done}/${p.total}`;
  const room = columns - 1 - (what.length + count.length + 8); // "  [", "]  ", "  " around the bar and the count
  const id = room - p.id.length >= 4 ? p.id : ""; // a narrow terminal loses the item's id before the bar
  const width = Math.max(4, Math.min(40, room - id.length));
  const filled = Math.round((p.done / Math.max(1, p.total)) * width);
  return `${what}  [${"█".repeat(filled)}${"░".repeat(width - filled)}]  ${count}${id ? `  ${id}` : ""}`;
}

function usageLine(u: UsageJson): string {
  return [
    `calls ${u.calls} (${u.network_calls} network, ${u.cached_calls} cached, ${u.failed_calls} failed)`,
    `tokens ${u.input_tokens} in / ${u.output_tokens} out`,
    `cost ${formatUsd(u.cost_usd)} this run, ${formatUsd(u.model_cost_usd)} at the models' prices`,
    `wall ${(u.wall_ms / 1000).toFixed(1)} s`,
  ].join(" · ");
}

/** The stdout table of a report: one row per rate (value, 95 % interval, num/den), then the counts. */
export function reportTable(r: EvalReport): string {
  const what = r.kind === "dissent.eval.gate" ? "eval gate" : "eval pipeline";
  const models = Object.entries(r.models)
    .map(([k, v]) => `${k} ${v}`)
    .join(" · ");
  const head = `dissent ${what} · ${models} · ${r.set.items} items (${r.set.name})\n`;
  // A category the set does not exercise (and the challenger never named) is left out of the table; --json keeps it.
  const rows = metricRows(r)
    .filter((row) => !row.key.includes(".") || row.est.den > 0)
    .map((row) => [row.label, formatValue(row.est.value), formatCi(row.est.ci), `${row.est.num}/${row.est.den}`]);
  const extra: string[] = [];
  if (r.kind === "dissent.eval.gate") {
    const c = r.metrics.verdict_confusion;
    extra.push(
      `verdicts: clean drafts ${c.pass.pass} pass / ${c.pass.needs_work} needs_work / ${c.pass.failed} failed · defective drafts ${c.needs_work.pass} pass / ${c.needs_work.needs_work} needs_work / ${c.needs_work.failed} failed`,
    );
  } else {
    const s = r.metrics.status;
    extra.push(
      `status: ${s.ready} ready · ${s.needs_replan} needs_replan · ${s.hitl} hitl · ${s.failed} failed${r.metrics.judge_unreadable ? ` · ${r.metrics.judge_unreadable} judgments unreadable` : ""}`,
    );
    for (const [stage, st] of Object.entries(r.metrics.stages)) {
      extra.push(
        `  ${stage}: ${st.runs} runs, ${st.mean_rounds.toFixed(2)} rounds on average; ${Object.entries(st.outcomes)
          .map(([o, n]) => `${n} ${o}`)
          .join(", ")}`,
      );
    }
  }
  return `${head}${table(["metric", "value", "95% interval", "n"], rows)}${extra.join("\n")}\n${usageLine(r.metrics.usage)}\n`;
}

const signed = (v: number | null) => (v === null ? "–" : `${v > 0 ? "+" : ""}${formatValue(v)}`);

/** The stdout table of `eval compare`. */
export function comparisonTable(c: Comparison): string {
  const models = (m: Record<string, string>) => Object.values(m).join(", ");
  const head = `dissent eval compare · A ${c.a.file} (${models(c.a.models)}) · B ${c.b.file} (${models(c.b.models)}) · ${c.paired} paired items${c.only_a || c.only_b ? ` (${c.only_a} only in A, ${c.only_b} only in B, left out)` : ""}\n`;
  const rows = c.rates
    .filter((r) => !r.key.includes(".") || r.a !== null || r.b !== null)
    .map((r) => [r.label, formatValue(r.a), formatValue(r.b), signed(r.diff), formatCi(r.ci)]);
  const lines = [table(["metric", "A", "B", "B - A", "95% interval of B - A"], rows).trimEnd()];
  if (c.mcnemar) {
    const m = c.mcnemar;
    lines.push(
      `McNemar (verdict accuracy): p = ${m.p < 0.001 ? m.p.toExponential(2) : m.p.toFixed(3)} (${m.method === "exact" ? "exact binomial" : `chi-square ${formatValue(m.statistic)}, continuity-corrected`}; ${m.b} items only A judged right, ${m.c} only B)`,
    );
  }
  lines.push(
    table(
      ["count", "A", "B", "B - A"],
      c.usage.map((u) => [u.key, formatValue(u.a), formatValue(u.b), signed(u.diff)]),
    ).trimEnd(),
  );
  return `${head}${lines.join("\n")}\n`;
}

/** Writes the report the way the flags ask: `--html` to its file (said on stderr), then `--json` or the table on stdout. */
function emit(report: EvalReport, opts: EvalOptions, htmlPath: string | undefined, io: Io, status: StatusLine): number {
  status.clear();
  if (htmlPath) {
    // The page is a sink like stdout: every configured secret is redacted from it (docs/errors.md).
    const wrote = writeNoFollow(htmlPath, io.redact(renderHtml(report)), { overwrite: true }); // never through a planted link
    if (!wrote.ok) throw new UsageError(`--html ${opts.html ?? htmlPath} ${wrote.reason}`);
    status.print(`dissent: wrote the report to ${opts.html ?? htmlPath}`);
  }
  if (opts.json) json(io, report);
  else io.stdout(reportTable(report));
  return 0;
}

/** `dissent eval gate` (docs/eval.md). */
export async function evalGate(opts: EvalOptions, io: Io): Promise<number> {
  return withDissent(opts, io, async (d, status) => {
    const limit = parseLimit(opts.limit);
    const htmlPath = htmlTarget(opts.html, io.cwd);
    const set = loadGateSet(opts.set ? resolve(io.cwd, opts.set) : undefined, limit, opts.set);
    const roles = set.items.some((i) => i.revision) ? ["challenger", "executor"] : ["challenger"];
    requireKeys(d.config, io.env, roles);
    const report = await runGateEval(set, {
      calls: await d.callContext("use", roles),
      ...(status.live ? { onProgress: (p: EvalProgress) => status.set(progressLine("eval gate", p, io.columns)) } : {}),
    });
    return emit(report, opts, htmlPath, io, status);
  });
}

/** `dissent eval pipeline` (docs/eval.md). */
export async function evalPipeline(opts: EvalOptions, io: Io): Promise<number> {
  return withDissent(opts, io, async (d, status) => {
    const limit = parseLimit(opts.limit);
    const htmlPath = htmlTarget(opts.html, io.cwd);
    const set = loadPipelineSet(opts.set ? resolve(io.cwd, opts.set) : undefined, limit, opts.set);
    requireKeys(d.config, io.env, [...PIPELINE_ROLES, JUDGE_ROLE]);
    await requirePrices(d.config, PIPELINE_ROLES);
    const warnings: string[] = [];
    for (const stage of STAGES) {
      const same = sameModelWarning(d.config, stage.producer, stage.critics, `${stage.phase} stage`);
      if (same) warnings.push(same);
    }
    const judgeSame = judgeSameModelWarning(d.config);
    if (judgeSame) warnings.push(judgeSame);
    for (const w of warnings) status.print(`dissent: warning: ${w}`);
    const report = await runPipelineEval(set, {
      calls: await d.callContext("use", [...PIPELINE_ROLES, JUDGE_ROLE]),
      config: d.config,
      warn: (m) => status.print(`dissent: warning: ${m.split("\n")[0] ?? ""}`),
      warnings,
      ...(status.live ? { onProgress: (p: EvalProgress) => status.set(progressLine("eval pipeline", p, io.columns)) } : {}),
    });
    return emit(report, opts, htmlPath, io, status);
  });
}

/** `dissent eval compare A.json B.json`: needs no config, only the two reports. */
export async function evalCompare(a: string, b: string, opts: Common, io: Io): Promise<number> {
  try {
    const ra = readReport(resolve(io.cwd, a), a);
    const rb = readReport(resolve(io.cwd, b), b);
    const c = compareReports(ra, rb, { a, b }, { resamples: ra.bootstrap.resamples, seed: ra.bootstrap.seed, confidence: ra.bootstrap.confidence });
    if (opts.json) json(io, c);
    else io.stdout(comparisonTable(c));
    return 0;
  } catch (e) {
    return fail(e, io, Boolean(opts.verbose));
  }
}

const DRIFT_LABELS: Record<string, string> = {
  precision: "precision (flagged tokens that are drift)",
  recall: "recall (drift flagged)",
  revision_precision: "flagged revisions that hold drift",
  revision_recall: "revisions with drift that were flagged",
  listed_false_alarm_rate: "listed non-drift flagged (false alarms)",
};

/** The stdout table of `eval drift`: the rates, the goals of ADR-036, then each item the check got wrong. */
export function driftTable(r: DriftReport): string {
  const head = `dissent eval drift · the deterministic check, no model calls · ${r.set.items} revisions (${r.set.name})\n`;
  const est = (e: { value: number | null; ci: [number, number] | null; num: number; den: number }) => [
    formatValue(e.value),
    formatCi(e.ci),
    `${e.num}/${e.den}`,
  ];
  const rows = Object.entries(DRIFT_LABELS).map(([k, label]) => [label, ...est(r.metrics[k as Exclude<keyof DriftReport["metrics"], "per_case">])]);
  for (const [c, m] of Object.entries(r.metrics.per_case)) {
    if (m.recall.den > 0) rows.push([`  ${c}: recall`, ...est(m.recall)]);
    if (m.listed_false_alarm_rate.den > 0) rows.push([`  ${c}: listed non-drift flagged`, ...est(m.listed_false_alarm_rate)]);
  }
  const missed = r.items.filter((o) => o.missed.length > 0);
  const alarms = r.items.filter((o) => o.false_alarms.length > 0);
  const lines = [
    `goals (ADR-036): precision ≥ 0.8 — ${(r.metrics.precision.value ?? 0) >= 0.8 ? "met" : "MISSED"}; every labelled drift flagged — ${missed.length === 0 ? "met" : "MISSED"}`,
    ...missed.map((o) => `  missed in ${o.id}: ${o.missed.join(", ")}`),
    ...alarms.map((o) => `  false alarm in ${o.id}: ${o.false_alarms.join(", ")}`),
  ];
  return `${head}${table(["metric", "value", "95% interval", "n"], rows)}${lines.join("\n")}\n`;
}

/** `dissent eval drift` (docs/eval.md): needs no config and calls no model. */
export async function evalDrift(opts: EvalOptions, io: Io): Promise<number> {
  try {
    const set = loadDriftSet(opts.set ? resolve(io.cwd, opts.set) : undefined, parseLimit(opts.limit), opts.set);
    const report = runDriftEval(set);
    if (opts.json) json(io, report);
    else io.stdout(driftTable(report));
    return 0;
  } catch (e) {
    return fail(e, io, Boolean(opts.verbose));
  }
}
