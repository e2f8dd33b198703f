import { z } from "zod";
import { isContentless } from "./content.js";
import { isObject, issueLine, lenientEnum, optionalText, readList, type Read } from "./lenient.js";

/** The six audit categories of ADR-008 §2.1. */
export const AUDIT_CATEGORIES = [
  "policy_compliance",
  "boundary_violation",
  "factual_risk",
  "unverifiable_claim",
  "internal_contradiction",
  "missing_verification",
] as const;
export const AuditCategory = lenientEnum(AUDIT_CATEGORIES);
export type AuditCategory = (typeof AUDIT_CATEGORIES)[number];

/** Severity of an audit concern (lower case, as the challenger writes it; any case is read). */
export const AuditSeverity = lenientEnum(["critical", "high", "medium", "low"]);
export type AuditSeverity = "critical" | "high" | "medium" | "low";

/** The challenger's verdict; "Needs Work" reads as `needs_work`. */
export const Verdict = lenientEnum(["pass", "needs_work"]);
export type Verdict = "pass" | "needs_work";

/**
 * One concern raised by the challenger about the draft. `evidence` comes first (docs/run.md):
 * models write fields in schema order, so the quote is written before the judgement.
 */
export const AuditConcern = z.object({
  evidence: z.preprocess((v) => v ?? "", z.string()),
  category: AuditCategory,
  severity: AuditSeverity,
  concern: z.string().trim().min(1),
  suggested_fix: optionalText,
});
export type AuditConcern = z.infer<typeof AuditConcern>;

/**
 * The challenger's structured reply (ADR-008 §2.1). `concerns` precedes `verdict`, so a model
 * quotes and reasons before it decides (docs/run.md).
 */
export const AuditReply = z.object({
  concerns: z.preprocess((v) => v ?? [], z.array(AuditConcern)),
  verdict: Verdict,
});
export type AuditReply = z.infer<typeof AuditReply>;

/**
 * Reads a challenger reply leniently: a concern with an unknown category or severity is dropped and
 * counted, and so is one whose text says nothing (no letter, or one character repeated). A reply
 * whose every concern says nothing is no audit at all — a weak model's grammar-valid filler (212
 * quote characters passed as `pass`, issue 32) — and is refused, so the challenger call fails visibly.
 */
export function readAuditReply(value: unknown): Read<AuditReply> {
  if (!isObject(value)) return { ok: false, error: "not an object" };
  const verdict = Verdict.safeParse(value.verdict);
  if (!verdict.success) return { ok: false, error: `verdict: ${issueLine(verdict.error)}` };
  const list = readList(value.concerns, AuditConcern);
  if (!list) return { ok: false, error: "concerns: expected a list" };
  const said = list.items.filter((c) => !isContentless(c.concern));
  const empty = list.items.filter((c) => isContentless(c.concern));
  if (empty.length > 0 && said.length === 0) {
    const first = empty[0]?.concern ?? "";
    const sample = `${first.slice(0, 12).replace(/`/g, "'")}${first.length > 12 ? "…" : ""}`;
    return {
      ok: false,
      error: `its ${empty.length === 1 ? "concern says" : `${empty.length} concerns say`} nothing (${first.length} character${first.length === 1 ? "" : "s"}: \`${sample}\`): a model too weak for the audit?`,
    };
  }
  return { ok: true, value: { concerns: said, verdict: verdict.data }, invalid: list.invalid + empty.length, dropped: [...list.dropped, ...empty] };
}

/** Exactly what the challenger is given (ADR-009 §2) — nothing else. */
export const AuditInput = z.object({
  prompt: z.string(),
  executor_output: z.string(),
  constraints: z.array(z.string()),
  policies: z.array(z.string()),
});
export type AuditInput = z.infer<typeof AuditInput>;

/** One model call as reported in `run.calls` (docs/run.md); `error` on a call that failed. */
export const CallRecord = z.object({
  role: z.string(),
  provider: z.string(),
  model: z.string(),
  route: z.enum(["primary", "secondary"]),
  cached: z.boolean(),
  /** The request's own time, from sending it to its end (retries included), without any wait for a slot. */
  latency_ms: z.number(),
  /** Time the call waited for a slot of its provider's `max_concurrency` (network calls only; 0 when it did not wait). */
  queue_ms: z.number().optional(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  /** Of `input_tokens`, those the provider read from its prompt cache (docs/serve.md "Cost"); 0 when it reported none. */
  cached_input_tokens: z.number().optional(),
  /** Of `input_tokens`, those the provider wrote to its prompt cache, where it reports them (Anthropic). */
  cache_write_input_tokens: z.number().optional(),
  /** USD, from the price table or the provider's `prices:`; null when the model's price is unknown (docs/serve.md). */
  cost_usd: z.number().nullable().optional(),
  error: z.string().optional(),
});
export type CallRecord = z.infer<typeof CallRecord>;

/** A grounded concern as `--json` shows it (docs/run.md): no `suggested_fix`. */
export const ShownConcern = z.object({
  category: z.string(),
  severity: z.string(),
  evidence: z.string(),
  concern: z.string(),
});
export type ShownConcern = z.infer<typeof ShownConcern>;

/** A fact a revision brought in that nothing the executor was given holds (docs/run.md, "Revision drift"). */
export const DriftToken = z.object({
  kind: z.enum(["url", "date", "number", "name"]),
  /** As the revision wrote it. */
  text: z.string(),
});
export type DriftToken = z.infer<typeof DriftToken>;

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
  invalid_concerns: z.number().int().min(0),
  /**
   * Present exactly when the draft was revised (`revised: true`): the numbers, dates, URLs and
   * capitalised names of the revision found in none of prompt, draft, constraints and policies —
   * an empty list when there are none (docs/run.md, "Revision drift").
   */
  revision_drift: z.array(DriftToken).optional(),
});
export type AuditMeta = z.infer<typeof AuditMeta>;

/** `dissent run --json` output. */
export const RunOutput = z.object({
  final_output: z.string(),
  audit_meta: AuditMeta,
  audit: z.object({ concerns: z.array(ShownConcern) }),
  run: z.object({ run_id: z.string(), calls: z.array(CallRecord), cost_usd: z.number().nullable().optional() }),
});
export type RunOutput = z.infer<typeof RunOutput>;
