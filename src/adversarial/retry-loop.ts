import type { AddressedItem, Concern, Finding } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { BudgetExceeded, isFatal, messageOf } from "../errors.js";
import type { CallBudget } from "../models/types.js";
import { concernIdOf } from "./concern-id.js";
import type { CodeEvidence } from "./code-grounding.js";
import { ground, groundingText } from "./grounding.js";
import { finish, type LoopResult, type Usage } from "./loop-finish.js";
import { startState, type LoopState, type StageSpec } from "./loop-state.js";
import { MAX_SECOND_OPINIONS, settleLone, type Opinion, type VerifierAnswer } from "./second-opinion.js";
import { MAX_FINDINGS, tally, type Vote } from "./tally.js";

export type { FinishEnv, Finished, ForwardReason, LoopResult, Usage } from "./loop-finish.js";
export { finish } from "./loop-finish.js";
export { startState, type LoopCounts, type LoopState, type StageSpec } from "./loop-state.js";

/** ADR-0064 decision 1: three retries per stage, so at most four critic rounds. */
export const MAX_RETRIES = 3;
/** Rounds in a row in which every critic failed before the stage ends as `crashed`. */
export const MAX_ALL_FAILED_ROUNDS = 3;

/** What the producer is given each round: the blocking concerns of the last round are attached on a retry. */
export interface RoundInput<A> {
  round: number;
  previous: A | undefined;
  blocking: readonly Concern[];
}

/** The producer's artifact, the pending concerns it reports as addressed, and faults of its reply it noticed. */
export interface Produced<A> {
  artifact: A;
  addressed?: AddressedItem[];
  /** One line each (unknown concern ids, a missing Decisions section): warned and counted in the StageRun. */
  warnings?: string[];
  /**
   * Why the artifact says nothing (a plan of one `"`, a criterion `w`): a producer fault whose line is
   * among `warnings`. The critics are not asked; the stage ends unconverged (docs/issue.md).
   */
  empty?: string;
}

/** Produces a round's artifact, given the blocking concerns of the last round (the adversarial loop's producer). */
export type Producer<A> = (input: RoundInput<A>) => Promise<Produced<A>>;

/**
 * A producer that can also tell what its next call costs: 0 when its reply is cached (free), so a
 * round served from the cache is never refused for budget (a replan reuses what it was told before).
 */
export interface CostedProducer<A> {
  produce: Producer<A>;
  calls(input: RoundInput<A>): Promise<number>;
}

/** What a critic is given besides the artifact: the round, and its own findings of the previous round (docs/issue.md round memory). */
export interface Review {
  round: number;
  previous?: readonly Finding[];
}

/** A critic's vote: its findings, how many items of its reply were dropped as invalid, and the known gaps it was shown. */
export interface CriticVote {
  findings: Finding[];
  invalid?: number;
  /** Ids of the known gaps in the critic's request: a finding tied to one of them blocks (docs/issue.md). */
  knownGaps?: readonly string[];
  /** The code block the critic's request carried: its serious findings may quote it (docs/issue.md "Findings about the code"). */
  code?: CodeEvidence;
}

/** A voter: reads the artifact, returns findings. A throw means "contributed nothing this round". */
export interface Critic<A> {
  role: string;
  review(artifact: A, review: Review): Promise<CriticVote>;
  /** Network calls this review would make (0 when cached); 1 when absent. */
  calls?(artifact: A, review: Review): Promise<number>;
}

/**
 * The second opinion on a lone HIGH (docs/issue.md): given the artifact and the finding, it answers
 * confirm or refute with its reason and a quote. A throw is a failed second opinion.
 */
export interface Verifier<A> {
  role: string;
  check(artifact: A, concern: Concern, round: number): Promise<VerifierAnswer>;
  /** Network calls this check would make (0 when cached); 1 when absent. */
  calls?(artifact: A, concern: Concern, round: number): Promise<number>;
}

/** Progress of one round, for live displays. */
export interface RoundProgress {
  stage: string;
  round: number;
  step: "producing" | "voting" | "verifying" | "tallied";
  critics?: Record<string, "voting" | "done" | "failed">;
  blocking?: number;
}

