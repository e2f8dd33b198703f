import type { FailureKind } from "./models/transport.js";

/**
 * Errors you can branch on, shaped as the AI SDK shapes its own: each class has a stable `name`, a
 * marker of its own (a registered symbol, so `isInstance` works across copies of the module) that
 * its subclasses inherit — a parent never names its children —, read-only data given to its
 * constructor, and `fatal`: whether it ends a run rather than degrading it. Every error is built as
 * `new Error` is: a message and one options object, which holds the cause and the error's data by
 * name (never by position). Exit codes are the CLI's business: it maps names to codes in one table
 * (src/cli/exit-codes.ts; docs/errors.md).
 */
const BASE = "dissent.error";

/** Sets a class's marker on an instance (not enumerable: it never shows in JSON or logs). */
function mark(e: Error, marker: string): void {
  Object.defineProperty(e, Symbol.for(marker), { value: true });
}

/** Does `e` carry the marker `marker` (set by its class or one of its parents)? */
function hasMarker(e: unknown, marker: string): boolean {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[Symbol.for(marker)] === true;
}

/** The base of every dissent error: `DissentError.isInstance(e)` is true for all of them. */
export class DissentError extends Error {
  /** Ends the run (configuration, credentials, an interruption, …) instead of degrading it (a critic that failed contributes nothing). */
  readonly fatal: boolean = false;
  constructor(name: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = name;
    mark(this, BASE);
  }
  static isInstance(e: unknown): e is DissentError {
    return hasMarker(e, BASE);
  }
}

/** The marker of a named class: `dissent.error.UsageError`. */
const markerOf = (name: string) => `${BASE}.${name}`;

/** A class with its own marker and `isInstance`, for errors that carry only a message. */
function named<N extends string>(name: N, fatal: boolean) {
  const marker = markerOf(name);
  return class extends DissentError {
    static readonly errorName: N = name;
    override readonly fatal: boolean = fatal;
    constructor(message: string, options?: { cause?: unknown }) {
      super(name, message, options);
      mark(this, marker);
    }
    static override isInstance(e: unknown): e is DissentError {
      return hasMarker(e, marker);
    }
  };
}

/** Bad flags or arguments. */
export class UsageError extends named("UsageError", true) {}
/** A config file or value that cannot be used; the message names the file (and line). */
export class ConfigError extends named("ConfigError", true) {}
/** ADR-009 §1: code tried to exceed MAX_AUDIT_PASSES or MAX_REVISION_PASSES. */
export class AuditLimitExceeded extends named("AuditLimitExceeded", true) {}
/** `--replay` found no cached reply for a request. */
export class ReplayMiss extends named("ReplayMiss", true) {}
/** A model replied, but not in a form we can use. */
export class ReplyFormatError extends named("ReplyFormatError", false) {}
/** The store could not be used (a damaged file, no permission, a database that is down); the message names it and what to do. */
export class StoreError extends named("StoreError", true) {}

const RUN_ERROR = markerOf("RunError");
/** A run failed for a reason of its own (no plan could be made, unknown issue, …). */
export class RunError extends DissentError {
  static readonly errorName: string = "RunError";
  /** `name`: a subclass's own (a subclass dissent never heard of is still a RunError). */
  constructor(message: string, options: { cause?: unknown; name?: string } = {}) {
    super(options.name ?? "RunError", message, options.cause !== undefined ? { cause: options.cause } : undefined);
    mark(this, RUN_ERROR);
  }
  static override isInstance(e: unknown): e is RunError {
    return hasMarker(e, RUN_ERROR);
  }
}

const TRACKER_AUTH = markerOf("TrackerAuthError");
/** The tracker refused our token (GitHub 401): retrying will not help, so the factory stops (docs/factory.md). */
export class TrackerAuthError extends RunError {
  static override readonly errorName: string = "TrackerAuthError";
  override readonly fatal: boolean = true;
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, name: "TrackerAuthError" });
    mark(this, TRACKER_AUTH);
  }
  static override isInstance(e: unknown): e is TrackerAuthError {
    return hasMarker(e, TRACKER_AUTH);
  }
}

