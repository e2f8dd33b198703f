import type { Concern, ConcernResolution, StageOutcome, StageRecord } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { fingerprint } from "./fingerprint.js";
import type { LoopState } from "./loop-state.js";

/** Network calls, tokens and dollars used so far; the loop reports its own share. `costUsd` is null once any call's price was unknown. */
export interface Usage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those read from and written to the provider's prompt cache (docs/serve.md "Cost"). */
  cachedInputTokens: number;
  cacheWriteTokens: number;
  costUsd: number | null;
}

/** What `finish` needs besides the state: where the stage runs, what it spent, and how to name synthetic concerns. */
export interface FinishEnv {
  issueId: string | null;
  cycle: number;
  /** The council, in order. */
  critics: readonly string[];
  usage: Usage;
  durationMs: number;
  /** The id of a synthetic concern (review_unavailable, review_incomplete) with this fingerprint. */
  idFor: (fingerprint: string, role: string) => string;
  now: () => string;
}

/** Why a forwarded concern left the stage (the ConcernForwarded reason). */
export type ForwardReason = "advisory" | "exhausted" | "oscillation" | "budget" | "crashed";

/** A stage's outcome: its final artifact, its StageRun record, and the concerns forwarded to later stages. */
export interface LoopResult<A> {
  /** The last artifact produced (undefined only if no round could run). */
  artifact: A | undefined;
  stageRun: StageRecord;
  /** Unresolved concerns handed to `mustAddressBy`, each also a ConcernForwarded event. */
  forwarded: Concern[];
  /**
   * The `addressed` items of the accepted draft: the producer's reply of a stage that converged.
   * A draft the council rejected settles nothing (docs/issue.md); on any other outcome this is empty.
   */
  addressed: LoopState<unknown>["addressed"][number]["items"];
  /** Blocking concerns of the last voting round (empty when converged). */
  unresolved: Concern[];
  /** Ids of concerns that blocked a round and that the council no longer raised against the final artifact. */
  resolved: string[];
}

/** What `finish` decided: the result, and the events to emit in order. */
export interface Finished<A> {
  result: LoopResult<A>;
  events: NewEvent[];
}

/** A concern the loop itself raises about its review (never a critic's finding). */
function synthetic<A>(
  state: LoopState<A>,
  env: FinishEnv,
  severity: "CRITICAL" | "HIGH" | "MEDIUM",
  category: string,
  text: string,
  evidence: string,
  by: string,
): Concern {
  const fp = fingerprint({ concern: text });
  return {
    id: env.idFor(fp, by),
    phase: state.stage.phase,
    stage: state.stage.stage,
    raised_by: by,
    severity,
    category,
    concern: text,
    evidence,
    must_address_by: state.stage.mustAddressBy,
    human_required: false,
    fingerprint: fp,
    raised_at: env.now(),
  };
}

/** The concerns that say the review itself fell short: an unreviewed artifact, a critic that never answered. */
function reviewGaps<A>(state: LoopState<A>, outcome: StageOutcome, env: FinishEnv): Concern[] {
  const out: Concern[] = [];
  const name = state.stage.stage;
  if (state.empty !== undefined) {
    // An artifact that says nothing is never passed on as reviewed: a person looks (docs/issue.md "Producer faults").
    out.push({
      ...synthetic(
        state,
        env,
        "CRITICAL",
        "producer_fault",
        `The producer of ${name} wrote an artifact that says nothing (${state.empty}): there was nothing to review or build on`,
        "",
        "council",
      ),
      human_required: true,
    });
  }
  if (outcome === "crashed") {
    out.push(
      synthetic(
        state,
        env,
        "HIGH",
        "review_unavailable",
        `Every critic of ${name} failed in ${state.allFailedInARow} consecutive rounds, so this artifact was never reviewed`,
        `last error: ${state.lastCriticError}`,
        "council",
      ),
    );
  }
  if (outcome === "budget" && state.votedRounds === 0) {
    // An artifact nobody reviewed must never read as reviewed.
    out.push(
      synthetic(state, env, "HIGH", "review_unavailable", `The call budget ran out before the critics of ${name} could review this artifact`, "", "council"),
    );
  }
  // A critic that failed in every round it was asked contributed nothing to the stage: say so (docs/issue.md).
  // (When every critic failed throughout, the review_unavailable concern above says it already.)
  const silent = env.critics.filter((c) => state.round > 0 && (state.failedRounds.get(c) ?? 0) >= state.round);
  if (silent.length < env.critics.length) {
    for (const c of silent) {
      out.push(synthetic(state, env, "MEDIUM", "review_incomplete", `Critic ${c} failed in every round of ${name}, so its lane was not reviewed`, "", c));
    }
  }
  return out;
}

