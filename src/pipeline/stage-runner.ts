import { AdversarialRetryLoop, type Critic, type CostedProducer, type RoundProgress, type Verifier } from "../adversarial/retry-loop.js";
import { ground } from "../adversarial/grounding.js";
import { VERIFIER_ROLE, type VerifierAnswer } from "../adversarial/second-opinion.js";
import type { AdversarialState, Concern, Finding, StageRecord, Verdict } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { ReplyFormatError } from "../errors.js";
import type { CallDoor, CallMeta } from "../models/call.js";
import type { CallBudget, ModelRequest } from "../models/types.js";
import type { PlanningCycle } from "./cycle.js";
import type { Meter } from "./meter.js";
import { emptyArtifactWarning, producerFaults } from "./producer-faults.js";
import { ContextLedger, type CodeSelection, type CodeSource } from "./code-context.js";
import type { RoundDetail } from "../read-models/types.js";
import { roundDetail, roundsArtifact, stageRoundsText } from "./round-record.js";
import { carryEvents, resolutionEvents } from "./resolutions.js";
import { criticRequest, issueText, parseFindings, parseVerdict, producerRequest, verifierRequest, withCode, type RoleContext } from "./roles.js";
import { ESCALATING_ROLES, type ArtifactName, type PipelineStage } from "./stages.js";

/** Network calls a request would cost now (0 when its reply is cached): lets a round served from the cache through the budget check. */
export type CostOf = (meta: CallMeta, request: ModelRequest) => Promise<number>;

/** Known gaps from the wiki for the assumption surfacer (docs/issue.md carryover). */
export interface KnownGaps {
  ids: string[];
  text: string;
}

/** A critic's vote, as telemetry reports it (one `gen_ai.evaluation.result` event). */
export interface CriticVoteReport {
  stage: string;
  phase: string;
  round: number;
  role: string;
  findings: readonly Finding[];
}

/** What running a stage needs from the driver. */
export interface StageDeps {
  issueId: string;
  cycle: PlanningCycle;
  /** The one door, metered: every call it makes is on the driver's meter, failed ones included. */
  door: CallDoor;
  /** What a request would cost now; without it every call counts as one. */
  costOf?: CostOf;
  append: (events: NewEvent[]) => Promise<unknown>;
  budget: CallBudget;
  /** Calls the later stages and the reviewer need (never spent here). */
  reserve: number;
  /** What the driver's door has metered so far: the stage's usage is read from it. */
  meter: Meter;
  context: () => RoleContext;
  /** The code the stage's roles read (docs/issue.md "The code the councils read"); none: requests carry no code. */
  code?: CodeSource;
  knownGaps?: KnownGaps;
  /** A concern a person resolved stays resolved: raised again, it is not made pending again. */
  keep: (e: NewEvent) => boolean;
  now: () => string;
  warn?: (message: string) => void;
  onProgress?: (p: RoundProgress) => void;
  /** Told of each critic's parsed vote (telemetry). */
  onVote?: (v: CriticVoteReport) => void;
}

/** A finished stage: its record and whether it made an artifact. */
export interface StageOutcomeResult {
  stageRun: StageRecord;
  artifact: string | undefined;
}

/** An artifact as the runner handles it: whatever the stage's codec reads, renders and encodes. */
type Artifact = unknown;
/**
 * Runs one stage of the table: the producer, its council and (in councils of two or more) the
 * verifier in one AdversarialRetryLoop, then commits the artifact and the stage's events in one
 * transaction.
 */
