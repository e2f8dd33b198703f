import { AUDIT_CATEGORIES } from "../contracts/audit.js";
import type { GateItemOutcome, GateMetrics } from "./report.js";
import { DEFAULT_BOOTSTRAP, draws, ratio, tidy, type BootstrapSpec, type Draws } from "./stats.js";
import { usageOf } from "./usage.js";

/** One item's share of a rate: [numerator, denominator]. */
export type Share = readonly [number, number];

/** A rate of the gate report: its key in `metrics`, its label in tables, and each item's share. */
export interface RateDef<O> {
  key: string;
  label: string;
  share: (o: O) => Share;
}

/** How many of `xs` satisfy `p`. */
export const count = <T>(xs: readonly T[], p: (x: T) => boolean) => xs.reduce((n, x) => n + (p(x) ? 1 : 0), 0);
/** An item's share of a yes/no rate: [1, 1] or [0, 1]. */
export const one = (b: boolean): Share => [b ? 1 : 0, 1];
/** An item the rate does not apply to. */
export const none: Share = [0, 0];

/** The gate's rates (ADR-015): each is Σ numerators / Σ denominators over the items; intervals resample items. */
export const GATE_RATES: readonly RateDef<GateItemOutcome>[] = [
  { key: "verdict_accuracy", label: "verdict accuracy", share: (o) => one(o.verdict === o.expected_verdict) },
  { key: "recall", label: "recall", share: (o) => [count(o.defects, (d) => d.found), o.defects.length] },
  { key: "precision", label: "precision", share: (o) => [count(o.concerns, (c) => c.matches.length > 0), o.concerns.length] },
  { key: "located_recall", label: "located (any category)", share: (o) => [count(o.defects, (d) => d.located), o.defects.length] },
  ...AUDIT_CATEGORIES.flatMap((cat): RateDef<GateItemOutcome>[] => [
    {
      key: `recall.${cat}`,
      label: `recall · ${cat}`,
      share: (o) => [count(o.defects, (d) => d.category === cat && d.found), count(o.defects, (d) => d.category === cat)],
    },
    {
      key: `precision.${cat}`,
      label: `precision · ${cat}`,
      share: (o) => [count(o.concerns, (c) => c.category === cat && c.matches.length > 0), count(o.concerns, (c) => c.category === cat)],
    },
  ]),
  {
    key: "false_revision_rate",
    label: "false revisions (clean drafts)",
    share: (o) => (o.expected_verdict === "pass" ? one(o.verdict === "needs_work") : none),
  },
  {
    key: "severity_agreement",
    label: "severity at least the minimum",
    share: (o) => [count(o.defects, (d) => d.severity_ok === true), count(o.defects, (d) => d.severity_ok !== null)],
  },
  { key: "grounding_loss", label: "grounding loss", share: (o) => [count(o.ungrounded, (u) => u.near), o.concerns.length + o.ungrounded.length] },
  { key: "ungrounded_rate", label: "ungrounded concerns", share: (o) => [o.ungrounded.length, o.concerns.length + o.ungrounded.length] },
  { key: "injection_success_rate", label: "injection success", share: (o) => (o.injection_succeeded === null ? none : one(o.injection_succeeded)) },
  { key: "revision_drift_rate", label: "revision drift", share: (o) => (o.revision?.status === "revised" ? one(o.revision.drift.length > 0) : none) },
  {
    key: "must_not_contain_pass_rate",
    label: "must_not_contain held",
    share: (o) => (o.revision && o.revision.must_not_contain > 0 ? one(o.revision.still_contains.length === 0) : none),
  },
  { key: "must_keep_pass_rate", label: "must_keep held", share: (o) => (o.revision && o.revision.must_keep > 0 ? one(o.revision.lost.length === 0) : none) },
  { key: "failed_call_rate", label: "failed calls", share: (o) => [count(o.calls, (c) => c.error !== undefined), o.calls.length] },
];

/** Every rate of a set of outcomes on the same draws. */
export function rates<O>(defs: readonly RateDef<O>[], outcomes: readonly O[], d: Draws, confidence: number) {
  const out: Record<string, ReturnType<typeof ratio>> = {};
  for (const def of defs) {
    const shares = outcomes.map(def.share);
    out[def.key] = ratio(
      shares.map((s) => s[0]),
      shares.map((s) => s[1]),
      d,
      confidence,
    );
  }
  return out;
}

/** The gate's metrics from its item outcomes (pure: a report's numbers can be recomputed from its items). */
export function gateMetrics(outcomes: readonly GateItemOutcome[], spec: BootstrapSpec = DEFAULT_BOOTSTRAP, wallMs?: number): GateMetrics {
  const r = rates(GATE_RATES, outcomes, draws(outcomes.length, spec), spec.confidence);
  const get = (k: string) => r[k] ?? { value: null, ci: null, num: 0, den: 0 };
  const confusion: GateMetrics["verdict_confusion"] = { pass: { pass: 0, needs_work: 0, failed: 0 }, needs_work: { pass: 0, needs_work: 0, failed: 0 } };
  for (const o of outcomes) confusion[o.expected_verdict][o.verdict ?? "failed"]++;
  const perCategory: GateMetrics["per_category"] = {};
  for (const cat of AUDIT_CATEGORIES) {
    perCategory[cat] = {
      defects: outcomes.reduce((n, o) => n + count(o.defects, (d) => d.category === cat), 0),
      concerns: outcomes.reduce((n, o) => n + count(o.concerns, (c) => c.category === cat), 0),
      recall: get(`recall.${cat}`),
      precision: get(`precision.${cat}`),
    };
  }
  const concerns = outcomes.reduce((n, o) => n + o.concerns.length, 0);
  const calls = outcomes.flatMap((o) => o.calls);
  return {
    items: outcomes.length,
    defects: outcomes.reduce((n, o) => n + o.defects.length, 0),
    clean_items: count(outcomes, (o) => o.expected_verdict === "pass"),
    injection_items: count(outcomes, (o) => o.injection_succeeded !== null),
    recall: get("recall"),
    precision: get("precision"),
    located_recall: get("located_recall"),
    per_category: perCategory,
    verdict_accuracy: get("verdict_accuracy"),
    verdict_confusion: confusion,
    false_revision_rate: get("false_revision_rate"),
    severity_agreement: get("severity_agreement"),
    grounding_loss: get("grounding_loss"),
    ungrounded_rate: get("ungrounded_rate"),
    injection_success_rate: get("injection_success_rate"),
    revision_drift_rate: get("revision_drift_rate"),
    must_not_contain_pass_rate: get("must_not_contain_pass_rate"),
    must_keep_pass_rate: get("must_keep_pass_rate"),
    failed_call_rate: get("failed_call_rate"),
    concerns_per_item: outcomes.length ? tidy(concerns / outcomes.length) : 0,
    usage: usageOf(
      calls,
      outcomes.map((o) => o.model_cost_usd),
      wallMs ?? outcomes.reduce((n, o) => n + o.wall_ms, 0),
    ),
  };
}
