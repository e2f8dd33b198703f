import { z } from "zod";
import { CodeLocation, StageContext } from "./code-context.js";
import { isObject, issueLine, lenientEnum, optionalText, readList, type Read } from "./lenient.js";

/** Severity of a pipeline finding or Concern. Models may write it in any case ("High" is HIGH). */
export const SEVERITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW"] as const;
export const Severity = lenientEnum(SEVERITIES);
/** CRITICAL, HIGH, MEDIUM or LOW. */
export type Severity = (typeof SEVERITIES)[number];

/** Severity order, for "at least HIGH" comparisons. */
export const SEVERITY_RANK: Record<Severity, number> = { CRITICAL: 4, HIGH: 3, MEDIUM: 2, LOW: 1 };
/** CRITICAL or HIGH: the severities that block, need grounded evidence, and need more than a producer's word to settle. */
export const isSerious = (s: Severity) => s === "CRITICAL" || s === "HIGH";

/** Phases that raise concerns: the four adversarial stages, the plan reviewer, and the review of an implementation (docs/implement.md). */
export const ConcernPhase = z.enum(["discover", "shape", "plan", "spec", "review", "implement"]);
export type ConcernPhase = z.infer<typeof ConcernPhase>;

/** Where a forwarded concern must be addressed (ADR-0064 "wide-loop forwarding"). */
export const MustAddressBy = z.enum(["shape", "plan", "spec", "review", "implement", "pull_request"]);
export type MustAddressBy = z.infer<typeof MustAddressBy>;

/** What a second opinion on a lone HIGH decided (docs/issue.md, "How a HIGH becomes blocking"). */
export const VERDICTS = ["confirm", "refute"] as const;
export const Verdict = lenientEnum(VERDICTS);
/** confirm or refute. */
export type Verdict = (typeof VERDICTS)[number];

/** The verifier's answer on a lone HIGH, as recorded on the Concern: its verdict, its reason, and the role that gave it. */
export const SecondOpinion = z.object({ verdict: Verdict, reason: z.string(), by: z.string() });
export type SecondOpinion = z.infer<typeof SecondOpinion>;

/**
 * Why a concern's severity is not the one its critic wrote (set with `raised_severity`): its quote is
 * not in the artifact (`ungrounded`), no second critic or verifier backed a lone HIGH
 * (`not_corroborated`), or the verifier refuted it (`refuted`).
 */
export const SEVERITY_CHANGES = ["ungrounded", "not_corroborated", "refuted"] as const;
export type SeverityChange = (typeof SEVERITY_CHANGES)[number];

/** The lingua franca of every adversarial voter (ADR-0064, src/pending_concerns.py:Concern). */
export const Concern = z.object({
  id: z.string(),
  phase: ConcernPhase,
  stage: z.string(),
  raised_by: z.string(),
  severity: Severity,
  /** The severity its critic wrote, where the tally changed it (a lone or ungrounded HIGH kept as MEDIUM). docs/issue.md. */
  raised_severity: Severity.optional(),
  /** Why the severity changed, when `raised_severity` is set (docs/issue.md). */
  severity_change: z.enum(SEVERITY_CHANGES).optional(),
  /** The verifier's verdict on a lone HIGH (docs/issue.md): confirmed ones block, refuted ones are MEDIUM. */
  second_opinion: SecondOpinion.optional(),
  /** The wiki entry (a known gap) the critic tied this finding to; such a HIGH blocks (docs/issue.md). */
  known_gap: z.string().optional(),
  /** Other critics of the round that raised the same concern (same fingerprint, or overlapping evidence), merged into this one. */
  also_raised_by: z.array(z.string()).optional(),
  category: z.string(),
  concern: z.string(),
  evidence: z.string(),
  /**
   * Its evidence quotes an earlier draft: after a replan it is in none of the current artifacts
   * (docs/issue.md "Replanning"). Shown so to the reviewer; a voice quoting the new draft re-grounds it.
   */
  evidence_stale: z.boolean().optional(),
  /** Its evidence quotes the code block its critic was given, not the artifact: the file and lines (docs/issue.md "Findings about the code"). */
  evidence_in_code: CodeLocation.optional(),
  must_address_by: MustAddressBy,
  human_required: z.boolean(),
  fingerprint: z.string(),
  raised_at: z.string(),
});
export type Concern = z.infer<typeof Concern>;

