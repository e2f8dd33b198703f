/** `dissent eval` as a library (CONTRACT §9): set formats, runners, metrics, reports. */
export {
  GateDefect,
  GateExpected,
  GateRevisionCheck,
  GateItem,
  GateSet,
  PipelineWikiEntry,
  PipelineGold,
  PipelineItem,
  PipelineSet,
} from "./schema.js";
export { parseGateSet, parsePipelineSet, loadGateSet, loadPipelineSet, BUNDLED as BUNDLED_SETS, type LoadedSet } from "./sets.js";
export { runGateEval, evalGateItem, type GateEvalDeps, type EvalProgress } from "./run-gate.js";
export { runPipelineEval, evalPipelineItem, type PipelineEvalDeps } from "./run-pipeline.js";
export { gateMetrics, GATE_RATES } from "./gate-metrics.js";
export { pipelineMetrics, PIPELINE_RATES } from "./pipeline-metrics.js";
export { compareReports, readReport, type Comparison } from "./compare.js";
export { renderHtml } from "./html.js";
export { CATEGORY_MATCHES, categoryMatches } from "./categories.js";
export { DEFAULT_BOOTSTRAP, type BootstrapSpec, type Estimate, type McNemar } from "./stats.js";
export { JUDGE_ROLE } from "./judge.js";
export { GateReport, PipelineReport, EvalReport, GateItemOutcome, PipelineItemOutcome } from "./report.js";
