import { AdversarialRetryLoop, type Critic, type RoundProgress, type Usage } from "../adversarial/retry-loop.js";
import type { CallRecord } from "../contracts/audit.js";
import type { AdversarialState, Concern, Finding, StageRecord } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { ReplyFormatError } from "../errors.js";
import type { CallMeta, ModelReply } from "../models/call.js";
import type { Parsed } from "../models/json.js";
import { roundUsd } from "../models/pricing.js";
import type { CallBudget, ModelRequest } from "../models/types.js";
import type { PlanningCycle } from "./cycle.js";
import { carryEvents, resolutionEvents } from "./resolutions.js";
import { criticRequest, issueText, parseCriteria, parseFindings, parseProducer, producerRequest, renderCriteria, type RoleContext } from "./roles.js";
import { ESCALATING_ROLES, type ArtifactName, type PipelineStage } from "./stages.js";

/** The one model door as the pipeline uses it; `emit` overrides where the call's ModelCall event goes. */
export type Door = <T>(
  meta: CallMeta,
  request: ModelRequest,
  parse?: (answer: string) => Parsed<T>,
  emit?: (event: NewEvent) => void,
) => Promise<ModelReply<T>>;

/** Known gaps from the wiki for the assumption surfacer (CONTRACT §4 carryover). */
export interface KnownGaps {
  ids: string[];
  text: string;
}