const INTERRUPTED = markerOf("Interrupted");
/** The user interrupted (Ctrl-C) or the process was asked to stop (SIGTERM). */
export class Interrupted extends DissentError {
  static readonly errorName = "Interrupted";
  override readonly fatal: boolean = true;
  /** Which signal stopped the run (130 on SIGINT, 143 on SIGTERM: docs/errors.md). */
  readonly signal: "SIGINT" | "SIGTERM";
  constructor(message: string, options: { signal?: "SIGINT" | "SIGTERM"; cause?: unknown } = {}) {
    super("Interrupted", message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.signal = options.signal ?? "SIGINT";
    mark(this, INTERRUPTED);
  }
  static override isInstance(e: unknown): e is Interrupted {
    return hasMarker(e, INTERRUPTED);
  }
}

const LEASE_HELD = markerOf("LeaseHeld");
/** Another planner holds the issue (docs/issue.md: one planner per issue). */
export class LeaseHeld extends DissentError {
  static readonly errorName = "LeaseHeld";
  override readonly fatal: boolean = true;
  /** Who holds the lease, and since when. */
  readonly holder: { host: string; pid: number; since: string };
  constructor(message: string, options: { holder: { host: string; pid: number; since: string } }) {
    super("LeaseHeld", message);
    this.holder = options.holder;
    mark(this, LEASE_HELD);
  }
  static override isInstance(e: unknown): e is LeaseHeld {
    return hasMarker(e, LEASE_HELD);
  }
}

/** What a ceiling counts: model calls, dollars, planning cycles, agent attempts, agent milliseconds. */
export type BudgetUnit = "calls" | "usd" | "cycles" | "attempts" | "ms";

/** A ceiling's data: its maximum, what was used, in what unit (default `calls`), and the setting that raises it. */
export interface BudgetOptions {
  max: number;
  used: number;
  unit?: BudgetUnit;
  setting?: string;
}

const BUDGET = markerOf("BudgetExceeded");
/** A per-issue ceiling (calls, dollars, planning cycles, agent attempts or time) would be crossed; `setting` names the one to raise. */
export class BudgetExceeded extends DissentError {
  static readonly errorName = "BudgetExceeded";
  readonly max: number;
  readonly used: number;
  readonly unit: BudgetUnit;
  readonly setting: string | undefined;
  constructor(message: string, options: BudgetOptions) {
    super("BudgetExceeded", message);
    this.max = options.max;
    this.used = options.used;
    this.unit = options.unit ?? "calls";
    this.setting = options.setting;
    mark(this, BUDGET);
  }
  static override isInstance(e: unknown): e is BudgetExceeded {
    return hasMarker(e, BUDGET);
  }
}

/** What a failed model call carries: which provider and model, how it failed, after how many attempts. */
export interface ProviderFailure {
  provider: string;
  model: string;
  kind: FailureKind;
  status?: number;
  retryAfterMs?: number;
  attempts: number;
}

/** A provider error's data: the failure (unknown fields default: no provider, kind `fatal`, one attempt), the calls tried, a subclass's name. */
export interface ProviderErrorOptions extends Partial<ProviderFailure> {
  calls?: readonly unknown[];
  cause?: unknown;
  name?: string;
}

const PROVIDER = markerOf("ProviderError");
/** A provider could not be reached or kept failing after retries (and fallback, if any). */
export class ProviderError extends DissentError {
  static readonly errorName: string = "ProviderError";
  readonly provider: string;
  readonly model: string;
  readonly kind: FailureKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly attempts: number;
  /** The call records of every target tried (for `run.calls`). */
  readonly calls: readonly unknown[];
  constructor(message: string, options: ProviderErrorOptions = {}) {
    super(options.name ?? "ProviderError", message, options.cause !== undefined ? { cause: options.cause } : undefined);
    mark(this, PROVIDER);
    this.provider = options.provider ?? "";
    this.model = options.model ?? "";
    this.kind = options.kind ?? "fatal";
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.attempts = options.attempts ?? 1;
    this.calls = options.calls ?? [];
  }
  static override isInstance(e: unknown): e is ProviderError {
    return hasMarker(e, PROVIDER);
  }
}

const PROVIDER_AUTH = markerOf("ProviderAuthError");
/** A provider refused our credentials or quota (401, 403, insufficient quota): never soft-failed. */
export class ProviderAuthError extends ProviderError {
  static override readonly errorName: string = "ProviderAuthError";
  override readonly fatal: boolean = true;
  constructor(message: string, options: Omit<ProviderErrorOptions, "name"> = {}) {
    super(message, { kind: "auth", ...options, name: "ProviderAuthError" });
    mark(this, PROVIDER_AUTH);
  }
  static override isInstance(e: unknown): e is ProviderAuthError {
    return hasMarker(e, PROVIDER_AUTH);
  }
}

/**
 * One policy for "ends the run" versus "degrades" (a critic or challenger that fails contributes
 * nothing; these never do): the error's own `fatal` — the user's configuration, credentials and
 * quota, an interruption, a replay miss, the frozen limits, a lost lease, a store that cannot be used.
 */
export function isFatal(e: unknown): boolean {
  return DissentError.isInstance(e) && e.fatal;
}

/** Message of any thrown value, for one-line reports. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** The `code` of a Node, undici, SQLite or PostgreSQL error (`ENOENT`, `ECONNREFUSED`, `SQLITE_BUSY`, `55P03`), when it has one. */
export function codeOf(e: unknown): string | undefined {
  const code = typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

const GIT = markerOf("GitError");
/** A git command failed (docs/implement.md): the message names the command and git's own line. */
export class GitError extends RunError {
  static override readonly errorName: string = "GitError";
  /** The git arguments (never user text interpolated into a shell). */
  readonly args: readonly string[];
  constructor(message: string, options: { args?: readonly string[]; cause?: unknown } = {}) {
    super(message, { ...(options.cause !== undefined ? { cause: options.cause } : {}), name: "GitError" });
    this.args = options.args ?? [];
    mark(this, GIT);
  }
  static override isInstance(e: unknown): e is GitError {
    return hasMarker(e, GIT);
  }
}

const ESCAPED = markerOf("AgentEscaped");
/** The coding agent changed files outside its worktree (docs/implement.md safety): the run stops, nothing is pushed. */
export class AgentEscaped extends RunError {
  static override readonly errorName: string = "AgentEscaped";
  override readonly fatal: boolean = true;
  /** The paths outside the worktree that changed. */
  readonly paths: readonly string[];
  /** The agent attempt (over the life) that wrote them. */
  readonly attempt: number;
  constructor(message: string, options: { paths: readonly string[]; attempt: number }) {
    super(message, { name: "AgentEscaped" });
    this.paths = options.paths;
    this.attempt = options.attempt;
    mark(this, ESCAPED);
  }
  static override isInstance(e: unknown): e is AgentEscaped {
    return hasMarker(e, ESCAPED);
  }
}