export async function runStage(stage: PipelineStage, state: AdversarialState, deps: StageDeps): Promise<StageOutcomeResult> {
  const { issueId } = deps;
  // In id order, not in the order the fold met them: a replan shows the same concerns in the same bytes.
  const due = state.pending_concerns.filter((c) => c.must_address_by === stage.phase).sort((a, b) => ascending(a.id, b.id));
  // The criteria writer writes nothing the plan does not build: plan-level concerns go on to the reviewer.
  const given = stage.answersPending ? due : [];
  const render = (a: Artifact) => stage.codec.render(a);
  const cost: CostOf = deps.costOf ?? (async () => 1);

  // Critics and second opinions answer in parallel, in whatever order; their ModelCall events are
  // appended in council order, then in the order of the verified concerns' ids, once the round is
  // over, so identical inputs give identical event logs.
  const slots = new Map<string, NewEvent[]>();
  const sinkFor = (slot: string) => (e: NewEvent) => void slots.set(slot, [...(slots.get(slot) ?? []), e]);
  const flush = async () => {
    const order = [...stage.critics, ...[...slots.keys()].filter((k) => k.startsWith(`${VERIFIER_ROLE}#`)).sort(ascending)];
    const events = order.flatMap((slot) => slots.get(slot) ?? []);
    slots.clear();
    if (events.length) await deps.append(events);
  };

  const contextTexts = () => {
    const ctx = deps.context();
    return [issueText(ctx.issue), ...Object.values(ctx.artifacts).filter((t): t is string => typeof t === "string")];
  };
  const call = deps.door;

  // The code the stage's roles read (docs/issue.md "The code the councils read", ADR-032 §6): one
  // selection a stage, chosen for the issue and the stage's inputs — what its producer writes from —
  // and read by the producer, every critic and the second opinion, in every round. The same bytes in
  // every call of the stage (roles with a budget of their own get their own), right after the issue,
  // so the provider's prompt cache holds them from the stage's first call on.
  const ledger = new ContextLedger();
  const inputTexts = (ctx: RoleContext, names: readonly ArtifactName[]) =>
    names.flatMap((n) => (typeof ctx.artifacts[n] === "string" ? [ctx.artifacts[n] as string] : []));
  const stageCode = (role: string, ctx: RoleContext) => deps.code?.forTexts(role, [issueText(ctx.issue), ...inputTexts(ctx, stage.inputs)]);

  const producerCall = (input: { round: number; previous: Artifact | undefined; blocking: readonly Concern[] }) => {
    const retry = input.previous !== undefined && input.blocking.length ? { previous: render(input.previous), blocking: input.blocking } : undefined;
    const ctx = deps.context();
    const sel = stageCode(stage.producer, ctx);
    const request = producerRequest(stage.producer, stage.artifact, withCode(ctx, sel), stage.inputs, given, retry);
    return { meta: { role: stage.producer, stage: stage.stage, round: input.round }, request, sel };
  };
  const producer: CostedProducer<Artifact> = {
    calls: async (input) => {
      const { meta, request } = producerCall(input);
      return cost(meta, request);
    },
    produce: async (input) => {
      await flush();
      const { meta, request, sel } = producerCall(input);
      ledger.note(stage.producer, sel);
      const reply = await call(meta, request);
      const parsed = stage.codec.read(stage.producer, reply.answer, contextTexts());
      const shown = [...(input.previous !== undefined ? input.blocking : []), ...given];
      const where = `${stage.stage} round ${input.round}`;
      const warnings = producerFaults(stage.producer, where, parsed, shown, stage.codec.kind === "markdown");
      // A weak model's artifact that says nothing is a producer fault: warned, counted, never converged on (issue 32).
      const empty = stage.codec.empty?.(parsed.artifact);
      if (empty !== undefined) warnings.push(emptyArtifactWarning(stage.producer, stage.artifact, where, empty));
      return { artifact: parsed.artifact, addressed: parsed.addressed, ...(warnings.length ? { warnings } : {}), ...(empty !== undefined ? { empty } : {}) };
    },
  };

  const criticCall = (role: string, artifact: Artifact, review: { round: number; previous?: readonly Finding[] }) => {
    const known = role === "assumption_surfacer" ? deps.knownGaps : undefined;
    const ctx = deps.context();
    const text = render(artifact);
    const sel = stageCode(role, ctx);
    const request = criticRequest(
      role,
      withCode(ctx, sel),
      stage.criticInputs,
      { name: stage.artifact, text },
      {
        ...(known ? { knownGaps: known.text } : {}),
        ...(review.previous ? { previous: review.previous } : {}),
        tracked: due,
        categories: stage.categories,
        rubricFirst: true, // every critic of a pipeline council follows the findings rubric
      },
    );
    return { meta: { role, stage: stage.stage, round: review.round, ...(known ? { wikiEntries: known.ids } : {}) }, request, known, sel };
  };
  const critics: Critic<Artifact>[] = stage.critics.map((role) => ({
    role,
    calls: async (artifact, review) => {
      const { meta, request } = criticCall(role, artifact, review);
      return cost(meta, request);
    },
    review: async (artifact, review) => {
      const { meta, request, known, sel } = criticCall(role, artifact, review);
      ledger.note(role, sel);
      const text = render(artifact);
      // A findings object quoted from the artifact, the issue or the code is never the critic's reply.
      const reply = await call(meta, request, (answer) => parseFindings(answer, [text, ...contextTexts(), ...(sel ? [sel.text] : [])]), sinkFor(role));
      const parsed = reply.parsed;
      if (!parsed?.ok)
        throw new ReplyFormatError(`${role} reply is ${parsed?.reason === "unparseable" ? "not JSON" : "not a findings object"}: ${parsed?.error ?? "empty"}`);
      deps.onVote?.({ stage: stage.stage, phase: stage.phase, round: review.round, role, findings: parsed.value.findings });
      return {
        findings: parsed.value.findings,
        invalid: parsed.invalid,
        ...(known ? { knownGaps: known.ids } : {}),
        ...(sel ? { code: sel.evidence } : {}),
      };
    },
  }));

  // The second opinion on a lone HIGH: in councils of two or more (the one-critic spec stage blocks on its judge alone).
  // The second opinion reads the code the critic that raised the finding read.
  const verifierCall = (artifact: Artifact, concern: Concern, round: number) => {
    const ctx = deps.context();
    const text = render(artifact);
    const sel = stageCode(concern.raised_by, ctx);
    return {
      meta: { role: VERIFIER_ROLE, stage: stage.stage, round },
      request: verifierRequest(VERIFIER_ROLE, withCode(ctx, sel), stage.criticInputs, { name: stage.artifact, text }, concern),
      sel,
    };
  };
  const verifier: Verifier<Artifact> | undefined =
    stage.critics.length >= 2
      ? {
          role: VERIFIER_ROLE,
          calls: async (artifact, concern, round) => {
            const { meta, request } = verifierCall(artifact, concern, round);
            return cost(meta, request);
          },
          check: async (artifact, concern, round) => {
            const { meta, request, sel } = verifierCall(artifact, concern, round);
            ledger.note(VERIFIER_ROLE, sel);
            const slot = `${VERIFIER_ROLE}#${concern.id}`; // flushed in concern-id order, after the critics
            const finding = JSON.stringify({ concern: concern.concern, evidence: concern.evidence });
            const reply = await call(
              meta,
              request,
              (answer) => parseVerdict(answer, [render(artifact), finding, ...contextTexts(), ...(sel ? [sel.text] : [])]),
              sinkFor(slot),
            );
            const parsed = reply.parsed;
            if (!parsed?.ok) throw new ReplyFormatError(`${VERIFIER_ROLE} reply is not a verdict: ${parsed?.error ?? "empty"}`);
            return verdictOf(parsed.value, sel);
          },
        }
      : undefined;

  const buffered: NewEvent[] = [];
  const started: Promise<unknown>[] = [];
  // Awaited in `finally`; one that fails meanwhile (the database went away) must not crash the process as unhandled first.
  const starting = (p: Promise<unknown>) => {
    p.catch(() => undefined);
    started.push(p);
  };
  // What each round said, kept with the stage (docs/serve.md "What was said").
  const rounds: RoundDetail[] = [];
  const mark = deps.meter.now();
  const loop = new AdversarialRetryLoop<Artifact>(producer, critics, verifier);
  let result: Awaited<ReturnType<typeof loop.run>>;
  try {
    result = await loop.run(stage, {
      issueId,
      cycle: deps.cycle.number,
      // The start of a stage is on the record at once (the dashboard shows the stage running); the rest lands with the commit.
      // A held-back event keeps the time it happened (a round-1 ConcernBlocked is stamped when round 1 is tallied).
      emit: (e) => (e.type === "AdversarialStageStarted" ? starting(deps.append([e])) : void buffered.push({ ...e, at: e.at ?? deps.now() })),
      budget: deps.budget,
      reserve: deps.reserve,
      usage: () => deps.meter.since(mark),
      concernId: (fp, phase, role) => deps.cycle.concernId(state.pending_concerns, fp, phase, role),
      leadRoles: ESCALATING_ROLES,
      textOf: render,
      now: deps.now,
      ...(deps.warn ? { warn: deps.warn } : {}),
      ...(deps.onProgress ? { onProgress: deps.onProgress } : {}),
      onRound: (r) => rounds.push(roundDetail(r, render)),
    });
  } catch (e) {
    deps.cycle.rewindIds(); // the stage will be run again whole: its ids are handed out again, identically
    throw e;
  } finally {
    await Promise.all(started);
    await flush(); // an aborted round's calls are still on the record
  }

  // What the stage's requests carried of the code goes on its record (issue show --context, the dashboard).
  ledger.record(result.stageRun, buffered);

  // Resolutions come only from the draft the council accepted (result.addressed is empty otherwise).
  const settledHere = new Set(result.resolved);
  const answered = resolutionEvents(issueId, given, result.addressed, { kind: "producer", role: stage.producer }, deps.now).filter(
    (e) => e.type !== "ConcernAddressed" || !settledHere.has(e.resolution.concern_id),
  );
  const carried = result.artifact === undefined ? [] : carryEvents(issueId, due, answered, stage.mustAddressBy, "carried");
  const content = result.artifact === undefined ? undefined : stage.codec.encode(result.artifact);
  const artifact: { name: ArtifactName; content: string } | undefined = content === undefined ? undefined : { name: stage.artifact, content };
  await deps.cycle.commitStage(stage.stage, artifact, [...answered, ...carried, ...buffered].filter(deps.keep), [
    { name: roundsArtifact(stage.stage), content: stageRoundsText(stage.stage, rounds) },
  ]);
  return { stageRun: result.stageRun, artifact: content };
}

const ascending = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A verifier's parsed verdict, with whether its quote is of the code its request carried (docs/issue.md "Findings about the code"). */
export function verdictOf(v: { verdict: Verdict; reason: string; evidence?: string | undefined }, sel: CodeSelection | undefined): VerifierAnswer {
  const evidence = v.evidence ?? "";
  const quotesCode = sel !== undefined && evidence !== "" && ground(sel.evidence.text, evidence).grounded;
  return { verdict: v.verdict, reason: v.reason, evidence, ...(quotesCode ? { quotesCode } : {}) };
}