/** Network calls, tokens and dollars of an issue's run, measured from the call records. */
export class Meter {
  private calls = 0;
  private input = 0;
  private output = 0;
  private cost: number | null = 0;
  record(r: CallRecord): void {
    if (r.cached) return;
    this.calls++;
    this.input += r.input_tokens;
    this.output += r.output_tokens;
    this.cost = this.cost === null || r.cost_usd === null || r.cost_usd === undefined ? null : this.cost + r.cost_usd;
  }
  now(): Usage {
    return { calls: this.calls, inputTokens: this.input, outputTokens: this.output, costUsd: this.cost };
  }
  /** Usage since a mark; dollars are null when any call since had no known price. */
  since(mark: Usage): Usage {
    const n = this.now();
    return {
      calls: n.calls - mark.calls,
      inputTokens: n.inputTokens - mark.inputTokens,
      outputTokens: n.outputTokens - mark.outputTokens,
      costUsd: n.costUsd === null || mark.costUsd === null ? null : roundUsd(n.costUsd - mark.costUsd),
    };
  }
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
  door: Door;
  append: (events: NewEvent[]) => Promise<unknown>;
  budget: CallBudget;
  /** Calls the later stages and the reviewer need (never spent here). */
  reserve: number;
  meter: Meter;
  context: () => RoleContext;
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

const render = (a: string | string[]) => (Array.isArray(a) ? renderCriteria(a) : a);

/**
 * Runs one stage of the table: the producer and its council in one AdversarialRetryLoop, then
 * commits the artifact, the stage's events and the concern counter in one transaction.
 */
export async function runStage(stage: PipelineStage, state: AdversarialState, deps: StageDeps): Promise<StageOutcomeResult> {
  const { issueId } = deps;
  const due = state.pending_concerns.filter((c) => c.must_address_by === stage.phase);
  const criteriaStage = stage.artifact === "acceptance_criteria";

  // Critics answer in parallel, in whatever order; their ModelCall events are appended in council
  // order once the round is over, so identical inputs give identical event logs.
  const roundEvents = new Map<string, NewEvent[]>();
  const flushCritics = async () => {
    const events = stage.critics.flatMap((role) => roundEvents.get(role) ?? []);
    roundEvents.clear();
    if (events.length) await deps.append(events);
  };

  const contextTexts = () => {
    const ctx = deps.context();
    return [issueText(ctx.issue), ...Object.values(ctx.artifacts).filter((t): t is string => typeof t === "string")];
  };
  const call: Door = async (meta, request, parse, emit) => {
    try {
      const reply = await deps.door(meta, request, parse, emit);
      deps.meter.record(reply.record);
      return reply;
    } catch (e) {
      for (const r of (e as { calls?: CallRecord[] }).calls ?? []) deps.meter.record(r);
      throw e;
    }
  };

  const producer = async (input: { round: number; previous: string | string[] | undefined; blocking: readonly Concern[] }) => {
    await flushCritics();
    const retry = input.previous !== undefined && input.blocking.length ? { previous: render(input.previous), blocking: input.blocking } : undefined;
    const request = producerRequest(stage.producer, stage.artifact, deps.context(), stage.inputs, due, retry);
    const reply = await call({ role: stage.producer, stage: stage.stage, round: input.round }, request);
    if (criteriaStage) {
      const { criteria, addressed } = parseCriteria(stage.producer, reply.answer, contextTexts());
      return { artifact: criteria as string | string[], addressed };
    }
    const { artifact, addressed } = parseProducer(stage.producer, reply.answer);
    return { artifact: artifact as string | string[], addressed };
  };

  const critics: Critic<string | string[]>[] = stage.critics.map((role) => ({
    role,
    review: async (artifact, review) => {
      const text = render(artifact);
      const known = role === "assumption_surfacer" ? deps.knownGaps : undefined;
      const sink = (e: NewEvent) => void roundEvents.set(role, [...(roundEvents.get(role) ?? []), e]);
      const request = criticRequest(
        role,
        deps.context(),
        stage.criticInputs,
        { name: stage.artifact, text },
        {
          ...(known ? { knownGaps: known.text } : {}),
          ...(review.previous ? { previous: review.previous } : {}),
          tracked: due,
          categories: stage.categories,
        },
      );
      const reply = await call(
        { role, stage: stage.stage, round: review.round, ...(known ? { wikiEntries: known.ids } : {}) },
        request,
        // A findings object quoted from the artifact or the issue is never the critic's reply.
        (answer) => parseFindings(answer, [text, ...contextTexts()]),
        sink,
      );
      const parsed = reply.parsed;
      if (!parsed?.ok)
        throw new ReplyFormatError(`${role} reply is ${parsed?.reason === "unparseable" ? "not JSON" : "not a findings object"}: ${parsed?.error ?? "empty"}`);
      deps.onVote?.({ stage: stage.stage, phase: stage.phase, round: review.round, role, findings: parsed.value.findings });
      return { findings: parsed.value.findings, invalid: parsed.invalid };
    },
  }));

  const buffered: NewEvent[] = [];
  const started: Promise<unknown>[] = [];
  // Awaited in `finally`; one that fails meanwhile (the database went away) must not crash the process as unhandled first.
  const starting = (p: Promise<unknown>) => {
    p.catch(() => undefined);
    started.push(p);
  };
  const mark = deps.meter.now();
  const loop = new AdversarialRetryLoop<string | string[]>(producer, critics);
  let result: Awaited<ReturnType<typeof loop.run>>;
  try {
    result = await loop.run(stage, {
      issueId,
      cycle: deps.cycle.number,
      // The start of a stage is on the record at once (the dashboard shows the stage running); the rest lands with the commit.
      emit: (e) => (e.type === "AdversarialStageStarted" ? starting(deps.append([e])) : void buffered.push(e)),
      budget: deps.budget,
      reserve: deps.reserve,
      usage: () => deps.meter.since(mark),
      concernId: (fp, phase, role) => deps.cycle.concernId(state.pending_concerns, fp, phase, role),
      leadRoles: ESCALATING_ROLES,
      textOf: render,
      now: deps.now,
      ...(deps.warn ? { warn: deps.warn } : {}),
      ...(deps.onProgress ? { onProgress: deps.onProgress } : {}),
    });
  } catch (e) {
    deps.cycle.rewindIds(); // the stage will be run again whole: its ids are handed out again, identically
    throw e;
  } finally {
    await Promise.all(started);
    await flushCritics(); // an aborted round's calls are still on the record
  }

  const answered = resolutionEvents(issueId, due, result.addressed, { kind: "producer", role: stage.producer }, deps.now);
  const carried = result.artifact === undefined ? [] : carryEvents(issueId, due, answered, stage.mustAddressBy, "carried");
  const content = result.artifact === undefined ? undefined : Array.isArray(result.artifact) ? JSON.stringify(result.artifact) : result.artifact;
  const artifact: { name: ArtifactName; content: string } | undefined = content === undefined ? undefined : { name: stage.artifact, content };
  await deps.cycle.commitStage(stage.stage, artifact, [...answered, ...carried, ...buffered].filter(deps.keep));
  return { stageRun: result.stageRun, artifact: content };
}
