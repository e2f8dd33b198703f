import { AdversarialRetryLoop, type Critic, type RoundProgress } from "../adversarial/retry-loop.js";
import { callBudget, type IssueBudget } from "../adversarial/budget.js";
import { concernIdOf } from "../adversarial/concern-id.js";
import { toStageRun, type AddressedItem, type AdversarialState, type Concern, type StageRecord, type StageRun } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { BudgetExceeded, RunError, messageOf } from "../errors.js";
import type { CallMeta, ModelReply } from "../models/call.js";
import type { CallBudget, ModelRequest } from "../models/types.js";
import type { EventLog } from "../store/event-log.js";
import type { PlanRow, PlanStore } from "../store/plans.js";
import type { TrackedIssue, Tracker } from "../trackers/port.js";
import { complexityGate } from "./complexity-gate.js";
import { TRANSIENT_LABELS, transition, type StateLabel, type TransientLabel } from "./labels.js";
import {
  criticRequest,
  gateRequest,
  parseCriteria,
  parseFindings,
  parseProducer,
  producerRequest,
  renderCriteria,
  type RoleContext,
} from "./roles.js";
import { carryEvents, resolutionEvents } from "./resolutions.js";
import { planOutcome, reviewPlan } from "./review.js";
import { ESCALATING_ROLES, STAGES, type ArtifactName, type PipelineStage } from "./stages.js";

/** Known gaps from the wiki for the assumption surfacer (CONTRACT §4 carryover). */
export interface KnownGaps {
  ids: string[];
  text: string;
}

/** Live progress of `issue plan`, for the TTY display. */
export type PipelineProgress =
  | { kind: "gate" }
  | { kind: "stage"; phase: string; progress: RoundProgress }
  | { kind: "stage-done"; run: StageRecord }
  | { kind: "review" };

/** The driver's ports: tracker, stores, the model door and the wiki. */
export interface PlanIssueDeps {
  tracker: Tracker;
  plans: PlanStore;
  events: EventLog;
  state: (issueId: string) => AdversarialState;
  /** The one model door, bound to this issue; `budget` is the cycle's ceiling; `emit`, if given, receives the call's events instead of the log. */
  call: (meta: CallMeta, request: ModelRequest, budget: CallBudget, emit?: (event: NewEvent) => void) => Promise<ModelReply>;
  maxCalls: number;
  knownGaps?: (text: string) => KnownGaps | undefined;
  onProgress?: (p: PipelineProgress) => void;
  /** Warnings that must not stop the run (a label that could not be removed, say). */
  warn?: (message: string) => void;
  now?: () => string;
}

/** `dissent issue plan --json` (CONTRACT §4). */
export interface PlanResult {
  issue: string;
  route: "trivial" | "load_bearing";
  route_reason: string;
  status: "ready" | "needs_replan" | "hitl";
  plan: string;
  acceptance_criteria: string[];
  pending_concerns: Concern[];
  stages: StageRun[];
  labels: string[];
  calls: number;
}

const ARTIFACTS: readonly ArtifactName[] = ["brief", "shape", "plan", "acceptance_criteria"];

/**
 * Plans one issue: ComplexityGate, then (load-bearing) the four adversarial stages, then the
 * plan reviewer. State is saved after every stage; an interrupted cycle resumes at the first
 * stage with no saved StageRun.
 */