/**
 * A blocking concern the stage resolved: the producer revised the draft and the council did not raise
 * it again. The note says that — what the council did — never the producer's own words (they are in
 * the draft's Decisions); the kind is the producer's, where it gave one that resolves.
 */
function stageResolution<A>(state: LoopState<A>, id: string, blocked: { concern: Concern; round: number }, env: FinishEnv): NewEvent {
  const said = state.addressed
    .filter((a) => a.round > blocked.round)
    .flatMap((a) => a.items)
    .filter((i) => i.concern_id === id)
    .at(-1);
  const kind = said && said.resolution_kind !== "ignored" && said.resolution_kind !== "deferred" ? said.resolution_kind : "addressed-in-code";
  const resolution: ConcernResolution = {
    concern_id: id,
    fingerprint: blocked.concern.fingerprint,
    resolution_kind: kind,
    note: `settled by council: no longer raised against the final draft (round ${state.round}); it blocked round ${blocked.round}`,
    resolved_by: "council",
    resolved_at: env.now(),
  };
  return { type: "ConcernAddressed", issue_id: env.issueId, resolution };
}

/**
 * The end of a stage, as a pure function of its state (DESIGN: a rule engine with a pure core): the
 * outcome (exhausted when no round decided otherwise), the review-gap concerns, what is forwarded and
 * why (ADR-0064 decision 3: unresolved blocking concerns and the last round's advice go downstream),
 * the blocking concerns the stage resolved, and the StageRecord — with the events to emit, in order.
 */
export function finish<A>(state: LoopState<A>, env: FinishEnv): Finished<A> {
  const { stage } = state;
  const events: NewEvent[] = [];
  const outcome: StageOutcome = state.outcome ?? "exhausted";
  const unresolved = outcome === "converged" ? [] : state.blocking;
  if (outcome === "exhausted") {
    events.push({
      type: "AdversarialRetryExhausted",
      issue_id: env.issueId,
      stage: stage.stage,
      phase: stage.phase,
      rounds: state.round,
      unresolved: unresolved.map((c) => c.id),
    });
  }
  const gaps = reviewGaps(state, outcome, env);
  const blockingFps = new Set(unresolved.map((c) => c.fingerprint));
  const forwarded = [...gaps, ...unresolved, ...state.advisory.filter((c) => !blockingFps.has(c.fingerprint))];
  const reasonOf = (c: Concern): ForwardReason => {
    if (gaps.includes(c)) {
      if (c.category === "producer_fault") return "exhausted";
      return outcome === "budget" || outcome === "crashed" ? outcome : "advisory";
    }
    return blockingFps.has(c.fingerprint) && outcome !== "converged" ? outcome : "advisory";
  };

  // Resolved inside the stage: blocked once, not raised against the final artifact (which the council saw).
  const onward = new Set(forwarded.map((c) => c.id));
  const resolved = state.votedOnArtifact ? [...state.blocked.keys()].filter((id) => !onward.has(id)) : [];
  for (const id of resolved) events.push(stageResolution(state, id, state.blocked.get(id) as { concern: Concern; round: number }, env));
  for (const concern of forwarded) events.push({ type: "ConcernForwarded", issue_id: env.issueId, concern, reason: reasonOf(concern) });

  const raised = new Set([...state.raised, ...gaps.map((c) => c.fingerprint)]);
  const stageRun: StageRecord = {
    stage: stage.stage,
    phase: stage.phase,
    rounds: state.round,
    retries: Math.max(0, state.round - 1),
    outcome,
    concerns_raised: raised.size,
    concerns_forwarded: forwarded.length,
    duration_ms: Math.round(env.durationMs),
    calls: env.usage.calls,
    critic_failures: state.counts.criticFailures,
    ungrounded_findings: state.counts.ungrounded,
    invalid_findings: state.counts.invalid,
    input_tokens: env.usage.inputTokens,
    output_tokens: env.usage.outputTokens,
    cached_input_tokens: env.usage.cachedInputTokens,
    ...(env.usage.cacheWriteTokens ? { cache_write_input_tokens: env.usage.cacheWriteTokens } : {}),
    cost_usd: env.usage.costUsd,
    second_opinions: state.counts.secondOpinions,
    second_opinions_skipped: state.counts.secondOpinionsSkipped,
    producer_warnings: state.counts.producerWarnings,
    cycle: env.cycle,
  };
  events.push({ type: "AdversarialStageCompleted", issue_id: env.issueId, stage: stage.stage, phase: stage.phase, cycle: env.cycle, stage_run: stageRun });
  const accepted = outcome === "converged" ? (state.addressed.find((a) => a.round === state.round)?.items ?? []) : [];
  return { result: { artifact: state.artifact, stageRun, forwarded, addressed: accepted, unresolved, resolved }, events };
}
