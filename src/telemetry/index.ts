import { packageVersion } from "../package-root.js";
import type { Config } from "../contracts/config.js";
import type { ObservedCall } from "../models/types.js";
import type { PrReviewResult } from "../github/review-pull.js";
import { ImplementTrace, WorkflowTrace } from "./implement-trace.js";
import { PlanTrace } from "./plan-trace.js";
import { DISSENT } from "./conventions.js";
import { exportingTracer } from "./provider.js";
import { RunTrace } from "./run-trace.js";

export { ImplementTrace, WorkflowTrace } from "./implement-trace.js";
export { PlanTrace } from "./plan-trace.js";
export { RunTrace } from "./run-trace.js";
export { SEMCONV_VERSION } from "./conventions.js";
export { withoutCredentials } from "./provider.js";

/** Traces of runs and plans, exported over OTLP/HTTP following the GenAI semantic conventions (docs/serve.md). */
export interface Telemetry {
  run(runId: string, audit: boolean): RunTrace;
  plan(issueId: string): PlanTrace;
  /** The trace of one `issue implement` (docs/implement.md). */
  implement(issueId: string): ImplementTrace;
  /** The trace of one `pr review`: a workflow span and its review calls. */
  prReview(subject: string): WorkflowTrace<PrReviewResult>;
  /** Flushes every span (bounded in time) and stops exporting. */
  shutdown(): Promise<void>;
}

/** Is this an http(s) URL the exporter can post to? */
export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const protocol = new URL(value).protocol;
  return protocol === "http:" || protocol === "https:";
}

/** Knobs for tests: how long an export may take. */
export interface TelemetryOptions {
  timeoutMs?: number;
}

/**
 * Starts exporting to the config's endpoint. Loaded only when one is configured: with telemetry
 * off, neither this module nor the OpenTelemetry SDK is imported (the CLI starts as fast as before).
 */
export function startTelemetry(
  config: Pick<Config, "telemetry" | "seed" | "logContent">,
  redact: (text: string) => string,
  warn: (message: string) => void,
  o: TelemetryOptions = {},
): Telemetry | undefined {
  const endpoint = config.telemetry.otlpEndpoint;
  if (!endpoint) return undefined;
  // A bad endpoint costs one warning, never a run (docs/serve.md); the value is not echoed: it may hold credentials.
  if (!isHttpUrl(endpoint)) {
    warn("telemetry is off: the OTLP endpoint (telemetry.otlp_endpoint or OTEL_EXPORTER_OTLP_ENDPOINT) is not an http(s) URL");
    return undefined;
  }
  const { tracer, shutdown } = exportingTracer({
    endpoint,
    serviceName: config.telemetry.serviceName,
    serviceVersion: packageVersion(),
    warn,
    ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
  });
  // A cache hit is free; a network call is priced as its ModelCall event is (null when unknown, never 0).
  const cost = async (c: ObservedCall) =>
    c.cached
      ? (await c.target.cost(0, 0)) === null
        ? null
        : 0
      : c.target.cost(c.inputTokens, c.outputTokens, { read: c.cachedInputTokens, write: c.cacheWriteInputTokens });
  const spans = { seed: config.seed, logContent: config.logContent, redact, cost, warn };
  return {
    run: (runId, audit) => new RunTrace(tracer, runId, audit, spans),
    plan: (issueId) => new PlanTrace(tracer, issueId, spans),
    implement: (issueId) => new ImplementTrace(tracer, issueId, spans),
    prReview: (subject) =>
      new WorkflowTrace<PrReviewResult>(tracer, "dissent.pr_review", subject, spans, (r) => ({
        [DISSENT.STATUS]: r.status,
        "dissent.pr_review.findings": r.findings.length,
        "dissent.pr_review.head": r.head,
      })),
    shutdown,
  };
}