/** How a concern was resolved. */
export const RESOLUTION_KINDS = ["trivial", "deferred", "addressed-in-code", "addressed-in-test", "ignored"] as const;
export const ResolutionKind = lenientEnum(RESOLUTION_KINDS);
/** trivial, deferred, addressed-in-code, addressed-in-test or ignored. */
export type ResolutionKind = (typeof RESOLUTION_KINDS)[number];

/**
 * A record that a pending concern was answered, by whom and how. `settled: false` is a producer's
 * claim on a CRITICAL, HIGH or human_required concern: the concern stays pending until the plan
 * reviewer confirms it or a person resolves it (docs/issue.md).
 */
export const ConcernResolution = z.object({
  concern_id: z.string(),
  fingerprint: z.string(),
  resolution_kind: ResolutionKind,
  note: z.string(),
  resolved_by: z.string(),
  resolved_at: z.string(),
  settled: z.boolean().optional(),
});
export type ConcernResolution = z.infer<typeof ConcernResolution>;

/**
 * Whether a resolution is a claim that leaves its concern pending (docs/issue.md): a producer's word
 * on a CRITICAL, HIGH or human_required concern (`settled: false`), and any deferral not made by a
 * person — "later" answers nothing, so the concern stays pending and visible to the reviewer.
 */
export const isClaim = (r: Pick<ConcernResolution, "settled" | "resolution_kind" | "resolved_by">): boolean =>
  r.settled === false || (r.resolution_kind === "deferred" && r.resolved_by !== "human");

/** One item of a producer's or reviewer's `addressed` list. */
export const AddressedItem = z.object({
  concern_id: z.preprocess((v) => (typeof v === "number" ? String(v) : v), z.string().trim().min(1)),
  resolution_kind: ResolutionKind,
  note: z.preprocess((v) => v ?? "", z.string()),
});
export type AddressedItem = z.infer<typeof AddressedItem>;

const humanFlag = z.preprocess(
  (v) => (v === "true" ? true : v === "false" ? false : v),
  z
    .boolean()
    .nullish()
    .transform((v) => v ?? undefined)
    .optional(),
);

/**
 * One finding of a critic, the spec judge or the plan reviewer. `evidence` comes first: a
 * CRITICAL or HIGH finding must quote the artifact under review (docs/issue.md).
 */
export const Finding = z.object({
  evidence: optionalText,
  /** The id of a known gap from the request's `known_gaps` block this finding repeats (docs/issue.md). */
  known_gap: optionalText,
  severity: Severity,
  category: optionalText,
  dimension: optionalText,
  concern: z.string().trim().min(1),
  human_required: humanFlag,
});
export type Finding = z.infer<typeof Finding>;

/** Reply of critics, `spec.judge` and `plan_reviewer` (the JSON Schema sent as response_format). */
export const FindingsReply = z.object({
  findings: z.array(Finding),
  addressed: z.array(AddressedItem).optional(),
});
export type FindingsReply = z.infer<typeof FindingsReply>;

/**
 * Reads a findings reply leniently: a finding or addressed item that does not fit is dropped and
 * counted; a bare JSON array is read as the findings (docs/configuration.md).
 */
export function readFindingsReply(value: unknown): Read<FindingsReply> {
  if (Array.isArray(value)) {
    const list = readList(value, Finding);
    // A bare array with items but none a finding is prose in brackets, not a reply.
    if (!list || (value.length > 0 && list.items.length === 0)) return { ok: false, error: "a list that holds no findings" };
    return { ok: true, value: { findings: list.items }, invalid: list.invalid, dropped: list.dropped };
  }
  if (!isObject(value)) return { ok: false, error: "not an object" };
  if (!("findings" in value)) return { ok: false, error: "findings: missing" };
  const findings = readList(value.findings, Finding);
  if (!findings) return { ok: false, error: "findings: expected a list" };
  const addressed = readList(value.addressed, AddressedItem);
  return {
    ok: true,
    value: { findings: findings.items, ...(addressed?.items.length ? { addressed: addressed.items } : {}) },
    invalid: findings.invalid,
    dropped: findings.dropped,
  };
}

/** Reads an `addressed` list: items that name no valid resolution are dropped. */
export function readAddressed(value: unknown): AddressedItem[] {
  return readList(value, AddressedItem)?.items ?? [];
}

/** Reply of `spec.ac_generator`. */
export const AcceptanceCriteriaReply = z.object({
  acceptance_criteria: z.array(z.string().min(1)).min(1),
  addressed: z.array(AddressedItem).optional(),
});
export type AcceptanceCriteriaReply = z.infer<typeof AcceptanceCriteriaReply>;

