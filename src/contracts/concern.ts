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

/** One finding of a critic, the spec judge or the plan reviewer. */
export const Finding = z.object({
  severity: Severity,
  concern: z.string().min(1),
  category: z.string().optional(),
  evidence: z.string().optional(),
  dimension: z.string().optional(),
  human_required: z.boolean().optional(),
});
export type Finding = z.infer<typeof Finding>;

/** Reply of critics, `spec.judge` and `plan_reviewer`. */
export const FindingsReply = z.object({
  findings: z.array(Finding),
  addressed: z.array(AddressedItem).optional(),
});
export type FindingsReply = z.infer<typeof FindingsReply>;

/** The JSON form of a producer reply; plain markdown is accepted too. */
export const ProducerReply = z.object({
  artifact: z.string().min(1),
  addressed: z.array(AddressedItem).optional(),
});
export type ProducerReply = z.infer<typeof ProducerReply>;

/** Reply of `spec.ac_generator`. */
export const AcceptanceCriteriaReply = z.object({
  acceptance_criteria: z.array(z.string().min(1)).min(1),
  addressed: z.array(AddressedItem).optional(),
});
export type AcceptanceCriteriaReply = z.infer<typeof AcceptanceCriteriaReply>;

export const StageOutcome = z.enum(["converged", "exhausted", "oscillation", "budget", "crashed"]);
export type StageOutcome = z.infer<typeof StageOutcome>;

export const StagePhase = z.enum(["discover", "shape", "plan", "spec"]);
export type StagePhase = z.infer<typeof StagePhase>;

/** Metrics of one finished AdversarialRetryLoop run. */
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
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cycle: z.number().int(),
});
export type StageRun = z.infer<typeof StageRun>;

/** An issue's adversarial state: the fold of its events. */
export const AdversarialState = z.object({
  phase: z.string().nullable(),
  current_stage: z.string().nullable(),
  route: z.enum(["trivial", "load_bearing"]).nullable(),
  pending_concerns: z.array(Concern),
  addressed_concerns: z.array(ConcernResolution),
  stage_history: z.array(StageRun),
});
export type AdversarialState = z.infer<typeof AdversarialState>;