/**
 * What one voted round said, for the record a stage keeps of its rounds (the dashboard shows it):
 * the draft the critics read, each critic's findings (or its failure), each lone HIGH with its second
 * opinion, and what blocked.
 */
export interface RoundReport<A> {
  round: number;
  artifact: A;
  critics: { role: string; findings: readonly Finding[]; failed?: string }[];
  secondOpinions: { concern: Concern; opinion: Opinion }[];
  blocking: readonly Concern[];
  /** The round's advice: grounded concerns that do not block (a lone HIGH no second opinion backed among them). */
  advisory?: readonly Concern[];
}

/** What one run of the loop works in: the issue, its cycle, the budget, where events go, ids for new concerns. */
export interface LoopContext<A = unknown> {
  issueId: string | null;
  cycle: number;
  emit?: (event: NewEvent) => void;
  /** The per-issue ceiling: a round that could cross it is not started. */
  budget?: CallBudget;
  /** Calls the later stages need for their first round and the reviewer for its call: never spent here (docs/issue.md). */
  reserve?: number;
  /** Usage of the calls made since this loop started. */
  usage?: () => Usage;
  /**
   * The id for a concern with this fingerprint raised by `role` in `phase`: the same finding keeps its
   * id across the issue's cycles (docs/issue.md). Defaults to a counter of this run.
   */
  concernId?: (fingerprint: string, phase: string, role: string) => string;
  /** Roles named as `raised_by` when they share a concern with other critics (see TallyContext.leadRoles). */
  leadRoles?: ReadonlySet<string>;
  /**
   * The most rounds this run may vote (default and most: MAX_RETRIES + 1). `pr review` votes once: its
   * producer is a person's pull request, which no retry can revise; what still blocks after that round
   * is forwarded, as after the last retry (outcome `exhausted`).
   */
  maxRounds?: number;
  /** The artifact as the text critics quote (default: String(artifact)). */
  textOf?: (artifact: A) => string;
  now?: () => string;
  onProgress?: (p: RoundProgress) => void;
  /** Told of each round the critics voted on (or all failed on), once it is tallied. */
  onRound?: (r: RoundReport<A>) => void;
  /** One line per critic failure, failed second opinion or producer fault (docs/issue.md: never silent). */
  warn?: (message: string) => void;
}

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x));
const firstLine = (e: unknown) => messageOf(e).split("\n")[0] ?? "";

/**
 * The shared retry primitive of ADR-0064: the producer makes (or remakes, with the last round's
 * blocking concerns attached) the artifact; the critics vote in parallel, each reminded of its own
 * previous findings; lone HIGHs get a second opinion; the tally decides. Stops on convergence,
 * oscillation (the same blocking fingerprint set twice in a row), exhaustion, budget, or three rounds
 * in which every critic failed. Nothing in it knows the pipeline: a stage is a producer, critics, an
 * optional verifier and the text of the artifact to ground against.
 */
export class AdversarialRetryLoop<A> {
  private readonly producer: CostedProducer<A>;

  constructor(
    producer: Producer<A> | CostedProducer<A>,
    private readonly critics: readonly Critic<A>[],
    private readonly verifier?: Verifier<A>,
  ) {
    this.producer = typeof producer === "function" ? { produce: producer, calls: async () => 1 } : producer;
  }

  async run(stage: StageSpec, ctx: LoopContext<A>): Promise<LoopResult<A>> {
    const started = performance.now();
    ctx.emit?.({ type: "AdversarialStageStarted", issue_id: ctx.issueId, stage: stage.stage, phase: stage.phase, cycle: ctx.cycle });
    const state = startState<A>(stage);
    const idFor = this.namer(stage, ctx);
    const rounds = Math.min(Math.max(ctx.maxRounds ?? MAX_RETRIES + 1, 1), MAX_RETRIES + 1);
    while (!state.outcome && state.round < rounds) await this.round(state, ctx, idFor);
    const done = finish(state, {
      issueId: ctx.issueId,
      cycle: ctx.cycle,
      critics: this.critics.map((c) => c.role),
      usage: ctx.usage?.() ?? { calls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, costUsd: null },
      durationMs: performance.now() - started,
      idFor,
      now: ctx.now ?? (() => new Date().toISOString()),
    });
    for (const e of done.events) ctx.emit?.(e);
    return done.result;
  }

