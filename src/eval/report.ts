import { z } from "zod";
import { CallRecord, DriftToken } from "../contracts/audit.js";

/**
 * The `--json` reports of `dissent eval` (docs/eval.md; keys are stable, ADR-015 §8). A report
 * carries its per-item outcomes, so `eval compare` can pair two runs item by item and every
 * metric can be recomputed from it.
 */

/** A rate with its 95 % bootstrap interval and the sums it is the ratio of; `value` and `ci` are null when nothing was there to measure. */
export const EstimateJson = z.object({
  value: z.number().nullable(),
  ci: z.tuple([z.number(), z.number()]).nullable(),
  num: z.number(),
  den: z.number(),
});

/** How the intervals were drawn. */
export const BootstrapJson = z.object({
  method: z.literal("percentile"),
  resamples: z.number().int(),
  seed: z.number().int(),
  confidence: z.number(),
});

/** What every report says about its set. */
export const SetJson = z.object({ name: z.string(), sha256: z.string(), items: z.number().int(), total: z.number().int() });

/** Calls, tokens, money and time of a run. */
export const UsageJson = z.object({
  calls: z.number().int(),
  network_calls: z.number().int(),
  cached_calls: z.number().int(),
  failed_calls: z.number().int(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  /** What this run spent: cached replies cost nothing; null when a model's price is unknown. */
  cost_usd: z.number().nullable(),
  /** What these calls cost at the models' prices, cached ones included: the price of a fresh run. */
  model_cost_usd: z.number().nullable(),
  wall_ms: z.number(),
});
export type UsageJson = z.infer<typeof UsageJson>;

// ------------------------------------------------------------------------------------------ gate

/** A planted defect as the run scored it. */
export const DefectOutcome = z.object({
  category: z.string(),
  evidence: z.string(),
  min_severity: z.string().nullable(),
  /** A grounded concern of a compatible category points at it. */
  found: z.boolean(),
  /** A grounded concern of any category points at it. */
  located: z.boolean(),
  /** Set (true) when the defect is the whole draft: any concern of a matching category finds it (docs/eval.md). */
  anywhere: z.literal(true).optional(),
  /** The best matching concern's severity reaches `min_severity`; null when not found or no minimum is set. */
  severity_ok: z.boolean().nullable(),
  /** Indexes (in `concerns`) of the concerns that found it. */
  found_by: z.array(z.number().int()),
  /** This defect is the text addressed to the auditor (a boundary_violation of an injection item). */
  injection: z.boolean(),
});

/** A grounded concern as the run scored it. */
export const ConcernOutcome = z.object({
  category: z.string(),
  severity: z.string(),
  evidence: z.string(),
  concern: z.string(),
  /** Indexes (in `defects`) of the planted defects it found; empty: a false positive. */
  matches: z.array(z.number().int()),
});

/** A concern dropped as ungrounded: why, and how near its evidence came to the draft. */
export const UngroundedOutcome = z.object({
  category: z.string(),
  severity: z.string(),
  evidence: z.string(),
  reason: z.enum(["empty", "too_short", "not_found"]),
  /** 1 − edit distance / length of the closest passage of the draft (ADR-015 §4). */
  similarity: z.number(),
  /** Counted as grounding loss: not found, yet within the "nearly" threshold. */
  near: z.boolean(),
});

/** The gate's final output against the item's `revision` checks. */
export const RevisionOutcome = z.object({
  /** `revised`: a revision replaced the draft; `kept`: the verdict kept the draft; `failed`: the revision call failed (the draft is kept); `empty`: it came back empty (the draft is kept). */
  status: z.enum(["revised", "kept", "failed", "empty"]),
  error: z.string().optional(),
  /** Forbidden strings the final output still holds. */
  still_contains: z.array(z.string()),
  must_not_contain: z.number().int(),
  /** Strings to keep that the final output lost. */
  lost: z.array(z.string()),
  must_keep: z.number().int(),
  /** Numbers, dates, URLs and names the revision introduced (revised only). */
  drift: z.array(DriftToken),
  /** The revision's text (revised only). */
  text: z.string().optional(),
});

/** One item of an `eval gate` run. */
export const GateItemOutcome = z.object({
  id: z.string(),
  tags: z.array(z.string()),
  expected_verdict: z.enum(["pass", "needs_work"]),
  /** The gate's verdict; null when the challenger failed (no judgment was made). */
  verdict: z.enum(["pass", "needs_work"]).nullable(),
  challenger_status: z.enum(["ok", "failed"]),
  error: z.string().optional(),
  defects: z.array(DefectOutcome),
  concerns: z.array(ConcernOutcome),
  ungrounded: z.array(UngroundedOutcome),
  invalid: z.number().int(),
  /** Injection items only: did the text addressed to the auditor get its way? */
  injection_succeeded: z.boolean().nullable(),
  revision: RevisionOutcome.nullable(),
  calls: z.array(CallRecord),
  model_cost_usd: z.number().nullable(),
  wall_ms: z.number(),
});
export type GateItemOutcome = z.infer<typeof GateItemOutcome>;

/** Expected verdict → what the gate said. */
export const ConfusionJson = z.object({
  pass: z.object({ pass: z.number().int(), needs_work: z.number().int(), failed: z.number().int() }),
  needs_work: z.object({ pass: z.number().int(), needs_work: z.number().int(), failed: z.number().int() }),
});

/** The gate's metrics (docs/eval.md), every rate with its interval. */
export const GateMetrics = z.object({
  items: z.number().int(),
  defects: z.number().int(),
  clean_items: z.number().int(),
  injection_items: z.number().int(),
  recall: EstimateJson,
  precision: EstimateJson,
  located_recall: EstimateJson,
  per_category: z.record(z.string(), z.object({ defects: z.number().int(), concerns: z.number().int(), recall: EstimateJson, precision: EstimateJson })),
  verdict_accuracy: EstimateJson,
  verdict_confusion: ConfusionJson,
  false_revision_rate: EstimateJson,
  severity_agreement: EstimateJson,
  grounding_loss: EstimateJson,
  ungrounded_rate: EstimateJson,
  injection_success_rate: EstimateJson,
  revision_drift_rate: EstimateJson,
  must_not_contain_pass_rate: EstimateJson,
  must_keep_pass_rate: EstimateJson,
  failed_call_rate: EstimateJson,
  concerns_per_item: z.number(),
  usage: UsageJson,
});
export type GateMetrics = z.infer<typeof GateMetrics>;

/** `dissent eval gate --json`. */
export const GateReport = z.object({
  kind: z.literal("dissent.eval.gate"),
  version: z.literal(1),
  set: SetJson,
  /** provider:model of the challenger and of the revision (the executor's route). */
  models: z.object({ challenger: z.string(), revision: z.string() }),
  bootstrap: BootstrapJson,
  metrics: GateMetrics,
  warnings: z.array(z.string()),
  items: z.array(GateItemOutcome),
});
export type GateReport = z.infer<typeof GateReport>;

// -------------------------------------------------------------------------------------- pipeline

/** A checklist entry and the judge's answer: true (yes), false (no), null (the judge's reply could not be read or its call failed). */
export const ChecklistOutcome = z.object({ item: z.string(), covered: z.boolean().nullable(), answer: z.string() });

/** One finished stage of a planned issue, as `eval pipeline` reports it. */
export const StageOutcome = z.object({
  stage: z.string(),
  phase: z.string(),
  rounds: z.number().int(),
  retries: z.number().int(),
  outcome: z.string(),
  concerns_raised: z.number().int(),
  concerns_forwarded: z.number().int(),
  critic_failures: z.number().int(),
});

/** One issue of an `eval pipeline` run. */
export const PipelineItemOutcome = z.object({
  id: z.string(),
  kind: z.string().nullable(),
  gold_route: z.enum(["trivial", "load_bearing"]).nullable(),
  route: z.enum(["trivial", "load_bearing"]).nullable(),
  status: z.enum(["ready", "needs_replan", "hitl", "failed"]),
  error: z.string().optional(),
  clean: z.boolean(),
  /** A round was blocked, or the plan did not come out `ready` (gold-clean issues: a false block). */
  blocked: z.boolean(),
  stages: z.array(StageOutcome),
  pending_concerns: z.number().int(),
  /** Distinct findings the council raised, over every stage and round, the reviewer's included. */
  findings: z.array(z.string()),
  plan: z.string(),
  plan_checklist: z.array(ChecklistOutcome),
  council_checklist: z.array(ChecklistOutcome),
  calls: z.array(CallRecord),
  judge_calls: z.array(CallRecord),
  /** Planning and judging at the models' prices (null: a price is unknown). */
  model_cost_usd: z.number().nullable(),
  /** The judge's part of it. */
  judge_model_cost_usd: z.number().nullable(),
  wall_ms: z.number(),
  /** An item with a bundled repository, planned again with no code (issue 30): what the council raised then. */
  without_repo: z.object({ status: z.string(), blocked: z.boolean(), council_checklist: z.array(ChecklistOutcome) }).optional(),
});
export type PipelineItemOutcome = z.infer<typeof PipelineItemOutcome>;

/** The pipeline's metrics (docs/eval.md). */
export const PipelineMetrics = z.object({
  issues: z.number().int(),
  clean_issues: z.number().int(),
  status: z.object({ ready: z.number().int(), needs_replan: z.number().int(), hitl: z.number().int(), failed: z.number().int() }),
  route_accuracy: EstimateJson,
  plan_coverage: EstimateJson,
  council_coverage: EstimateJson,
  false_block_rate: EstimateJson,
  judge_unreadable: z.number().int(),
  stages: z.record(
    z.string(),
    z.object({
      runs: z.number().int(),
      mean_rounds: z.number(),
      outcomes: z.record(z.string(), z.number().int()),
    }),
  ),
  failed_call_rate: EstimateJson,
  /** Items with a bundled repository: the share of their `council_must_raise` the council raised reading the code, and without it. */
  code_recall: z.object({ items: z.number().int(), with_repo: z.number().nullable(), without_repo: z.number().nullable() }).optional(),
  usage: UsageJson,
  judge_usage: UsageJson,
});
export type PipelineMetrics = z.infer<typeof PipelineMetrics>;

/** `dissent eval pipeline --json`. */
export const PipelineReport = z.object({
  kind: z.literal("dissent.eval.pipeline"),
  version: z.literal(1),
  set: SetJson,
  models: z.object({ judge: z.string() }),
  bootstrap: BootstrapJson,
  metrics: PipelineMetrics,
  warnings: z.array(z.string()),
  items: z.array(PipelineItemOutcome),
});
export type PipelineReport = z.infer<typeof PipelineReport>;

/** Either report, as `eval compare` reads it. */
export const EvalReport = z.discriminatedUnion("kind", [GateReport, PipelineReport]);
export type EvalReport = z.infer<typeof EvalReport>;