export async function planIssue(issueId: string, deps: PlanIssueDeps): Promise<PlanResult> {
  const now = deps.now ?? (() => new Date().toISOString());
  const issue = await deps.tracker.get(issueId);
  const id = issue.id;
  let labels = issue.labels;
  transition(labels, "dissent-plan", id); // refuse an illegal move before anything changes

  let row: PlanRow = deps.plans.get(id) ?? { issue_id: id, cycle: 0, status: "new", route: null, route_reason: null, calls: 0, concern_seq: 0 };
  if (row.status !== "planning") row = { ...row, cycle: row.cycle + 1, status: "planning", route: null, route_reason: null, calls: 0 };
  deps.plans.save(row);
  const cycle = row.cycle;

  const budget: IssueBudget = callBudget(deps.maxCalls, row.calls, () => deps.plans.addCall(id));
  const usedAtStart = budget.used();
  const tokens = { input: 0, output: 0 };
  const call = async (meta: CallMeta, request: ModelRequest, emit?: (event: NewEvent) => void) => {
    const reply = await deps.call(meta, request, budget, emit);
    tokens.input += reply.record.input_tokens;
    tokens.output += reply.record.output_tokens;
    return reply;
  };
  const append = (e: NewEvent) => deps.events.append(e);

  const relabel = async (change: { add: readonly string[]; remove: readonly string[] }) => {
    const add = change.add.filter((l) => !labels.includes(l));
    const remove = change.remove.filter((l) => labels.includes(l));
    if (!add.length && !remove.length) return;
    labels = await deps.tracker.setLabels(id, { add, remove });
    append({ type: "LabelChanged", issue_id: id, added: add, removed: remove, labels });
  };
  const moveTo = (to: StateLabel) => relabel(transition(labels, to, id));

  // A run killed with -9 leaves its transient label behind: clear it before starting.
  await relabel({ add: [], remove: TRANSIENT_LABELS });
  await moveTo("dissent-plan");

  // Concern ids: an already-pending concern keeps its id; a new one gets `{PHASE}-{ROLE}-{NNN}`.
  const concernId = (fp: string, phase: string, role: string) => {
    const known = deps.state(id).pending_concerns.find((c) => c.fingerprint === fp);
    if (known) return known.id;
    return concernIdOf(phase, role, deps.plans.nextConcernSeq(id));
  };

  const resolutionsFor = (given: readonly Concern[], addressed: readonly AddressedItem[], by: string) => resolutionEvents(id, given, addressed, by, now);
  // A concern a person resolved by hand is settled: raised again (say, from the cache in a later cycle), it is not pending again.
  const notHumanResolved = (e: NewEvent) => {
    if (e.type !== "ConcernForwarded") return true;
    return !deps.state(id).addressed_concerns.some((r) => r.resolved_by === "human" && r.fingerprint === e.concern.fingerprint);
  };

  // --- ComplexityGate (once per cycle; a resumed cycle keeps its decision) ---
  if (!row.route) {
    deps.onProgress?.({ kind: "gate" });
    const decision = await complexityGate({ ...issue, labels }, async () => (await call({ role: "complexity_gate" }, gateRequest(issue))).text);
    append({ type: "ComplexityGateRouted", issue_id: id, route: decision.route, reason: decision.reason, source: decision.source, cycle });
    row = { ...row, route: decision.route, route_reason: decision.reason, calls: budget.used() };
    deps.plans.save(row);
  }
  const route = row.route as "trivial" | "load_bearing";

  const artifacts: Partial<Record<ArtifactName, string>> = {};
  for (const name of ARTIFACTS) {
    const text = deps.plans.artifact(id, cycle, name);
    if (text !== undefined) artifacts[name] = text;
  }
  const criteria = (): string[] => (artifacts.acceptance_criteria ? (JSON.parse(artifacts.acceptance_criteria) as string[]) : []);
  const roleContext = (): RoleContext => ({
    issue,
    artifacts: { ...artifacts, ...(artifacts.acceptance_criteria ? { acceptance_criteria: renderCriteria(criteria()) } : {}) },
  });

  const runStage = async (stage: PipelineStage): Promise<StageRecord> => {
    const due = deps.state(id).pending_concerns.filter((c) => c.must_address_by === stage.phase);
    const isCriteria = stage.artifact === "acceptance_criteria";
    const render = (a: string | string[]) => (Array.isArray(a) ? JSON.stringify({ acceptance_criteria: a }) : a);
    const gaps = stage.critics.includes("assumption_surfacer") ? deps.knownGaps?.(`${issue.title}\n${issue.body}`) : undefined;

    const producer = async (input: { round: number; previous: string | string[] | undefined; blocking: readonly Concern[] }) => {
      const ctx = roleContext();
      const retry = input.previous !== undefined && input.blocking.length ? { previous: render(input.previous), blocking: input.blocking } : undefined;
      const reply = await call(
        { role: stage.producer, stage: stage.stage, round: input.round },
        producerRequest(stage.producer, ctx, stage.inputs, due, retry, isCriteria),
      );
      if (isCriteria) {
        const { criteria: list, addressed } = parseCriteria(stage.producer, reply.text);
        return { artifact: list as string | string[], addressed };
      }
      const { artifact, addressed } = parseProducer(stage.producer, reply.text);
      return { artifact: artifact as string | string[], addressed };
    };
    // Critics answer in parallel, in whatever order; their ModelCall events are logged in council
    // order once the round is tallied, so identical inputs give identical event logs.
    const roundCalls = new Map<string, NewEvent[]>();
    const flushRound = () => {
      for (const role of stage.critics) for (const e of roundCalls.get(role) ?? []) append(e);
      roundCalls.clear();
    };
    const critics: Critic<string | string[]>[] = stage.critics.map((role) => ({
      role,
      review: async (artifact, round) => {
        const text = Array.isArray(artifact) ? renderCriteria(artifact) : artifact;
        const known = role === "assumption_surfacer" ? gaps : undefined;
        const sink = (e: NewEvent) => void roundCalls.set(role, [...(roundCalls.get(role) ?? []), e]);
        const reply = await call(
          { role, stage: stage.stage, round, ...(known ? { wikiEntries: known.ids } : {}) },
          criticRequest(role, roleContext(), stage.criticInputs, { name: stage.artifact, text }, known?.text),
          sink,
        );
        return parseFindings(role, reply.text).findings;
      },
    }));

    // Everything but the start of a stage lands in one transaction with its artifact: a kill mid-stage redoes the stage whole.
    const buffered: NewEvent[] = [];
    const loop = new AdversarialRetryLoop<string | string[]>(producer, critics);
    let result: Awaited<ReturnType<typeof loop.run>>;
    try {
      result = await loop.run(stage, {
        issueId: id,
        cycle,
        emit: (e) => (e.type === "AdversarialStageStarted" ? void append(e) : void buffered.push(e)),
        budget,
        usage: () => ({ calls: budget.used(), inputTokens: tokens.input, outputTokens: tokens.output }),
        concernId,
        leadRoles: ESCALATING_ROLES,
        now,
        onProgress: (progress) => {
          if (progress.step === "tallied") flushRound();
          deps.onProgress?.({ kind: "stage", phase: stage.phase, progress });
        },
      });
    } finally {
      flushRound(); // an aborted round's calls are still on the record
    }
    const answered = resolutionsFor(due, result.addressed, stage.producer);
    const carried = result.artifact === undefined ? [] : carryEvents(id, due, answered, stage.mustAddressBy, "carried");
    deps.events.transaction(() => {
      if (result.artifact !== undefined) {
        const content = Array.isArray(result.artifact) ? JSON.stringify(result.artifact) : result.artifact;
        deps.plans.putArtifact(id, cycle, stage.artifact, content);
        artifacts[stage.artifact] = content;
      }
      for (const e of [...answered, ...carried, ...buffered].filter(notHumanResolved)) append(e);
      deps.plans.save({ ...row, calls: budget.used() });
    });
    deps.onProgress?.({ kind: "stage-done", run: result.stageRun });
    return result.stageRun;
  };

  let held: TransientLabel | undefined;
  try {
    if (route === "load_bearing") {
      const finished = new Set(deps.state(id).stage_history.filter((s) => s.cycle === cycle).map((s) => s.stage));
      for (const [i, stage] of STAGES.entries()) {
        if (finished.has(stage.stage)) continue;
        if (held !== stage.label) {
          if (held) await relabel({ add: [], remove: [held] });
          await relabel({ add: [stage.label], remove: [] });
          held = stage.label;
        }
        const run = await runStage(stage);
        if (run.outcome === "budget") break;
        if (STAGES[i + 1]?.label !== stage.label) {
          await relabel({ add: [], remove: [stage.label] });
          held = undefined;
        }
      }
    } else if (artifacts.plan === undefined && budget.remaining() > 0) {
      // A trivial issue goes straight to the planner (ADR-0064 "Routing").
      const due = deps.state(id).pending_concerns.filter((c) => c.must_address_by === "plan");
      try {
        const reply = await call({ role: "planner" }, producerRequest("planner", roleContext(), [], due));
        const { artifact, addressed } = parseProducer("planner", reply.text);
        const answered = resolutionsFor(due, addressed, "planner");
        deps.events.transaction(() => {
          deps.plans.putArtifact(id, cycle, "plan", artifact);
          artifacts.plan = artifact;
          for (const e of [...answered, ...carryEvents(id, due, answered, "review", "carried")]) append(e);
          deps.plans.save({ ...row, calls: budget.used() });
        });
      } catch (e) {
        if (!BudgetExceeded.isInstance(e)) throw e;
      }
    }
  } finally {
    if (held) {
      try {
        await relabel({ add: [], remove: [held] });
      } catch (e) {
        deps.warn?.(`could not remove label ${held} from issue ${id}: ${messageOf(e)} (the next \`dissent issue plan ${id}\` clears it)`);
      }
    }
  }

  if (artifacts.plan === undefined) {
    // The cycle is over: the next `issue plan` starts a new one (what was already asked is in the cache, free).
    deps.plans.save({ ...row, status: "budget", calls: budget.used() });
    throw new RunError(
      `no plan could be made for issue ${id}: the call budget of ${budget.max} model calls ran out before the planner finished (${budget.used()} used); raise budget.max_calls_per_issue and run dissent issue plan ${id} again (replies already received come from the cache)`,
    );
  }

  // --- Plan reviewer: every pending concern is a must-address constraint ---
  deps.onProgress?.({ kind: "review" });
  const review = await reviewPlan({ issueId: id, pending: deps.state(id).pending_concerns, context: roleContext(), call, concernId, now });
  deps.events.transaction(() => {
    for (const e of review.events.filter(notHumanResolved)) append(e);
  });
  const finalState = deps.state(id);
  const status = planOutcome(finalState, review.rejected);
  if (status === "ready") await moveTo("dissent-ready");
  if (status === "hitl") await moveTo("dissent-hitl");
  row = { ...row, status, calls: budget.used() };
  deps.plans.save(row);

  const result: PlanResult = {
    issue: id,
    route,
    route_reason: row.route_reason ?? "",
    status,
    plan: artifacts.plan,
    acceptance_criteria: criteria(),
    pending_concerns: finalState.pending_concerns,
    stages: finalState.stage_history.filter((s) => s.cycle === cycle).map(toStageRun),
    labels,
    calls: budget.used() - usedAtStart,
  };
  await deps.tracker.publishPlan(id, {
    status,
    route,
    plan: result.plan,
    acceptanceCriteria: result.acceptance_criteria,
    pendingConcerns: result.pending_concerns,
  });
  return result;
}

export type { TrackedIssue };
