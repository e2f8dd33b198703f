import { NONE } from "../none.js";
import type { LanguageModel } from "ai";
import type { NewEvent } from "../contracts/events.js";
import type { ReplyCache } from "../models/cache.js";
import { doorOf, type CallDoor } from "../models/call.js";
import { fixedRouter } from "../models/router.js";
import { onceEach } from "../models/sdk-warnings.js";
import type { CallContext } from "../models/types.js";
import { auditGate, type GateResult, type GateWarn, type GateWarningCode } from "./audit-gate.js";
import { challengeWith, type ChallengeInput, type ChallengeResult } from "./challenge.js";

/** What every library entry point may set besides its models. */
export interface LibraryCallOptions {
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
  /**
   * Receives one-line warnings: the challenger failing open, the revision coming back empty or adding
   * facts (`audit_meta.revision_drift`), and the AI SDK's warnings about a call (once each), unless
   * `globalThis.AI_SDK_LOG_WARNINGS` is set: every one, each time it happens. Default: Node process
   * warnings (stderr) — for `runAudit`'s own three kinds, once per process per kind.
   */
  onWarning?: (message: string) => void;
}

/** Options of `runAudit`: two AI SDK models and the work to audit. */
export interface RunAuditOptions extends LibraryCallOptions {
  executor: LanguageModel;
  challenger: LanguageModel;
  prompt: string;
  constraints?: readonly string[];
  policies?: readonly string[];
  /** Skip the challenger (the gate's `--audit`-less path). Default true. */
  audit?: boolean;
}

/** The one model door over fixed models, as the library's entry points use it. */
export function libraryCall(models: Record<string, LanguageModel>, opts: LibraryCallOptions): CallDoor {
  const ctx: CallContext = {
    router: fixedRouter(models),
    ...(opts.cache ? { cache: opts.cache } : NONE),
    cacheMode: "use",
    seed: opts.seed ?? 7,
    timeoutMs: opts.timeoutMs ?? 120_000,
    maxRetries: Math.min(2, Math.max(0, opts.maxRetries ?? 2)),
    backoffMs: 500,
    ...(opts.signal ? { signal: opts.signal } : NONE),
    ...(opts.onEvent ? { emit: opts.onEvent } : NONE),
    warn: onceEach(opts.onWarning ?? ((message) => process.emitWarning(message, { code: "DISSENT_SDK_WARNING" }))),
  };
  return doorOf(ctx);
}

/** The kinds of gate warning this process has already emitted as a Node process warning. */
const warnedKinds = new Set<GateWarningCode>();

/**
 * `runAudit`'s warnings without `onWarning`: a Node process warning the first time each kind occurs
 * in the process, then no more of that kind — a loop of 2,000 runs prints one drift line, not 800.
 * `onWarning` receives every one; `audit_meta` reports each run's own all the same.
 */
const processWarningOncePerKind: GateWarn = (message, code) => {
  if (warnedKinds.has(code)) return;
  warnedKinds.add(code);
  process.emitWarning(`${message} — said once per process; pass onWarning to receive every one`, { code });
};

/**
 * The audit gate over any pair of AI SDK models (ADR-008/009): same gate, same limits
 * and same fail-open rule as `dissent run --audit`.
 */
export function runAudit(opts: RunAuditOptions): Promise<GateResult> {
  return auditGate(
    { prompt: opts.prompt, constraints: opts.constraints ?? [], policies: opts.policies ?? [], audit: opts.audit ?? true },
    {
      call: libraryCall({ executor: opts.executor, challenger: opts.challenger }, opts),
      warn: opts.onWarning ?? processWarningOncePerKind,
    },
  );
}

/** Options of `challenge`: a challenger model and the draft it audits. */
export interface ChallengeOptions extends ChallengeInput, LibraryCallOptions {
  challenger: LanguageModel;
}

/**
 * The gate's challenger step on a given draft (docs/library.md): the executor is not called. The
 * grounded, ungrounded and invalid concerns come back themselves, with the verdict and the call.
 */
export function challenge(opts: ChallengeOptions): Promise<ChallengeResult> {
  return challengeWith(libraryCall({ challenger: opts.challenger }, opts), opts);
}
