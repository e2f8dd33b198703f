import type { AddressedItem, Concern, Finding, MustAddressBy, StageOutcome, StagePhase, StageRecord } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { BudgetExceeded, isFatal, messageOf } from "../errors.js";
import type { CallBudget } from "../models/types.js";
import { concernIdOf } from "./concern-id.js";
import { fingerprint } from "./fingerprint.js";
import { groundingText } from "./grounding.js";
import { MAX_FINDINGS, tally, type Vote } from "./tally.js";

/** ADR-0064 decision 1: three retries per stage, so at most four critic rounds. */
export const MAX_RETRIES = 3;
/** Rounds in a row in which every critic failed before the stage ends as `crashed`. */
export const MAX_ALL_FAILED_ROUNDS = 3;

/** What the loop needs to know of a stage. */
export interface StageSpec {
  stage: string;
  phase: StagePhase;
  /** The phase that receives this stage's unresolved concerns. */
  mustAddressBy: MustAddressBy;
}

/** What the producer is given each round: the blocking concerns of the last round are attached on a retry. */
export interface RoundInput<A> {
  round: number;
  previous: A | undefined;
  blocking: readonly Concern[];
}

/** The producer's artifact and the pending concerns it reports as addressed. */
export interface Produced<A> {
  artifact: A;
  addressed?: AddressedItem[];
}

/** Produces a round's artifact, given the blocking concerns of the last round (the adversarial loop's producer). */
export type Producer<A> = (input: RoundInput<A>) => Promise<Produced<A>>;

/** What a critic is given besides the artifact: the round, and its own findings of the previous round (CONTRACT §4 r2 round memory). */
export interface Review {
  round: number;
  previous?: readonly Finding[];
}

/** A critic's vote: its findings, and how many items of its reply were dropped as invalid. */
export interface CriticVote {
  findings: Finding[];
  invalid?: number;
}

/** A voter: reads the artifact, returns findings. A throw means "contributed nothing this round". */
export interface Critic<A> {
  role: string;
  review(artifact: A, review: Review): Promise<CriticVote>;
}

/** Progress of one round, for live displays. */
export interface RoundProgress {
  stage: string;
  round: number;
  step: "producing" | "voting" | "tallied";
  critics?: Record<string, "voting" | "done" | "failed">;
  blocking?: number;
}

/** Network calls, tokens and dollars used so far; the loop reports its own share. `costUsd` is null once any call's price was unknown. */
export interface Usage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
}

/** What one run of the loop works in: the issue, its cycle, the budget, where events go, ids for new concerns. */
export interface LoopContext<A = unknown> {
  issueId: string | null;
  cycle: number;
  emit?: (event: NewEvent) => void;
  /** The per-issue ceiling: a round that could cross it is not started. */
  budget?: CallBudget;
  /** Calls the later stages need for their first round and the reviewer for its call: never spent here (CONTRACT §4 r2). */
  reserve?: number;
  /** Usage of the calls made since this loop started. */
  usage?: () => Usage;
  /**
   * The id for a concern with this fingerprint raised by `role`: an existing pending one's, or a new
   * `{PHASE}-{ROLE}-{NNN}`. Defaults to a counter of this run.
   */
  concernId?: (fingerprint: string, phase: string, role: string) => string;
  /** Roles named as `raised_by` when they share a concern with other critics (see TallyContext.leadRoles). */
  leadRoles?: ReadonlySet<string>;
  /** The artifact as the text critics quote (default: String(artifact)). */
  textOf?: (artifact: A) => string;
  now?: () => string;
  onProgress?: (p: RoundProgress) => void;
  /** One line per critic failure (CONTRACT §4 r2: never silent). */
  warn?: (message: string) => void;
}

/** A stage's outcome: its final artifact, its StageRun record, and the concerns forwarded to later stages. */
export interface LoopResult<A> {
  /** The last artifact produced (undefined only if no round could run). */
  artifact: A | undefined;
  stageRun: StageRecord;
  /** Unresolved concerns handed to `mustAddressBy`, each also a ConcernForwarded event. */
  forwarded: Concern[];
  /** Every `addressed` item the producer reported, in order. */
  addressed: AddressedItem[];
  /** Blocking concerns of the last voting round (empty when converged). */
  unresolved: Concern[];
}

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x));

/**
 * The shared retry primitive of ADR-0064: the producer makes (or remakes, with the last round's
 * blocking concerns attached) the artifact; the critics vote in parallel, each reminded of its own
 * previous findings; the tally decides. Stops on convergence, oscillation (the same blocking
 * fingerprint set twice in a row), exhaustion, budget, or three rounds in which every critic failed.
 */
