import type { LanguageModel } from "ai";
import type { NewEvent } from "../contracts/events.js";
import type { ReplyCache } from "../models/cache.js";
import { callModel } from "../models/call.js";
import { fixedRouter } from "../models/router.js";
import type { CallContext } from "../models/types.js";
import { auditGate, type GateResult } from "./audit-gate.js";

/** Options of `runAudit`: two AI SDK models and the work to audit. */
export interface RunAuditOptions {
  executor: LanguageModel;
  challenger: LanguageModel;
  prompt: string;
  constraints?: readonly string[];
  policies?: readonly string[];
  /** Skip the challenger (the gate's `--audit`-less path). Default true. */
  audit?: boolean;
  /** A reply cache; none unless given. */
  cache?: ReplyCache;
  seed?: number;
  /** Bounds each attempt of each call. Default 120 000 ms. */
  timeoutMs?: number;
  /** Transport retries per call (at most 2). Default 2. */
  maxRetries?: number;
  signal?: AbortSignal;
  /** Receives a ModelCall event per call. */
  onEvent?: (event: NewEvent) => void;
  /** Receives the one-line warning when the challenger fails open (default: a Node process warning, never silent). */
  onWarning?: (message: string) => void;
}

/**
 * The audit gate over any pair of AI SDK models (ADR-008/009): same gate, same limits
 * and same fail-open rule as `dissent run --audit`.
 */
export function runAudit(opts: RunAuditOptions): Promise<GateResult> {
  const ctx: CallContext = {
    router: fixedRouter({ executor: opts.executor, challenger: opts.challenger }),
    ...(opts.cache ? { cache: opts.cache } : {}),
    cacheMode: "use",
    seed: opts.seed ?? 7,
    timeoutMs: opts.timeoutMs ?? 120_000,
    maxRetries: Math.min(2, Math.max(0, opts.maxRetries ?? 2)),
    backoffMs: 500,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onEvent ? { emit: opts.onEvent } : {}),
  };
  return auditGate(
    { prompt: opts.prompt, constraints: opts.constraints ?? [], policies: opts.policies ?? [], audit: opts.audit ?? true },
    {
      call: (meta, request) => callModel(meta, request, ctx),
      warn: opts.onWarning ?? ((message) => process.emitWarning(message, { code: "DISSENT_CHALLENGER_FAILED" })),
    },
  );
}