  /** Ids for the stage's concerns: one per fingerprint within the stage, from the context (stable across cycles) or a counter. */
  private namer(stage: StageSpec, ctx: LoopContext<A>): (fp: string, role: string) => string {
    let seq = 0;
    const newId = ctx.concernId ?? ((_fp: string, phase: string, role: string) => concernIdOf(phase, role, ++seq));
    const ids = new Map<string, string>();
    return (fp, role) => {
      let id = ids.get(fp);
      if (!id) ids.set(fp, (id = newId(fp, stage.phase, role)));
      return id;
    };
  }

  /** Would `n` more network calls leave the later stages and the reviewer what they need? */
  private fits(ctx: LoopContext<A>, n: number): boolean {
    return !ctx.budget || ctx.budget.remaining() - n >= (ctx.reserve ?? 0);
  }

  /**
   * One round: the producer (re)makes the artifact, the critics vote, lone HIGHs get a second opinion,
   * the tally decides. Updates `state`; sets its outcome when the stage is over.
   */
  async round(state: LoopState<A>, ctx: LoopContext<A>, idFor: (fp: string, role: string) => string): Promise<void> {
    const { stage } = state;
    const round = state.round + 1;
    const input: RoundInput<A> = { round, previous: state.artifact, blocking: state.blocking };
    // A round is started only if it leaves the later stages and the reviewer what they need; a producer
    // answered from the cache costs nothing, and its critics are then counted as they are (below).
    const producerCalls = await this.producer.calls(input);
    if (!this.fits(ctx, producerCalls + (producerCalls > 0 ? this.critics.length : 0))) {
      state.outcome = "budget";
      return;
    }
    state.round = round;
    const progress = (p: Omit<RoundProgress, "stage" | "round">) => ctx.onProgress?.({ stage: stage.stage, round, ...p });
    let votes: Vote[];
    let failures: number;
    let failed: { role: string; error: string }[];
    try {
      progress({ step: "producing" });
      const produced = await this.producer.produce(input);
      state.artifact = produced.artifact;
      state.votedOnArtifact = false;
      if (produced.addressed) state.addressed.push({ round, items: produced.addressed });
      for (const w of produced.warnings ?? []) {
        state.counts.producerWarnings++;
        ctx.warn?.(w);
      }
      state.empty = produced.empty;
      if (produced.empty !== undefined) {
        // Nothing to review, and asking again with the same inputs gets the same nothing: the stage ends here, never converged.
        state.outcome = "exhausted";
        progress({ step: "tallied" });
        return;
      }
      const reviews = this.critics.map((c) => ({ round, ...(state.memory.has(c.role) ? { previous: state.memory.get(c.role) } : {}) }));
      if (producerCalls === 0) {
        const needed = await Promise.all(this.critics.map((c, i) => (c.calls ? c.calls(produced.artifact, reviews[i] as Review) : 1)));
        if (
          !this.fits(
            ctx,
            needed.reduce((a, b) => a + b, 0),
          )
        ) {
          state.outcome = "budget";
          return;
        }
      }
      ({ votes, failures, failed } = await this.vote(state, ctx, produced.artifact, reviews, progress));
    } catch (e) {
      if (BudgetExceeded.isInstance(e)) {
        state.outcome = "budget";
        return;
      }
      throw e;
    }

    const critics = () =>
      this.critics.map((c) => {
        const f = failed.find((x) => x.role === c.role);
        return f ? { role: c.role, findings: [], failed: f.error } : { role: c.role, findings: votes.find((v) => v.role === c.role)?.findings ?? [] };
      });
    if (this.critics.length > 0 && failures === this.critics.length) {
      ctx.onRound?.({ round, artifact: state.artifact as A, critics: critics(), secondOpinions: [], blocking: [], advisory: [] });
      state.allFailedInARow++;
      progress({ step: "tallied" });
      if (state.allFailedInARow >= MAX_ALL_FAILED_ROUNDS) state.outcome = "crashed";
      return;
    }
    state.allFailedInARow = 0;
    state.votedRounds++;
    state.votedOnArtifact = true;

    const textOf = ctx.textOf ?? ((a: A) => String(a));
    const artifact = state.artifact as A;
    const text = groundingText(textOf(artifact));
    const t = tally(votes, {
      stage: stage.stage,
      phase: stage.phase,
      mustAddressBy: stage.mustAddressBy,
      criticCount: this.critics.length,
      artifact: text,
      ...(stage.rules ? { rules: stage.rules } : {}),
      ...(ctx.leadRoles ? { leadRoles: ctx.leadRoles } : {}),
      idFor,
      now: ctx.now ?? (() => new Date().toISOString()),
    });
    state.counts.ungrounded += t.ungrounded;
    state.counts.invalid += t.overCap;
    if (t.lone.length) progress({ step: "verifying" });
    const opinions = await this.secondOpinions(state, ctx, artifact, t.lone, (evidence) => ground(text, evidence).grounded);
    const settled = settleLone(t.lone, opinions);
    for (const c of [...t.blocking, ...t.advisory, ...t.lone]) state.raised.add(c.fingerprint);
    state.blocking = [...t.blocking, ...settled.blocking];
    // Advice is about the draft it was given: only the last voting round's stands (docs/issue.md).
    state.advisory = [...t.advisory, ...settled.advisory];
    for (const c of state.blocking) {
      state.blocked.set(c.id, { concern: c, round });
      ctx.emit?.({ type: "ConcernBlocked", issue_id: ctx.issueId, stage: stage.stage, round, concern: c });
    }
    progress({ step: "tallied", blocking: state.blocking.length });
    ctx.onRound?.({
      round,
      artifact,
      critics: critics(),
      secondOpinions: t.lone.map((concern, i) => ({ concern, opinion: opinions[i] ?? { kind: "skipped", why: "no_verifier" } })),
      blocking: state.blocking,
      advisory: state.advisory,
    });

    if (state.blocking.length === 0) {
      state.outcome = "converged";
      return;
    }
    const fps = new Set(state.blocking.map((c) => c.fingerprint));
    if (state.previousFingerprints && sameSet(fps, state.previousFingerprints)) {
      state.outcome = "oscillation";
      ctx.emit?.({ type: "OscillationDetected", issue_id: ctx.issueId, stage: stage.stage, phase: stage.phase, round, fingerprints: [...fps].sort() });
      return;
    }
    state.previousFingerprints = fps;
  }

