import type { AddressedItem, Concern, Finding, MustAddressBy, StageOutcome, StagePhase } from "../contracts/concern.js";
import type { TallyRules } from "./tally.js";

/** What the loop needs to know of a stage. */
export interface StageSpec {
  stage: string;
  phase: StagePhase;
  /** The phase that receives this stage's unresolved concerns. */
  mustAddressBy: MustAddressBy;
  /** How the tally weighs this stage's findings beyond the council rule (docs/issue.md). */
  rules?: TallyRules;
}

/** Counters a stage reports in its StageRun. */
export interface LoopCounts {
  criticFailures: number;
  ungrounded: number;
  invalid: number;
  /** Lone HIGHs put to the verifier. */
  secondOpinions: number;
  /** Lone HIGHs kept as MEDIUM without a second opinion (over the cap, or no budget left). */
  secondOpinionsSkipped: number;
  /** Producer replies with a fault they reported (unknown concern ids, no Decisions section). */
  producerWarnings: number;
}

/**
 * Everything one run of the loop knows between rounds (DESIGN: a rule engine with a pure core). A
 * round reads and updates it; `finish` turns it into the stage's record and events without side effects.
 */
export interface LoopState<A> {
  readonly stage: StageSpec;
  /** Rounds started (a round refused for budget is not counted). */
  round: number;
  /** The last artifact produced (undefined only if no round could run). */
  artifact: A | undefined;
  /** Whether the council voted on `artifact` (false when the round that made it ended without a vote). */
  votedOnArtifact: boolean;
  /** Blocking and advisory concerns of the last voting round. */
  blocking: Concern[];
  advisory: Concern[];
  /** The producer's `addressed` items, one list per round it answered. */
  addressed: { round: number; items: AddressedItem[] }[];
  /** Every concern that blocked a round, by id, with the last round it blocked. */
  blocked: Map<string, { concern: Concern; round: number }>;
  /** Fingerprints of every concern the stage raised. */
  raised: Set<string>;
  /** Each critic's findings of the last round it answered (docs/issue.md round memory). */
  memory: Map<string, Finding[]>;
  /** Rounds in which each critic failed. */
  failedRounds: Map<string, number>;
  /** The blocking fingerprints of the last voting round, for oscillation. */
  previousFingerprints: ReadonlySet<string> | undefined;
  allFailedInARow: number;
  votedRounds: number;
  lastCriticError: string;
  /** Why the last artifact is empty of content (a producer fault: nothing to review), when it is. */
  empty: string | undefined;
  outcome: StageOutcome | undefined;
  counts: LoopCounts;
}

/** The state before the first round. */
export function startState<A>(stage: StageSpec): LoopState<A> {
  return {
    stage,
    round: 0,
    artifact: undefined,
    votedOnArtifact: false,
    blocking: [],
    advisory: [],
    addressed: [],
    blocked: new Map(),
    raised: new Set(),
    memory: new Map(),
    failedRounds: new Map(),
    previousFingerprints: undefined,
    allFailedInARow: 0,
    votedRounds: 0,
    lastCriticError: "",
    empty: undefined,
    outcome: undefined,
    counts: { criticFailures: 0, ungrounded: 0, invalid: 0, secondOpinions: 0, secondOpinionsSkipped: 0, producerWarnings: 0 },
  };
}
