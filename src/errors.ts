/**
 * Errors you can branch on: each has a stable `name`, carries data a caller can read, and a static
 * `isInstance` that works across module copies (as the AI SDK's do). Exit codes are the CLI's
 * business: it maps names to codes in one table (src/cli/exit-codes.ts).
 */
const MARKER = Symbol.for("dissent.error");

/** The base of every dissent error: `DissentError.isInstance(e)` is true for all of them. */
export class DissentError extends Error {
  readonly [MARKER] = true;
  constructor(name: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = name;
  }
  static isInstance(e: unknown): e is DissentError {
    return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[MARKER] === true;
  }
}

function named<N extends string>(name: N) {
  return class extends DissentError {
    static readonly errorName: N = name;
    constructor(message: string, options?: { cause?: unknown }) {
      super(name, message, options);
    }
    static override isInstance(e: unknown): e is DissentError {
      return DissentError.isInstance(e) && e.name === name;
    }
  };
}

/** Bad flags or arguments. */
export class UsageError extends named("UsageError") {}
/** A config file or value that cannot be used; the message names the file (and line). */
export class ConfigError extends named("ConfigError") {}
/** ADR-009 §1: code tried to exceed MAX_AUDIT_PASSES or MAX_REVISION_PASSES. */
export class AuditLimitExceeded extends named("AuditLimitExceeded") {}
/** `--replay` found no cached reply for a request. */
export class ReplayMiss extends named("ReplayMiss") {}
/** A model replied, but not in a form we can use. */
export class ReplyFormatError extends named("ReplyFormatError") {}
/** A run failed for a reason of its own (no plan could be made, unknown issue, …). */
export class RunError extends DissentError {
  static readonly errorName: string = "RunError";
  constructor(message: string, options?: { cause?: unknown }, name = "RunError") {
    super(name, message, options);
  }
  static override isInstance(e: unknown): e is RunError {
    return DissentError.isInstance(e) && (e.name === "RunError" || e.name === "TrackerAuthError");
  }
}
/** The user interrupted (Ctrl-C) or the process was asked to stop (SIGTERM). */
export class Interrupted extends DissentError {
  static readonly errorName = "Interrupted";
  constructor(
    message: string,
    /** Which signal stopped the run (CONTRACT §6 r2: 130 on SIGINT, 143 on SIGTERM). */
    readonly signal: "SIGINT" | "SIGTERM" = "SIGINT",
  ) {
    super("Interrupted", message);
  }
  static override isInstance(e: unknown): e is Interrupted {
    return DissentError.isInstance(e) && e.name === "Interrupted";
  }
}

/** The store could not be used (a damaged file, no permission, a database that is down); the message names it and what to do. */
export class StoreError extends named("StoreError") {}
/** The tracker refused our token (GitHub 401): retrying will not help, so the factory stops (CONTRACT §7). */
export class TrackerAuthError extends RunError {
  static override readonly errorName: string = "TrackerAuthError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options, "TrackerAuthError");
  }
  static override isInstance(e: unknown): e is TrackerAuthError {
    return DissentError.isInstance(e) && e.name === "TrackerAuthError";
  }
}

/** Another planner holds the issue (CONTRACT §4 r2: one planner per issue). */
export class LeaseHeld extends DissentError {
  static readonly errorName = "LeaseHeld";
  constructor(
    message: string,
    readonly holder: { host: string; pid: number; since: string },
  ) {
    super("LeaseHeld", message);
  }
  static override isInstance(e: unknown): e is LeaseHeld {
    return DissentError.isInstance(e) && e.name === "LeaseHeld";
  }
}

/** A per-issue ceiling (calls, dollars or planning cycles) would be crossed; `setting` names the one to raise. */
export class BudgetExceeded extends DissentError {
  static readonly errorName = "BudgetExceeded";
  constructor(
    message: string,
    readonly max: number,
    readonly used: number,
    readonly unit: "calls" | "usd" | "cycles" = "calls",
    readonly setting?: string,
  ) {
    super("BudgetExceeded", message);
  }
  static override isInstance(e: unknown): e is BudgetExceeded {
    return DissentError.isInstance(e) && e.name === "BudgetExceeded";
  }
}

/** What a failed model call carries: which provider and model, how it failed, after how many attempts. */
export interface ProviderFailure {
  provider: string;
  model: string;
  kind: string;
  status?: number;
  retryAfterMs?: number;
  attempts: number;
}

/** A provider could not be reached or kept failing after retries (and fallback, if any). */
export class ProviderError extends DissentError {
  static readonly errorName: string = "ProviderError";
  readonly provider: string;
  readonly model: string;
  readonly kind: string;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly attempts: number;
  /** The call records of every target tried (for `run.calls`). */
  calls: unknown[] = [];
  constructor(message: string, failure: ProviderFailure = { provider: "", model: "", kind: "error", attempts: 1 }, name = "ProviderError") {
    super(name, message);
    this.provider = failure.provider;
    this.model = failure.model;
    this.kind = failure.kind;
    this.status = failure.status;
    this.retryAfterMs = failure.retryAfterMs;
    this.attempts = failure.attempts;
  }
  static override isInstance(e: unknown): e is ProviderError {
    return DissentError.isInstance(e) && (e.name === "ProviderError" || e.name === "ProviderAuthError");
  }
}

/** A provider refused our credentials or quota (401, 403, insufficient quota): never soft-failed. */
export class ProviderAuthError extends ProviderError {
  static override readonly errorName: string = "ProviderAuthError";
  constructor(message: string, failure: ProviderFailure = { provider: "", model: "", kind: "auth", attempts: 1 }) {
    super(message, failure, "ProviderAuthError");
  }
  static override isInstance(e: unknown): e is ProviderAuthError {
    return DissentError.isInstance(e) && e.name === "ProviderAuthError";
  }
}

/**
 * One policy for "ends the run" versus "degrades" (a critic or challenger that fails contributes
 * nothing; these never do): the user's configuration, credentials and quota, an interruption, a
 * replay miss, the frozen limits, a lost lease and a store that cannot be used.
 */
export function isFatal(e: unknown): boolean {
  return [UsageError, ConfigError, ProviderAuthError, TrackerAuthError, Interrupted, ReplayMiss, AuditLimitExceeded, LeaseHeld, StoreError].some((k) =>
    k.isInstance(e),
  );
}

/** Message of any thrown value, for one-line reports. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