  /** The critics vote in parallel; a critic that throws contributes nothing, visibly (auth, quota and budget errors end the round). */
  private async vote(
    state: LoopState<A>,
    ctx: LoopContext<A>,
    artifact: A,
    reviews: Review[],
    progress: (p: Omit<RoundProgress, "stage" | "round">) => void,
  ): Promise<{ votes: Vote[]; failures: number; failed: { role: string; error: string }[] }> {
    const states: Record<string, "voting" | "done" | "failed"> = {};
    for (const c of this.critics) states[c.role] = "voting";
    progress({ step: "voting", critics: { ...states } });
    const settled = await Promise.allSettled(
      this.critics.map(async (c, i) => {
        try {
          const vote = await c.review(artifact, reviews[i] as Review);
          states[c.role] = "done";
          return vote;
        } catch (e) {
          states[c.role] = "failed";
          throw e;
        } finally {
          progress({ step: "voting", critics: { ...states } });
        }
      }),
    );
    for (const s of settled) if (s.status === "rejected" && (isFatal(s.reason) || BudgetExceeded.isInstance(s.reason))) throw s.reason;
    const votes: Vote[] = [];
    const failed: { role: string; error: string }[] = [];
    let failures = 0;
    settled.forEach((s, i) => {
      const role = this.critics[i]?.role ?? "critic";
      if (s.status === "fulfilled") {
        votes.push({
          role,
          findings: s.value.findings,
          ...(s.value.knownGaps ? { knownGaps: s.value.knownGaps } : {}),
          ...(s.value.code ? { code: s.value.code } : {}),
        });
        state.memory.set(role, s.value.findings.slice(0, MAX_FINDINGS));
        state.counts.invalid += s.value.invalid ?? 0;
        return;
      }
      failures++;
      failed.push({ role, error: firstLine(s.reason) });
      state.counts.criticFailures++;
      state.failedRounds.set(role, (state.failedRounds.get(role) ?? 0) + 1);
      state.lastCriticError = `${role}: ${messageOf(s.reason)}`;
      ctx.warn?.(`critic ${role} failed in ${state.stage.stage} round ${reviews[i]?.round ?? state.round} and contributed nothing: ${firstLine(s.reason)}`);
    });
    return { votes, failures, failed };
  }

