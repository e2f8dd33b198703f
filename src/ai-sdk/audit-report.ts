import type { SharedV3ProviderMetadata } from "@ai-sdk/provider";
import { z } from "zod";
import { AuditMeta, CallRecord, ShownConcern } from "../contracts/audit.js";

/**
 * Why a call went through unaudited: its prompt holds tool calls or results, its reply calls tools,
 * reports an error, has no text, was cut off at its length limit, or is larger than `maxReplyBytes`.
 */
export type AuditSkipReason = "tool_results" | "tool_calls" | "error" | "empty_reply" | "truncated" | "too_large";

/** What `onAudit` receives for every call through the wrapped model. */
export interface AuditReport {
  /** ADR-009 §3 metadata, as `dissent run --json` prints it (`audit_used: false` when the call was not audited). */
  audit_meta: AuditMeta;
  /** The grounded concerns (category, severity, evidence, concern), never `suggested_fix`. */
  concerns: ShownConcern[];
  /** Every call made: the wrapped model's draft (`executor`), the `challenger`, and the `revision` when there was one. */
  calls: CallRecord[];
  /** Set when the call went through unaudited, saying why. */
  skipped?: AuditSkipReason;
  /** Which of the model's operations it was: `generate` (generateText, generateObject) or `stream` (streamText, streamObject). */
  operation: "generate" | "stream";
}

/** `providerMetadata.dissent` of an audited reply: the audit's metadata, its grounded concerns and its calls. */
export interface DissentMetadata {
  audit_meta: AuditMeta;
  concerns: ShownConcern[];
  calls: CallRecord[];
}

let schema: z.ZodType<DissentMetadata> | undefined;
/** Built on first use: importing `dissent/ai-sdk` builds no schema it may never need. */
const dissentMetadataSchema = () => (schema ??= z.object({ audit_meta: AuditMeta, concerns: z.array(ShownConcern), calls: z.array(CallRecord) }));

/** The `providerMetadata` entry of an audited reply. */
export function dissentMetadata(report: AuditReport): SharedV3ProviderMetadata {
  return { dissent: { audit_meta: report.audit_meta, concerns: report.concerns, calls: report.calls } };
}

/**
 * The audit of a result, typed: pass `result.providerMetadata` (generateText, generateObject, or
 * streamText's awaited `providerMetadata`). Undefined when the call was not audited.
 */
export function auditOf(providerMetadata: SharedV3ProviderMetadata | undefined): DissentMetadata | undefined {
  const parsed = dissentMetadataSchema().safeParse(providerMetadata?.dissent);
  return parsed.success ? parsed.data : undefined;
}