export class AdversarialRetryLoop<A> {
  constructor(
    private readonly producer: Producer<A>,
    private readonly critics: readonly Critic<A>[],
  ) {}

  async run(stage: StageSpec, ctx: LoopContext<A>): Promise<LoopResult<A>> {
    const now = ctx.now ?? (() => new Date().toISOString());
    const started = performance.now();
    const emit = (e: NewEvent) => ctx.emit?.(e);
    const textOf = ctx.textOf ?? ((a: A) => String(a));
    emit({ type: "AdversarialStageStarted", issue_id: ctx.issueId, stage: stage.stage, phase: stage.phase, cycle: ctx.cycle });

    let seq = 0;
    const newId = ctx.concernId ?? ((_fp: string, phase: string, role: string) => concernIdOf(phase, role, ++seq));
    const ids = new Map<string, string>();
    const idFor = (fp: string, role: string) => {
      let id = ids.get(fp);
      if (!id) ids.set(fp, (id = newId(fp, stage.phase, role)));
      return id;
    };
    const synthetic = (category: string, severity: "HIGH" | "MEDIUM", text: string, evidence: string, by = "council"): Concern => {
      const fp = fingerprint({ concern: text });
      return {
        id: idFor(fp, by),
        phase: stage.phase,
        stage: stage.stage,
        raised_by: by,
        severity,
        category,
        concern: text,
        evidence,
        must_address_by: stage.mustAddressBy,
        human_required: false,
        fingerprint: fp,
        raised_at: now(),
      };
    };

    const raised = new Set<string>();
    const addressed: AddressedItem[] = [];
    const memory = new Map<string, Finding[]>(); // each critic's findings of the last round it answered
    const failedRounds = new Map<string, number>();
    let artifact: A | undefined;
    let blocking: Concern[] = [];
    let advisory: Concern[] = [];
    let previousFingerprints: Set<string> | undefined;
    let allFailedInARow = 0;
    let votedRounds = 0;
    let lastCriticError = "";
    let outcome: StageOutcome | undefined;
    let rounds = 0;
    let criticFailures = 0;
    let ungrounded = 0;
    let invalid = 0;
    const extra: Concern[] = [];

    for (let round = 1; round <= MAX_RETRIES + 1 && !outcome; round++) {
      // A round is started only if it leaves the later stages and the reviewer what they need.
      if (ctx.budget && ctx.budget.remaining() - (1 + this.critics.length) < (ctx.reserve ?? 0)) {
        outcome = "budget";
        break;
      }
      rounds = round;
      const states: Record<string, "voting" | "done" | "failed"> = {};
      const votes: Vote[] = [];
      let failures = 0;
      try {
        ctx.onProgress?.({ stage: stage.stage, round, step: "producing" });
        const produced = await this.producer({ round, previous: artifact, blocking });
        artifact = produced.artifact;
        if (produced.addressed) addressed.push(...produced.addressed);
        for (const c of this.critics) states[c.role] = "voting";
        ctx.onProgress?.({ stage: stage.stage, round, step: "voting", critics: { ...states } });
        const current = artifact;
        const settled = await Promise.allSettled(
          this.critics.map(async (c) => {
            try {
              const previous = memory.get(c.role);
              const vote = await c.review(current, { round, ...(previous ? { previous } : {}) });
              states[c.role] = "done";
              return vote;
            } catch (e) {
              states[c.role] = "failed";
              throw e;
            } finally {
              ctx.onProgress?.({ stage: stage.stage, round, step: "voting", critics: { ...states } });
            }
          }),
        );
        for (const s of settled) if (s.status === "rejected" && (isFatal(s.reason) || BudgetExceeded.isInstance(s.reason))) throw s.reason;
        settled.forEach((s, i) => {
          const role = this.critics[i]?.role ?? "critic";
          if (s.status === "fulfilled") {
            votes.push({ role, findings: s.value.findings });
            memory.set(role, s.value.findings.slice(0, MAX_FINDINGS));
            invalid += s.value.invalid ?? 0;
            return;
          }
          failures++;
          criticFailures++;
          failedRounds.set(role, (failedRounds.get(role) ?? 0) + 1);
          lastCriticError = `${role}: ${messageOf(s.reason)}`;
          ctx.warn?.(`critic ${role} failed in ${stage.stage} round ${round} and contributed nothing: ${messageOf(s.reason).split("\n")[0]}`);
        });
      } catch (e) {
        if (BudgetExceeded.isInstance(e)) {
          outcome = "budget";
          break;
        }
        throw e;
      }

      if (this.critics.length > 0 && failures === this.critics.length) {
        allFailedInARow++;
        ctx.onProgress?.({ stage: stage.stage, round, step: "tallied", critics: { ...states } });
        if (allFailedInARow >= MAX_ALL_FAILED_ROUNDS) {
          outcome = "crashed";
          extra.push(
            synthetic(
              "review_unavailable",
              "HIGH",
              `Every critic of ${stage.stage} failed in ${allFailedInARow} consecutive rounds, so this artifact was never reviewed`,
              `last error: ${lastCriticError}`,
            ),
          );
        }
        continue;
      }
      allFailedInARow = 0;
      votedRounds++;

      const t = tally(votes, {
        stage: stage.stage,
        phase: stage.phase,
        mustAddressBy: stage.mustAddressBy,
        criticCount: this.critics.length,
        artifact: groundingText(artifact === undefined ? "" : textOf(artifact)),
        ...(ctx.leadRoles ? { leadRoles: ctx.leadRoles } : {}),
        idFor,
        now,
      });
      ungrounded += t.ungrounded;
      invalid += t.overCap;
      for (const c of [...t.blocking, ...t.advisory]) raised.add(c.fingerprint);
      blocking = t.blocking;
      // Advice is about the draft it was given: only the last voting round's stands (CONTRACT §4 r2).
      advisory = t.advisory;
      ctx.onProgress?.({ stage: stage.stage, round, step: "tallied", critics: { ...states }, blocking: blocking.length });

      if (blocking.length === 0) {
        outcome = "converged";
        break;
      }
      const fps = new Set(blocking.map((c) => c.fingerprint));
      if (previousFingerprints && sameSet(fps, previousFingerprints)) {
        outcome = "oscillation";
        emit({ type: "OscillationDetected", issue_id: ctx.issueId, stage: stage.stage, phase: stage.phase, round, fingerprints: [...fps].sort() });
        break;
      }
      previousFingerprints = fps;
    }
    if (!outcome) {
      outcome = "exhausted";
      emit({ type: "AdversarialRetryExhausted", issue_id: ctx.issueId, stage: stage.stage, phase: stage.phase, rounds, unresolved: blocking.map((c) => c.id) });
    }
    if (outcome === "budget" && votedRounds === 0) {
      // An artifact nobody reviewed must never read as reviewed.
      extra.push(synthetic("review_unavailable", "HIGH", `The call budget ran out before the critics of ${stage.stage} could review this artifact`, ""));
    }
    // A critic that failed in every round it was asked contributed nothing to the stage: say so (CONTRACT §4 r2).
    // (When every critic failed throughout, the review_unavailable concern above says it already.)
    const silent = this.critics.filter((c) => rounds > 0 && (failedRounds.get(c.role) ?? 0) >= rounds);
    if (silent.length < this.critics.length) {
      for (const c of silent) {
        extra.push(
          synthetic("review_incomplete", "MEDIUM", `Critic ${c.role} failed in every round of ${stage.stage}, so its lane was not reviewed`, "", c.role),
        );
      }
    }

    // ADR-0064 decision 3: unresolved blocking concerns and the last round's advice go downstream.
    const unresolved = outcome === "converged" ? [] : blocking;
    const blockingFps = new Set(unresolved.map((c) => c.fingerprint));
    const forwarded = [...extra, ...unresolved, ...advisory.filter((c) => !blockingFps.has(c.fingerprint))];
    for (const c of extra) raised.add(c.fingerprint);
    for (const concern of forwarded) {
      const reason = extra.includes(concern)
        ? outcome === "converged" || outcome === "exhausted" || outcome === "oscillation"
          ? "advisory"
          : outcome
        : blockingFps.has(concern.fingerprint)
          ? outcome
          : "advisory";
      emit({ type: "ConcernForwarded", issue_id: ctx.issueId, concern, reason: reason === "converged" ? "advisory" : reason });
    }

    const usage = ctx.usage?.() ?? { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: null };
    const stageRun: StageRecord = {
      stage: stage.stage,
      phase: stage.phase,
      rounds,
      retries: Math.max(0, rounds - 1),
      outcome,
      concerns_raised: raised.size,
      concerns_forwarded: forwarded.length,
      duration_ms: Math.round(performance.now() - started),
      calls: usage.calls,
      critic_failures: criticFailures,
      ungrounded_findings: ungrounded,
      invalid_findings: invalid,
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      cost_usd: usage.costUsd,
      cycle: ctx.cycle,
    };
    emit({ type: "AdversarialStageCompleted", issue_id: ctx.issueId, stage: stage.stage, phase: stage.phase, cycle: ctx.cycle, stage_run: stageRun });
    return { artifact, stageRun, forwarded, addressed, unresolved };
  }
}
