/** A realistic model double: an OpenAI-compatible server whose models answer like real ones, quirks included. */
export { startRealisticDouble, type DoubleOptions, type RealisticDouble } from "./server.js";
export { perfect, small8b, frontier } from "./quirks.js";
export { bench10, type Bench, type BenchIssue } from "./bench10.js";
export type { Defect, DraftScenario, GateDefect, Quirks, Rate, Scenario, Severity, Stage } from "./types.js";
export { EXEC_MODEL, CHAL_MODEL, roleOf } from "./request.js";
