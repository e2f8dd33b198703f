import type { MustAddressBy, StagePhase } from "../contracts/concern.js";
import type { StageSpec } from "../adversarial/retry-loop.js";
import { VERIFIER_ROLE } from "../adversarial/second-opinion.js";
import type { TransientLabel } from "../contracts/labels.js";
import { criteriaCodec, markdownCodec, type ArtifactCodec } from "./artifact-codecs.js";

/** The artifacts the pipeline builds, by name; `diff` is an implementation's, under review (docs/implement.md). */
export type ArtifactName = "brief" | "shape" | "plan" | "acceptance_criteria" | "diff";

/** One adversarial stage: a producer role re-run against a council of critic roles. */
export interface PipelineStage extends StageSpec {
  phase: StagePhase;
  producer: string;
  critics: readonly string[];
  mustAddressBy: MustAddressBy;
  /** Transient label on the issue while the stage runs (ADR-0064 "Three transient labels"). */
  label: TransientLabel;
  /** What the producer makes. */
  artifact: ArtifactName;
  /** How that artifact is read from the reply, shown to critics and kept (markdown, a criteria list). */
  codec: ArtifactCodec<unknown>;
  /** Earlier artifacts the producer is given. */
  inputs: readonly ArtifactName[];
  /** Earlier artifacts the critics see beside the artifact under review. */
  criticInputs: readonly ArtifactName[];
  /** The fixed category vocabulary this stage's critics write (docs/issue.md calibrated critics). */
  categories: readonly string[];
  /**
   * Whether the producer is given the pending concerns due at this phase. The criteria writer is not:
   * it writes nothing the plan does not build, so plan-level concerns go on to the reviewer instead.
   */
  answersPending: boolean;
}

/** The pipeline is a table (docs/issue.md): adding a voter is a line here and a persona file. */
export const STAGES: readonly PipelineStage[] = [
  {
    stage: "discovery_council",
    phase: "discover",
    producer: "discover.brief",
    critics: ["assumption_surfacer", "discovery.problem_sharpener", "discovery.existing_solution_hunter", "discovery.cheapest_test_advocate"],
    mustAddressBy: "shape",
    label: "dissent-adv-discover-running",
    artifact: "brief",
    codec: markdownCodec,
    inputs: [],
    criticInputs: [],
    categories: ["problem", "evidence", "assumption", "existing_solution", "validation", "scope"],
    answersPending: true,
  },
  {
    stage: "shape_council",
    phase: "shape",
    producer: "shape.writer",
    critics: ["shape.challenger", "shape.user_advocate", "shape.tech_lead", "shape.product_strategist"],
    mustAddressBy: "plan",
    label: "dissent-adv-shape-running",
    artifact: "shape",
    codec: markdownCodec,
    inputs: ["brief"],
    criticInputs: ["brief"],
    categories: ["scope", "approach", "user_impact", "architecture", "value", "risk"],
    answersPending: true,
  },
  {
    stage: "plan_council",
    phase: "plan",
    producer: "planner",
    critics: ["assumption_surfacer", "plan.builder", "plan.tester", "plan.risk_skeptic"],
    mustAddressBy: "spec",
    label: "dissent-adv-plan-running",
    artifact: "plan",
    codec: markdownCodec,
    inputs: ["brief", "shape"],
    criticInputs: ["shape"],
    categories: ["assumption", "buildability", "ordering", "test_gap", "risk", "rollback", "scope"],
    answersPending: true,
  },
  {
    // ADR-0064 puts the pre-implementation SpecJudge in the plan phase: it shares the plan label.
    stage: "spec_judge",
    phase: "spec",
    producer: "spec.ac_generator",
    critics: ["spec.judge"],
    mustAddressBy: "review",
    label: "dissent-adv-plan-running",
    artifact: "acceptance_criteria",
    codec: criteriaCodec,
    inputs: ["plan"],
    criticInputs: ["plan"],
    categories: ["missing_criterion", "not_in_plan", "contradiction", "unobservable", "plan_gap"],
    // Criteria-level findings (MEDIUM and up) go back to the criteria writer, which can fix them; a
    // defect of the plan itself (`plan_gap`) is forwarded to the reviewer with its severity (docs/issue.md).
    rules: { returnAtLeast: "MEDIUM", forwardCategories: ["plan_gap"] },
    answersPending: false,
  },
];

/** Roles whose CRITICAL concerns, two or more of them, escalate an issue to a human (docs/issue.md). */
export const ESCALATING_ROLES: ReadonlySet<string> = new Set(["assumption_surfacer", "plan.risk_skeptic"]);

/** The seven dimensions of the plan reviewer. */
export const REVIEW_DIMENSIONS = ["correctness", "edge_cases", "test_strategy", "scope_creep", "convention", "security", "reproduction"] as const;

/** Calls a stage needs for one round: its producer and every critic. */
export const roundCalls = (s: PipelineStage) => 1 + s.critics.length;

/**
 * Calls the stages after `index` need for their first round, plus the plan reviewer's call: what a
 * stage may never spend (docs/issue.md budget reservation).
 */
export function reserveAfter(index: number): number {
  return STAGES.slice(index + 1).reduce((n, s) => n + roundCalls(s), 0) + 1;
}

/** Every role `issue plan` may call, in the order it calls them (the verifier gives second opinions in councils of two or more). */
export const PIPELINE_ROLES: readonly string[] = [
  "complexity_gate",
  ...new Set(STAGES.flatMap((s) => [s.producer, ...s.critics])),
  VERIFIER_ROLE,
  "plan_reviewer",
];
