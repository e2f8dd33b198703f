/**
 * Errors you can branch on: each has a stable `name`, an exit code for the CLI,
 * and a static `isInstance` that works across module copies (as the AI SDK's do).
 */
const MARKER = Symbol.for("dissent.error");

export class DissentError extends Error {
  readonly [MARKER] = true;
  /** CLI exit code (CONTRACT §6): 1 run failed, 2 usage or configuration. */
  readonly exitCode: number;
  constructor(name: string, message: string, exitCode: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = name;
    this.exitCode = exitCode;
  }
  static isInstance(e: unknown): e is DissentError {
    return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[MARKER] === true;
  }
}

function named<N extends string>(name: N, exitCode: number) {
  return class extends DissentError {
    static readonly errorName: N = name;
    constructor(message: string, options?: { cause?: unknown }) {
      super(name, message, exitCode, options);
    }
    static override isInstance(e: unknown): e is DissentError {
      return DissentError.isInstance(e) && e.name === name;
    }
  };
}

/** Bad flags or arguments. */
export class UsageError extends named("UsageError", 2) {}
/** A config file or value that cannot be used; the message names the file (and line). */
export class ConfigError extends named("ConfigError", 2) {}
/** ADR-009 §1: code tried to exceed MAX_AUDIT_PASSES or MAX_REVISION_PASSES. */
export class AuditLimitExceeded extends named("AuditLimitExceeded", 1) {}
/** `--replay` found no cached reply for a request. */
export class ReplayMiss extends named("ReplayMiss", 1) {}
/** The per-issue call budget would be crossed. */
export class BudgetExceeded extends named("BudgetExceeded", 1) {}
/** A provider refused our credentials or quota (401, 403, insufficient quota): never soft-failed. */
export class ProviderAuthError extends named("ProviderAuthError", 1) {}
/** A provider could not be reached or kept failing after retries (and fallback, if any). */
export class ProviderError extends named("ProviderError", 1) {}
/** A model replied, but not in a form we can use. */
export class ReplyFormatError extends named("ReplyFormatError", 1) {}
/** A run failed for a reason of its own (no plan could be made, unknown issue, …). */
export class RunError extends named("RunError", 1) {}
/** The user interrupted (Ctrl-C / SIGTERM). */
export class Interrupted extends named("Interrupted", 130) {}

/** Message of any thrown value, for one-line reports. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
