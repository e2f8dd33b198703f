import { z } from "zod";

/** The six audit categories of ADR-008 §2.1. */
export const AuditCategory = z.enum([
  "policy_compliance",
  "boundary_violation",
  "factual_risk",
  "unverifiable_claim",
  "internal_contradiction",
  "missing_verification",
]);
export type AuditCategory = z.infer<typeof AuditCategory>;

/** Severity of an audit concern (lower case, as the challenger writes it). */
export const AuditSeverity = z.enum(["critical", "high", "medium", "low"]);
export type AuditSeverity = z.infer<typeof AuditSeverity>;

const lower = (v: unknown) => (typeof v === "string" ? v.trim().toLowerCase() : v);

/** One concern raised by the challenger about the draft. Case of enums and a null `suggested_fix` are forgiven. */
export const AuditConcern = z.object({
  category: z.preprocess(lower, AuditCategory),
  severity: z.preprocess(lower, AuditSeverity),
  evidence: z.preprocess((v) => v ?? "", z.string()),
  concern: z.string().min(1),
  suggested_fix: z
    .string()
    .nullish()
    .transform((v) => v ?? undefined)
    .optional(),
});
export type AuditConcern = z.infer<typeof AuditConcern>;

/** The challenger's structured reply (ADR-008 §2.1: "MUST produce structured JSON audit output"). */
export const AuditReply = z.object({
  verdict: z.preprocess(lower, z.enum(["pass", "needs_work"])),
  concerns: z.preprocess((v) => v ?? [], z.array(AuditConcern)),
});
export type AuditReply = z.infer<typeof AuditReply>;

/** Exactly what the challenger is given (ADR-009 §2) — nothing else. */
export const AuditInput = z.object({
  prompt: z.string(),
  executor_output: z.string(),
  constraints: z.array(z.string()),
  policies: z.array(z.string()),
});
export type AuditInput = z.infer<typeof AuditInput>;

/** One model call as reported in `run.calls`. */
export const CallRecord = z.object({
  role: z.string(),
  provider: z.string(),
  model: z.string(),
  route: z.enum(["primary", "secondary"]),
  cached: z.boolean(),
  latency_ms: z.number(),
  input_tokens: z.number(),
  output_tokens: z.number(),
});
export type CallRecord = z.infer<typeof CallRecord>;

/** Machine-readable audit metadata (ADR-009 §3). */
export const AuditMeta = z.object({
  audit_used: z.boolean(),
  audit_verdict: z.enum(["pass", "needs_work"]).nullable(),
  revised: z.boolean(),
  audit_passes: z.number().int().min(0).max(1),
  revision_passes: z.number().int().min(0).max(1),
  challenger_status: z.enum(["ok", "failed", "skipped"]),
  challenger_error: z.string().optional(),
  concerns: z.number().int().min(0),
  ungrounded_concerns: z.number().int().min(0),
});
export type AuditMeta = z.infer<typeof AuditMeta>;

/** `dissent run --json` output. */
export const RunOutput = z.object({
  final_output: z.string(),
  audit_meta: AuditMeta,
  run: z.object({ run_id: z.string(), calls: z.array(CallRecord) }),
});
export type RunOutput = z.infer<typeof RunOutput>;
