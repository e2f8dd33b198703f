import { UsageError } from "../errors.js";
import { readBounded } from "../files/read.js";
import { GATE_RATES, type RateDef } from "./gate-metrics.js";
import { PIPELINE_RATES } from "./pipeline-metrics.js";
import { EvalReport, type GateItemOutcome, type PipelineItemOutcome, type UsageJson } from "./report.js";
import { DEFAULT_BOOTSTRAP, draws, mcnemar, pairedDifference, tidy, type BootstrapSpec, type Difference, type McNemar } from "./stats.js";
import { usageOf } from "./usage.js";

/** One rate of two runs on the same items: A, B, B − A and the paired 95 % interval of the difference. */
export interface RateComparison extends Difference {
  key: string;
  label: string;
}

/** One count of two runs (calls, tokens, money, time): no interval, it is not a rate. */
export interface CountComparison {
  key: keyof UsageJson;
  a: number | null;
  b: number | null;
  diff: number | null;
}

/** `dissent eval compare A.json B.json` (docs/eval.md). */
export interface Comparison {
  kind: EvalReport["kind"];
  a: { file: string; models: Record<string, string>; set: string };
  b: { file: string; models: Record<string, string>; set: string };
  /** Items in both runs (compared); items of only one run are left out and counted. */
  paired: number;
  only_a: number;
  only_b: number;
  bootstrap: { method: "percentile"; resamples: number; seed: number; confidence: number; paired: true };
  rates: RateComparison[];
  /** McNemar's test on verdict accuracy (gate reports; null for pipeline reports). */
  mcnemar: McNemar | null;
  usage: CountComparison[];
}

/** The largest `eval … --json` report `eval compare` reads (docs/limits.md). */
export const MAX_REPORT_BYTES = 64 * 1024 * 1024;

/** Reads an `eval … --json` report; an error names the file. */
export function readReport(file: string, name = file): EvalReport {
  // A bounded, regular-file read (docs/limits.md): `eval compare /dev/zero /dev/zero` is refused at once.
  const got = readBounded(file, MAX_REPORT_BYTES);
  if (!got.ok) throw new UsageError(`${name}: ${got.reason}`);
  const text = got.text;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new UsageError(
      `${name}: not valid JSON (${(e as Error).message.split("\n")[0]}); give the output of dissent eval gate --json or eval pipeline --json`,
    );
  }
  const parsed = EvalReport.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`${name}: not a dissent eval report (${issue ? `${issue.path.join(".") || "root"}: ${issue.message}` : "invalid"})`);
  }
  return parsed.data;
}

const USAGE_KEYS: (keyof UsageJson)[] = ["calls", "network_calls", "failed_calls", "input_tokens", "output_tokens", "cost_usd", "model_cost_usd", "wall_ms"];

function compareRates<O extends { id: string }>(defs: readonly RateDef<O>[], a: readonly O[], b: readonly O[], spec: BootstrapSpec): RateComparison[] {
  const d = draws(a.length, spec);
  return defs.map((def) => {
    const sa = a.map(def.share);
    const sb = b.map(def.share);
    const diff = pairedDifference(
      { num: sa.map((s) => s[0]), den: sa.map((s) => s[1]) },
      { num: sb.map((s) => s[0]), den: sb.map((s) => s[1]) },
      d,
      spec.confidence,
    );
    return { key: def.key, label: def.label.trim(), ...diff };
  });
}

/** Pairs two runs' items by id, in A's order. */
function pair<O extends { id: string }>(a: readonly O[], b: readonly O[]): { a: O[]; b: O[]; onlyA: number; onlyB: number } {
  const byId = new Map(b.map((o) => [o.id, o]));
  const pa: O[] = [];
  const pb: O[] = [];
  for (const o of a) {
    const other = byId.get(o.id);
    if (!other) continue;
    pa.push(o);
    pb.push(other);
  }
  return { a: pa, b: pb, onlyA: a.length - pa.length, onlyB: b.length - pb.length };
}

const usageDiff = (ua: UsageJson, ub: UsageJson): CountComparison[] =>
  USAGE_KEYS.map((key) => {
    const x = ua[key];
    const y = ub[key];
    return { key, a: x, b: y, diff: x === null || y === null ? null : tidy(y - x) };
  });

/**
 * Compares two reports of the same kind item by item: each rate's difference (B − A) with a paired
 * bootstrap interval (both runs resampled with the same items), McNemar's test on verdict accuracy,
 * and the difference in calls, tokens, money and time over the paired items.
 */
export function compareReports(a: EvalReport, b: EvalReport, files: { a: string; b: string }, spec: BootstrapSpec = DEFAULT_BOOTSTRAP): Comparison {
  if (a.kind !== b.kind)
    throw new UsageError(
      `${files.a} is an ${a.kind.replace("dissent.", "").replace(".", " ")} report and ${files.b} an ${b.kind.replace("dissent.", "").replace(".", " ")} report: compare two of the same kind`,
    );
  const head = {
    kind: a.kind,
    a: { file: files.a, models: a.models, set: a.set.name },
    b: { file: files.b, models: b.models, set: b.set.name },
    bootstrap: { method: "percentile" as const, resamples: spec.resamples, seed: spec.seed, confidence: spec.confidence, paired: true as const },
  };
  const wall = (r: EvalReport) => r.metrics.usage.wall_ms;
  if (a.kind === "dissent.eval.gate" && b.kind === "dissent.eval.gate") {
    const p = pair<GateItemOutcome>(a.items, b.items);
    if (p.a.length === 0) throw new UsageError(`${files.a} and ${files.b} share no item ids: nothing to compare`);
    let onlyA = 0;
    let onlyB = 0;
    for (const [i, x] of p.a.entries()) {
      const y = p.b[i] as GateItemOutcome;
      const ra = x.verdict === x.expected_verdict;
      const rb = y.verdict === y.expected_verdict;
      if (ra && !rb) onlyA++;
      if (!ra && rb) onlyB++;
    }
    const usage = (items: GateItemOutcome[], r: EvalReport) =>
      usageOf(
        items.flatMap((o) => o.calls),
        items.map((o) => o.model_cost_usd),
        wall(r),
      );
    return {
      ...head,
      paired: p.a.length,
      only_a: p.onlyA,
      only_b: p.onlyB,
      rates: compareRates(GATE_RATES, p.a, p.b, spec),
      mcnemar: mcnemar(onlyA, onlyB),
      usage: usageDiff(usage(p.a, a), usage(p.b, b)),
    };
  }
  if (a.kind === "dissent.eval.pipeline" && b.kind === "dissent.eval.pipeline") {
    const p = pair<PipelineItemOutcome>(a.items, b.items);
    if (p.a.length === 0) throw new UsageError(`${files.a} and ${files.b} share no issue ids: nothing to compare`);
    const usage = (items: PipelineItemOutcome[], r: EvalReport) =>
      usageOf(
        items.flatMap((o) => [...o.calls, ...o.judge_calls]),
        items.map((o) => o.model_cost_usd),
        wall(r),
      );
    return {
      ...head,
      paired: p.a.length,
      only_a: p.onlyA,
      only_b: p.onlyB,
      rates: compareRates(PIPELINE_RATES, p.a, p.b, spec),
      mcnemar: null,
      usage: usageDiff(usage(p.a, a), usage(p.b, b)),
    };
  }
  throw new UsageError(`${files.a} and ${files.b}: reports of different kinds`);
}
