import { count, none, one, rates, type RateDef, type Share } from "./gate-metrics.js";
import type { PipelineItemOutcome, PipelineMetrics } from "./report.js";
import { DEFAULT_BOOTSTRAP, draws, tidy, type BootstrapSpec } from "./stats.js";
import { usageOf } from "./usage.js";

/** Checklist coverage: entries judged yes over entries judged at all (an unreadable judgment is neither). */
const coverage = (list: PipelineItemOutcome["plan_checklist"]): Share => [count(list, (c) => c.covered === true), count(list, (c) => c.covered !== null)];

/** The pipeline's rates (ADR-015 §7): each is Σ numerators / Σ denominators over issues; intervals resample issues. */
export const PIPELINE_RATES: readonly RateDef<PipelineItemOutcome>[] = [
  { key: "plan_coverage", label: "plan checklist covered", share: (o) => coverage(o.plan_checklist) },
  { key: "council_coverage", label: "council checklist raised", share: (o) => coverage(o.council_checklist) },
  { key: "false_block_rate", label: "false blocks (gold-clean)", share: (o) => (o.clean ? one(o.blocked) : none) },
  { key: "route_accuracy", label: "route accuracy", share: (o) => (o.gold_route === null ? none : one(o.route === o.gold_route)) },
  {
    key: "failed_call_rate",
    label: "failed calls",
    share: (o) => [count([...o.calls, ...o.judge_calls], (c) => c.error !== undefined), o.calls.length + o.judge_calls.length],
  },
];

/** The pipeline's metrics from its issue outcomes (pure). */
export function pipelineMetrics(outcomes: readonly PipelineItemOutcome[], spec: BootstrapSpec = DEFAULT_BOOTSTRAP, wallMs?: number): PipelineMetrics {
  const r = rates(PIPELINE_RATES, outcomes, draws(outcomes.length, spec), spec.confidence);
  const get = (k: string) => r[k] ?? { value: null, ci: null, num: 0, den: 0 };
  const status = { ready: 0, needs_replan: 0, hitl: 0, failed: 0 };
  for (const o of outcomes) status[o.status]++;
  const stages: PipelineMetrics["stages"] = {};
  const rounds = new Map<string, number>();
  for (const s of outcomes.flatMap((o) => o.stages)) {
    const entry = (stages[s.stage] ??= { runs: 0, mean_rounds: 0, outcomes: {} });
    entry.runs++;
    entry.outcomes[s.outcome] = (entry.outcomes[s.outcome] ?? 0) + 1;
    rounds.set(s.stage, (rounds.get(s.stage) ?? 0) + s.rounds);
  }
  for (const [stage, entry] of Object.entries(stages)) entry.mean_rounds = tidy((rounds.get(stage) ?? 0) / entry.runs);
  const judgeCalls = outcomes.flatMap((o) => o.judge_calls);
  const planningWall = outcomes.reduce((n, o) => n + o.wall_ms, 0);
  return {
    issues: outcomes.length,
    clean_issues: count(outcomes, (o) => o.clean),
    status,
    route_accuracy: get("route_accuracy"),
    plan_coverage: get("plan_coverage"),
    council_coverage: get("council_coverage"),
    false_block_rate: get("false_block_rate"),
    judge_unreadable: outcomes.reduce((n, o) => n + count([...o.plan_checklist, ...o.council_checklist], (c) => c.covered === null), 0),
    stages,
    failed_call_rate: get("failed_call_rate"),
    ...codeRecall(outcomes),
    // Money per issue covers planning and judging; `judge_usage` shows the judge's part alone.
    usage: usageOf(
      outcomes.flatMap((o) => [...o.calls, ...o.judge_calls]),
      outcomes.map((o) => o.model_cost_usd),
      wallMs ?? planningWall,
    ),
    judge_usage: usageOf(
      judgeCalls,
      outcomes.map((o) => o.judge_model_cost_usd),
      0,
    ),
  };
}

/** Recall on the items with a bundled repository, with the code and without (issue 30); absent when the set has none. */
function codeRecall(outcomes: readonly PipelineItemOutcome[]): { code_recall?: PipelineMetrics["code_recall"] } {
  const withRepo = outcomes.filter((o) => o.without_repo);
  if (!withRepo.length) return {};
  const share = (lists: readonly (readonly { covered: boolean | null }[])[]) => {
    const all = lists.flat();
    return all.length ? tidy(all.filter((c) => c.covered === true).length / all.length) : null;
  };
  return {
    code_recall: {
      items: withRepo.length,
      with_repo: share(withRepo.map((o) => o.council_checklist)),
      without_repo: share(withRepo.map((o) => o.without_repo?.council_checklist ?? [])),
    },
  };
}
