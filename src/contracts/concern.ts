import { z } from "zod";

const upper = (v: unknown) => (typeof v === "string" ? v.trim().toUpperCase() : v);

/** Severity of a pipeline finding or Concern. Models may write it in any case. */
export const Severity = z.preprocess(upper, z.enum(["CRITICAL", "HIGH", "MEDIUM", "LOW"]));
export type Severity = "CRITICAL" | "HIGH" | "MEDIUM" | "LOW";

/** Phases that raise concerns: the four adversarial stages, and the plan reviewer. */
export const ConcernPhase = z.enum(["discover", "shape", "plan", "spec", "review"]);
export type ConcernPhase = z.infer<typeof ConcernPhase>;

/** Where a forwarded concern must be addressed (ADR-0064 "wide-loop forwarding"). */
export const MustAddressBy = z.enum(["shape", "plan", "spec", "review", "implement"]);
export type MustAddressBy = z.infer<typeof MustAddressBy>;

/** The lingua franca of every adversarial voter (ADR-0064, src/pending_concerns.py:Concern). */
export const Concern = z.object({
  id: z.string(),
  phase: ConcernPhase,
  stage: z.string(),
  raised_by: z.string(),
  severity: Severity,
  category: z.string(),
  concern: z.string(),
  evidence: z.string(),
  must_address_by: MustAddressBy,
  human_required: z.boolean(),
  fingerprint: z.string(),
  raised_at: z.string(),
});
export type Concern = z.infer<typeof Concern>;

/** How a concern was resolved. */
export const ResolutionKind = z.enum(["trivial", "deferred", "addressed-in-code", "addressed-in-test", "ignored"]);
export type ResolutionKind = z.infer<typeof ResolutionKind>;

/** A record that a pending concern was answered, by whom and how. */
export const ConcernResolution = z.object({
  concern_id: z.string(),
  fingerprint: z.string(),
  resolution_kind: ResolutionKind,
  note: z.string(),
  resolved_by: z.string(),
  resolved_at: z.string(),
});
export type ConcernResolution = z.infer<typeof ConcernResolution>;

/** One item of a producer's or reviewer's `addressed` list. */
export const AddressedItem = z.object({
  concern_id: z.string(),
  resolution_kind: z.preprocess((v) => (typeof v === "string" ? v.trim().toLowerCase() : v), ResolutionKind),
  note: z.string().default(""),
});
export type AddressedItem = z.infer<typeof AddressedItem>;

/** An optional string a model may also write as null. */
const optionalText = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined)
  .optional();

/** One finding of a critic, the spec judge or the plan reviewer. */
export const Finding = z.object({
  severity: Severity,
  concern: z.string().min(1),
  category: optionalText,
  evidence: optionalText,
  dimension: optionalText,
  human_required: z
    .boolean()
    .nullish()
    .transform((v) => v ?? undefined)
    .optional(),
});
export type Finding = z.infer<typeof Finding>;

/** An `addressed` list: items naming no valid resolution are dropped, not the whole reply with them. */
const AddressedList = z.preprocess(
  (v) => (Array.isArray(v) ? v.filter((item) => AddressedItem.safeParse(item).success) : v),
  z.array(AddressedItem),
);

/** Reply of critics, `spec.judge` and `plan_reviewer`. */
export const FindingsReply = z.object({
  findings: z.array(Finding),
  addressed: AddressedList.optional(),
});
export type FindingsReply = z.infer<typeof FindingsReply>;

/** The JSON form of a producer reply; plain markdown is accepted too. */
export const ProducerReply = z.object({
  artifact: z.string().min(1),
  addressed: AddressedList.optional(),
});
export type ProducerReply = z.infer<typeof ProducerReply>;

/** Reply of `spec.ac_generator`. */
export const AcceptanceCriteriaReply = z.object({
  acceptance_criteria: z.array(z.string().min(1)).min(1),
  addressed: AddressedList.optional(),
});
export type AcceptanceCriteriaReply = z.infer<typeof AcceptanceCriteriaReply>;

export const StageOutcome = z.enum(["converged", "exhausted", "oscillation", "budget", "crashed"]);
export type StageOutcome = z.infer<typeof StageOutcome>;

export const StagePhase = z.enum(["discover", "shape", "plan", "spec"]);
export type StagePhase = z.infer<typeof StagePhase>;

/** One finished stage as `issue plan --json` reports it (CONTRACT §4). */
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
});
export type StageRun = z.infer<typeof StageRun>;

/** A StageRun as the loop measures it and the event log keeps it: with tokens and its planning cycle. */
export const StageRecord = StageRun.extend({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cycle: z.number().int(),
});
export type StageRecord = z.infer<typeof StageRecord>;

/** The contract's view of a record: exactly the StageRun keys. */
export function toStageRun(r: StageRecord): StageRun {
  return {
    stage: r.stage,
    phase: r.phase,
    rounds: r.rounds,
    retries: r.retries,
    outcome: r.outcome,
    concerns_raised: r.concerns_raised,
    concerns_forwarded: r.concerns_forwarded,
    duration_ms: r.duration_ms,
    calls: r.calls,
  };
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