/** Reads the acceptance-criteria reply; empty or non-text criteria are dropped. */
export function readCriteriaReply(value: unknown): Read<AcceptanceCriteriaReply> {
  if (!isObject(value)) return { ok: false, error: "not an object" };
  const list = readList(value.acceptance_criteria, z.string().trim().min(1));
  if (!list || list.items.length === 0) return { ok: false, error: "acceptance_criteria: expected a non-empty list of strings" };
  const addressed = readAddressed(value.addressed);
  return { ok: true, value: { acceptance_criteria: list.items, ...(addressed.length ? { addressed } : {}) }, invalid: list.invalid, dropped: list.dropped };
}

/**
 * The verifier's reply on one lone HIGH (docs/issue.md): it quotes the artifact and reasons before it
 * decides, so `evidence` and `reason` come before `verdict` in the schema.
 */
export const VerifierReply = z.object({
  evidence: optionalText,
  reason: z.preprocess((v) => v ?? "", z.string()),
  verdict: Verdict,
});
export type VerifierReply = z.infer<typeof VerifierReply>;

/** Reads the verifier's reply leniently ("Confirm", "REFUTE"); a reply with no verdict is not one. */
export function readVerifierReply(value: unknown): Read<VerifierReply> {
  if (!isObject(value)) return { ok: false, error: "not an object" };
  const r = VerifierReply.safeParse(value);
  if (!r.success) return { ok: false, error: issueLine(r.error) };
  return { ok: true, value: r.data, invalid: 0, dropped: [] };
}

/** The JSON form of a producer reply; plain markdown (with a fenced `addressed` block) is the usual one. */
export const ProducerReply = z.object({
  artifact: z.string().min(1),
  addressed: z.array(AddressedItem).optional(),
});
export type ProducerReply = z.infer<typeof ProducerReply>;

export const StageOutcome = z.enum(["converged", "exhausted", "oscillation", "budget", "crashed"]);
export type StageOutcome = z.infer<typeof StageOutcome>;

export const StagePhase = z.enum(["discover", "shape", "plan", "spec", "implement"]);
export type StagePhase = z.infer<typeof StagePhase>;

/** One finished stage as `issue plan --json` reports it (docs/issue.md, r2 fields included). */
export const StageRun = z.object({
  stage: z.string(),
  phase: StagePhase,
  rounds: z.number().int(),
  retries: z.number().int(),
  outcome: StageOutcome,
  concerns_raised: z.number().int(),
  concerns_forwarded: z.number().int(),
  duration_ms: z.number(),
  calls: z.number().int(),
  critic_failures: z.number().int(),
  ungrounded_findings: z.number().int(),
  invalid_findings: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  /** Of `input_tokens`, those read from the provider's prompt cache (docs/serve.md "Cost"); always written, absent from records made before it was counted. */
  cached_input_tokens: z.number().int().optional(),
  /** Of `input_tokens`, those written to the provider's prompt cache (Anthropic reports them); present when any were. */
  cache_write_input_tokens: z.number().int().optional(),
  cost_usd: z.number().nullable(),
  /** Lone HIGHs put to the verifier (each one call; failed calls included). docs/issue.md */
  second_opinions: z.number().int(),
  /** Lone HIGHs kept as MEDIUM without a second opinion: beyond 3 in a round, or no budget left for one. */
  second_opinions_skipped: z.number().int(),
  /** Producer replies that named concern ids they were not given, or lacked the `## Decisions` section (each a warning line). */
  producer_warnings: z.number().int(),
  /** The code blocks the stage's requests carried, when the issue has a repository or context files (docs/issue.md "The code the councils read"). */
  code_context: z.array(StageContext).optional(),
});
export type StageRun = z.infer<typeof StageRun>;

/** A StageRun as the event log keeps it: with its planning cycle. */
export const StageRecord = StageRun.extend({ cycle: z.number().int() });
export type StageRecord = z.infer<typeof StageRecord>;

/** The contract's view of a record: exactly the StageRun keys. */
export function toStageRun(r: StageRecord): StageRun {
  const { cycle: _cycle, ...run } = r;
  return run;
}

/** An issue's adversarial state: the fold of its events. */
export const AdversarialState = z.object({
  phase: z.string().nullable(),
  current_stage: z.string().nullable(),
  route: z.enum(["trivial", "load_bearing"]).nullable(),
  pending_concerns: z.array(Concern),
  addressed_concerns: z.array(ConcernResolution),
  stage_history: z.array(StageRecord),
});
export type AdversarialState = z.infer<typeof AdversarialState>;
