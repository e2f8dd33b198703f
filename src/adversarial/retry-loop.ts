import type { AddressedItem, Concern, Finding, MustAddressBy, StageOutcome, StagePhase, StageRecord } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { BudgetExceeded, Interrupted, ProviderAuthError, ReplayMiss, messageOf } from "../errors.js";
import type { CallBudget } from "../models/types.js";
import { concernIdOf } from "./concern-id.js";
import { fingerprint } from "./fingerprint.js";
import { tally, type Vote } from "./tally.js";

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

export type Producer<A> = (input: RoundInput<A>) => Promise<Produced<A>>;

/** A voter: reads the artifact, returns findings. A throw means "contributed nothing this round". */
export interface Critic<A> {
  role: string;
  review(artifact: A, round: number): Promise<Finding[]>;
}

/** Progress of one round, for live displays. */
export interface RoundProgress {
  stage: string;
  round: number;
  step: "producing" | "voting" | "tallied";
  critics?: Record<string, "voting" | "done" | "failed">;
  blocking?: number;
}

export interface LoopContext {
  issueId: string | null;
  cycle: number;
  emit?: (event: NewEvent) => void;
  /** The per-issue ceiling: a round that could cross it is not started. */
  budget?: CallBudget;
  /** Network calls and tokens used so far (the loop reports its own share of them). */
  usage?: () => { calls: number; inputTokens: number; outputTokens: number };
  /**
   * The id for a concern with this fingerprint raised by `role`: an existing pending one's, or a new
   * `{PHASE}-{ROLE}-{NNN}`. Defaults to a counter of this run.
   */
  concernId?: (fingerprint: string, phase: string, role: string) => string;
  /** Roles named as `raised_by` when they share a concern with other critics (see TallyContext.leadRoles). */
  leadRoles?: ReadonlySet<string>;
  now?: () => string;
  onProgress?: (p: RoundProgress) => void;
}

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
 * The shared retry primitive of ADR-0064: the producer makes (or remakes, with the last
 * round's blocking concerns attached) the artifact; the critics vote in parallel; the tally
 * decides. Stops on convergence, oscillation (the same blocking fingerprint set twice in a
 * row), exhaustion, budget, or three rounds in which every critic failed.
 */
export class AdversarialRetryLoop<A> {
  constructor(
    private readonly producer: Producer<A>,
    private readonly critics: readonly Critic<A>[],
  ) {}

  async run(stage: StageSpec, ctx: LoopContext): Promise<LoopResult<A>> {
    const now = ctx.now ?? (() => new Date().toISOString());
    const started = performance.now();
    const usageAtStart = ctx.usage?.() ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
    const emit = (e: NewEvent) => ctx.emit?.(e);
    emit({ type: "AdversarialStageStarted", issue_id: ctx.issueId, stage: stage.stage, phase: stage.phase, cycle: ctx.cycle });

    let seq = 0;
    const newId = ctx.concernId ?? ((_fp: string, phase: string, role: string) => concernIdOf(phase, role, ++seq));
    const ids = new Map<string, string>();
    const idFor = (fp: string, role: string) => {
      let id = ids.get(fp);
      if (!id) ids.set(fp, (id = newId(fp, stage.phase, role)));
      return id;
    };
    const raised = new Set<string>();
    const advisory = new Map<string, Concern>();
    const addressed: AddressedItem[] = [];
    let artifact: A | undefined;
    let blocking: Concern[] = [];
    let previousFingerprints: Set<string> | undefined;
    let allFailedInARow = 0;
    let lastCriticError = "";
    let outcome: StageOutcome | undefined;
    let rounds = 0;
    let synthetic: Concern | undefined;

    for (let round = 1; round <= MAX_RETRIES + 1 && !outcome; round++) {
      if (ctx.budget && ctx.budget.remaining() < 1 + this.critics.length) {
        outcome = "budget";
        break;
      }
      rounds = round;
      const states: Record<string, "voting" | "done" | "failed"> = {};
      let votes: Vote[];
      let failures: number;
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
              const findings = await c.review(current, round);
              states[c.role] = "done";
              return findings;
            } catch (e) {
              states[c.role] = "failed";
              throw e;
            } finally {
              ctx.onProgress?.({ stage: stage.stage, round, step: "voting", critics: { ...states } });
            }
          }),
        );
        votes = [];
        failures = 0;
        settled.forEach((s, i) => {
          const role = this.critics[i]?.role ?? "critic";
          if (s.status === "fulfilled") votes.push({ role, findings: s.value });
          else {
            // Auth and quota errors, Ctrl-C and replay misses are not a critic's opinion: they end the run.
            const r: unknown = s.reason;
            if (ProviderAuthError.isInstance(r) || Interrupted.isInstance(r) || ReplayMiss.isInstance(r) || BudgetExceeded.isInstance(r)) throw r;
            failures++;
            lastCriticError = `${role}: ${messageOf(r)}`;
          }
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
          const text = `Every critic of ${stage.stage} failed in ${allFailedInARow} consecutive rounds, so this artifact was never reviewed`;
          const fp = fingerprint({ category: "review_unavailable", concern: text });
          synthetic = {
            id: newId(fp, stage.phase, "council"),
            phase: stage.phase,
            stage: stage.stage,
            raised_by: "council",
            severity: "HIGH",
            category: "review_unavailable",
            concern: text,
            evidence: `last error: ${lastCriticError}`,
            must_address_by: stage.mustAddressBy,
            human_required: false,
            fingerprint: fp,
            raised_at: now(),
          };
        }
        continue;
      }
      allFailedInARow = 0;

      const t = tally(votes, {
        stage: stage.stage,
        phase: stage.phase,
        mustAddressBy: stage.mustAddressBy,
        criticCount: this.critics.length,
        ...(ctx.leadRoles ? { leadRoles: ctx.leadRoles } : {}),
        idFor,
        now,
      });
      for (const c of [...t.blocking, ...t.advisory]) raised.add(c.fingerprint);
      for (const c of t.advisory) advisory.set(c.fingerprint, c);
      blocking = t.blocking;
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

    // ADR-0064 decision 3: unresolved blocking concerns and every advisory one go downstream.
    const unresolved = outcome === "converged" ? [] : blocking;
    const blockingFps = new Set(unresolved.map((c) => c.fingerprint));
    const forwarded = [...(synthetic ? [synthetic] : []), ...unresolved, ...[...advisory.values()].filter((c) => !blockingFps.has(c.fingerprint))];
    if (synthetic) raised.add(synthetic.fingerprint);
    for (const concern of forwarded) {
      const reason = !blockingFps.has(concern.fingerprint) && concern !== synthetic ? "advisory" : outcome;
      emit({ type: "ConcernForwarded", issue_id: ctx.issueId, concern, reason: reason === "converged" ? "advisory" : reason });
    }

    const usage = ctx.usage?.() ?? usageAtStart;
    const stageRun: StageRecord = {
      stage: stage.stage,
      phase: stage.phase,
      rounds,
      retries: Math.max(0, rounds - 1),
      outcome,
      concerns_raised: raised.size,
      concerns_forwarded: forwarded.length,
      duration_ms: Math.round(performance.now() - started),
      calls: usage.calls - usageAtStart.calls,
      input_tokens: usage.inputTokens - usageAtStart.inputTokens,
      output_tokens: usage.outputTokens - usageAtStart.outputTokens,
      cycle: ctx.cycle,
    };
    emit({ type: "AdversarialStageCompleted", issue_id: ctx.issueId, stage: stage.stage, phase: stage.phase, cycle: ctx.cycle, stage_run: stageRun });
    return { artifact, stageRun, forwarded, addressed, unresolved };
  }
}