  /**
   * Second opinions on the round's lone HIGHs, in parallel after the critics (docs/issue.md): at most
   * MAX_SECOND_OPINIONS, most severe first, each one budget call that never spends what later stages
   * need. One opinion per lone HIGH, in its order: answered, failed, or skipped (and counted).
   */
  private async secondOpinions(
    state: LoopState<A>,
    ctx: LoopContext<A>,
    artifact: A,
    lone: readonly Concern[],
    grounded: (evidence: string) => boolean,
  ): Promise<Opinion[]> {
    const verifier = this.verifier;
    if (!verifier) {
      state.counts.secondOpinionsSkipped += lone.length;
      return lone.map(() => ({ kind: "skipped", why: "no_verifier" }));
    }
    let room = ctx.budget ? ctx.budget.remaining() - (ctx.reserve ?? 0) : Number.POSITIVE_INFINITY;
    const plan: (Concern | "cap" | "budget")[] = [];
    for (const [i, c] of lone.entries()) {
      if (i >= MAX_SECOND_OPINIONS) {
        plan.push("cap");
        continue;
      }
      const cost = verifier.calls ? await verifier.calls(artifact, c, state.round) : 1;
      if (cost > room) {
        plan.push("budget");
        continue;
      }
      room -= cost;
      plan.push(c);
    }
    const byBudget = plan.filter((p) => p === "budget").length;
    if (byBudget) {
      ctx.warn?.(
        `no budget left for a second opinion on ${byBudget} lone HIGH${byBudget === 1 ? "" : "s"} in ${state.stage.stage} round ${state.round}: kept as MEDIUM`,
      );
    }
    const opinions = await Promise.all(
      plan.map(async (p): Promise<Opinion> => {
        if (p === "cap" || p === "budget") {
          state.counts.secondOpinionsSkipped++;
          return { kind: "skipped", why: p };
        }
        state.counts.secondOpinions++;
        try {
          const answer = await verifier.check(artifact, p, state.round);
          // A quote of the code the verifier was given grounds as a quote of the artifact does (the caller checked it).
          const ok = answer.quotesCode === true || grounded(answer.evidence);
          if (!ok && answer.verdict === "confirm") {
            ctx.warn?.(
              `${verifier.role} confirmed ${p.id} in ${state.stage.stage} round ${state.round} without quoting the artifact or its code: not counted, kept as MEDIUM`,
            );
          }
          return { kind: "answered", answer, grounded: ok, by: verifier.role };
        } catch (e) {
          if (isFatal(e)) throw e;
          if (BudgetExceeded.isInstance(e)) {
            state.counts.secondOpinions--;
            state.counts.secondOpinionsSkipped++;
            return { kind: "skipped", why: "budget" };
          }
          ctx.warn?.(`${verifier.role} failed on ${p.id} in ${state.stage.stage} round ${state.round}, so the HIGH stays MEDIUM: ${firstLine(e)}`);
          return { kind: "failed", error: firstLine(e) };
        }
      }),
    );
    return opinions;
  }
}
