import { fingerprint } from "../adversarial/fingerprint.js";
import type { RoundProgress } from "../adversarial/retry-loop.js";
import { toStageRun, type Concern, type StageRecord, type StageRun } from "../contracts/concern.js";
import type { DissentEvent, NewEvent } from "../contracts/events.js";
import { transition } from "../contracts/labels.js";
import { BudgetExceeded, UsageError } from "../errors.js";
import type { CallContext } from "../models/types.js";
import type { LeaseHolder, Store } from "../store/port.js";
import { reduce } from "../store/state.js";
import type { TrackedIssue, Tracker } from "../trackers/port.js";
import { criteriaCodec, emptyMarkdown } from "./artifact-codecs.js";
import { complexityGate } from "./complexity-gate.js";
import { PlanningCycle } from "./cycle.js";
import { emptyArtifactWarning, producerFaults } from "./producer-faults.js";
import { runIssue } from "./issue-run.js";
import { carryEvents, resolutionEvents } from "./resolutions.js";
import { openClaims, planOutcome, quotes, reviewPlan } from "./review.js";
import type { CodeSource } from "./code-context.js";
import { gateRequest, issueText, parseProducer, producerRequest, renderCriteria, type RoleContext } from "./roles.js";
import { runStage, type CriticVoteReport, type KnownGaps } from "./stage-runner.js";
import { reserveAfter, STAGES } from "./stages.js";

export type { CriticVoteReport, KnownGaps } from "./stage-runner.js";

/** Live progress of `issue plan`, for the TTY display and the factory's lines. */
export type PipelineProgress =
  | { kind: "gate" }
  | { kind: "stage"; phase: string; progress: RoundProgress }
  | { kind: "stage-done"; run: StageRecord }
  | { kind: "review" };

/** The driver's ports: the store, the tracker, the one model door's configuration and the wiki. */
export interface PlanIssueDeps {
  store: Store;
  tracker: Tracker;
  /** The call door's configuration; the driver adds the issue, its budget and where events go. */
  calls: CallContext;
  /** Network calls over the issue's whole life, every cycle counted (budget.max_calls_per_issue). */
  maxCalls: number;
  /** A hard ceiling in dollars over the issue's whole life (budget.max_usd_per_issue), if set. */
  maxUsd?: number | null;
  /** Planning cycles the issue may have (budget.max_cycles_per_issue); unlimited when absent. */
  maxCycles?: number;
  /** Plan an issue that is already `ready` again (`--replan`); without it that is a usage error. */
  replan?: boolean;
  /** The project block's text every role is given (docs/configuration.md `project`), read once the issue is. */
  project?: () => Promise<string | undefined>;
  /** The code the roles read (docs/issue.md "The code the councils read"), opened once the issue is read; none: no request carries code. */
  code?: () => Promise<CodeSource | undefined>;
  knownGaps?: (text: string) => Promise<KnownGaps | undefined>;
  onProgress?: (p: PipelineProgress) => void;
  /** Told of each critic's parsed vote (telemetry's evaluation events). */
  onVote?: (v: CriticVoteReport) => void;
  /** Warnings that must not stop the run (a critic that failed, a label that could not be removed). */
  warn?: (message: string) => void;
  /** Said (through `warn`) only when a council is about to run: a model reviewing itself, a verifier on a critic's model. */
  councilWarnings?: readonly string[];
  now?: () => string;
  /** Who holds the issue's lease while this runs (default: this process). */
  holder?: LeaseHolder;
  lease?: { ttlMs?: number; renewMs?: number };
}

/** `dissent issue plan --json` (docs/issue.md). */
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
  /** Network model calls this invocation made. */
  calls: number;
}

/**
 * Plans one issue (docs/issue.md): holds its lease, runs the ComplexityGate, then — load-bearing — the
 * four adversarial stages of the table, each committed as it finishes, then the plan reviewer. An
 * interrupted cycle resumes at the first stage with no saved StageRun.
 */
export async function planIssue(issueId: string, deps: PlanIssueDeps): Promise<PlanResult> {
  const now = deps.now ?? (() => new Date().toISOString());
  const { store } = deps;
  const issue = await deps.tracker.get(issueId);
  const id = issue.id;
  transition(issue.labels, "dissent-plan", id); // refuse an illegal move before anything changes
  // A reviewed plan is not replanned by accident: a new cycle can flip it to needs_replan (docs/issue.md).
  // The label alone counts only without a cycle in this store (a tracker shared with another store); a
  // cycle still `planning` under `dissent-ready` was stopped between its label move and its commit: it resumes.
  const before = await store.plan(id);
  const labelledReady = issue.labels.includes("dissent-ready") && before?.status !== "planning";
  if (!deps.replan && (before?.status === "ready" || labelledReady)) {
    throw new UsageError(`issue ${id} is ready (its plan was reviewed); to plan it again, run dissent issue plan ${id} --replan`);
  }
  const project = await deps.project?.();
  const code = await deps.code?.();

  // The lease, the ceilings (checked before a new cycle starts), the budget, the meter and the one door: the issue-run kernel's.
  const kernel = {
    store,
    subject: id,
    calls: deps.calls,
    ceilings: { maxCalls: deps.maxCalls, maxUsd: deps.maxUsd ?? null, maxCycles: deps.maxCycles ?? null },
    labels: { tracker: deps.tracker, current: issue.labels },
    ...(deps.holder ? { holder: deps.holder } : {}),
    ...(deps.lease ? { lease: deps.lease } : {}),
    ...(deps.warn ? { warn: deps.warn } : {}),
  };
  return runIssue(kernel, async ({ budget, meter, door, costOf, labels }) => {
    const cycle = await PlanningCycle.startOrResume(store, id);

    // A run killed with -9 (or whose lease expired) leaves its transient label behind: clear it first.
    await labels.clearStale();
    await labels.moveTo("dissent-plan");

    // --- ComplexityGate (once per cycle; a resumed cycle keeps its decision) ---
    if (!cycle.route) {
      deps.onProgress?.({ kind: "gate" });
      const decision = await complexityGate({ ...issue, labels: labels.labels }, async () => {
        const reply = await door({ role: "complexity_gate" }, gateRequest(issue, project));
        return reply.answer;
      });
      await cycle.recordRoute(decision);
    }
    const route = cycle.route as NonNullable<PlanningCycle["route"]>;

    const artifacts = await cycle.artifacts();
    const criteria = (): string[] => (artifacts.acceptance_criteria ? criteriaCodec.decode(artifacts.acceptance_criteria) : []);
    // A replan of a merged issue shows its planner the gaps it shipped with, so they are not repeated.
    const shipped = shippedGapsText(await store.events({ issueId: id, types: ["ShippedWithKnownGap"] }));
    // A replan's planner is shown its previous plan when the concerns it is given quote it (docs/issue.md "Replanning");
    // otherwise its request stays the same bytes, and an unchanged replan is served from the cache.
    const earlier = await previousPlan(store, id, cycle.number);
    const quoted = earlier !== undefined && (await cycle.state()).pending_concerns.some((c) => c.must_address_by === "plan" && quotes(earlier, c));
    const context = (): RoleContext => ({
      issue,
      artifacts: { ...artifacts, ...(artifacts.acceptance_criteria ? { acceptance_criteria: renderCriteria(criteria()) } : {}) },
      ...(project ? { project } : {}),
      ...(shipped ? { shippedGaps: shipped } : {}),
      ...(quoted ? { previousPlan: earlier } : {}),
    });
    // A concern a person resolved is settled: raised again (say, from the cache in a later cycle), it is not pending again.
    const humanResolved = new Set((await cycle.state()).addressed_concerns.filter((r) => r.resolved_by === "human").map((r) => r.fingerprint));
    const keep = (e: NewEvent) => e.type !== "ConcernForwarded" || !humanResolved.has(e.concern.fingerprint);
    const gaps = deps.knownGaps ? await deps.knownGaps(`${issue.title}\n${issue.body}`) : undefined;

    if (route.route === "load_bearing") {
      const finished = await cycle.finishedStages();
      // A warning about the councils is said when one will run: never for a trivial issue, nor a cycle resumed at its reviewer.
      if (STAGES.some((st) => !finished.has(st.stage))) for (const w of deps.councilWarnings ?? []) deps.warn?.(w);
      for (const [i, stage] of STAGES.entries()) {
        if (finished.has(stage.stage)) continue;
        await labels.hold(stage.label);
        const { stageRun, artifact } = await runStage(stage, await cycle.state(), {
          issueId: id,
          cycle,
          door,
          costOf,
          append: (events) => store.append(events),
          budget,
          reserve: reserveAfter(i),
          meter,
          context,
          ...(code ? { code } : {}),
          ...(gaps ? { knownGaps: gaps } : {}),
          keep,
          now,
          ...(deps.warn ? { warn: deps.warn } : {}),
          onProgress: (progress) => deps.onProgress?.({ kind: "stage", phase: stage.phase, progress }),
          ...(deps.onVote ? { onVote: deps.onVote } : {}),
        });
        if (artifact !== undefined) artifacts[stage.artifact] = artifact;
        deps.onProgress?.({ kind: "stage-done", run: stageRun });
        if (STAGES[i + 1]?.label !== stage.label) await labels.release();
      }
    } else if (artifacts.plan === undefined) {
      // A trivial issue goes straight to the planner (ADR-0064 "Routing"), keeping one call for the reviewer.
      const due = (await cycle.state()).pending_concerns.filter((c) => c.must_address_by === "plan");
      if (budget.remaining() >= 2) {
        try {
          const sel = code?.forTexts("planner", [issueText(issue)]);
          const reply = await door({ role: "planner" }, producerRequest("planner", "plan", sel ? { ...context(), code: sel.text } : context(), [], due));
          const parsed = parseProducer("planner", reply.answer);
          for (const w of producerFaults("planner", `issue ${id}'s plan`, parsed, due)) deps.warn?.(w);
          const { artifact, addressed } = parsed;
          // A plan that says nothing is a producer fault, as in a council (issue 32): warned, and a person looks.
          const empty = emptyMarkdown(artifact);
          if (empty !== undefined) deps.warn?.(emptyArtifactWarning("planner", "plan", `issue ${id}'s plan`, empty));
          const fault = empty !== undefined ? [emptyPlanConcern(id, empty, (fp) => cycle.concernId([], fp, "plan", "council"), now)] : [];
          const answered = resolutionEvents(id, due, addressed, { kind: "producer", role: "planner" }, now);
          await cycle.commitPlan(artifact, [...answered, ...carryEvents(id, due, answered, "review", "carried"), ...fault].filter(keep));
          artifacts.plan = artifact;
        } catch (e) {
          if (!BudgetExceeded.isInstance(e)) throw e;
        }
      }
    }

    if (artifacts.plan === undefined) {
      // The cycle is over: the next `issue plan` starts a new one (what was already asked is in the cache, free).
      await cycle.finish("budget", []);
      throw new BudgetExceeded(
        `no plan could be made for issue ${id}: its call budget of ${budget.max} model calls ran out before the planner finished (${budget.used()} used over all its cycles); raise budget.max_calls_per_issue and run dissent issue plan ${id} again (replies already received come from the cache)`,
        { max: budget.max, used: budget.used(), unit: "calls", setting: "budget.max_calls_per_issue" },
      );
    }

    // --- Plan reviewer: every CRITICAL and HIGH pending concern is a must-address constraint ---
    deps.onProgress?.({ kind: "review" });
    const before = await cycle.state();
    const readCode = reviewerCode(code, context());
    const review = await reviewPlan({
      issueId: id,
      pending: before.pending_concerns,
      claims: openClaims(before),
      context: context(),
      ...(readCode ? { code: readCode } : {}),
      ...(earlier !== undefined ? { earlier } : {}),
      call: door,
      concernId: (fp, phase, role) => cycle.concernId(before.pending_concerns, fp, phase, role),
      now,
      ...(deps.warn ? { warn: deps.warn } : {}),
    });
    const events = review.events.filter(keep);
    // The outcome is read from the state the review's events fold into; labels move, then events and status commit together.
    const state = events.reduce((s, e) => reduce(s, { ...e, at: now() } as DissentEvent), before);
    const status = planOutcome(state, review.rejected);
    if (status === "ready") await labels.moveTo("dissent-ready");
    if (status === "hitl") await labels.moveTo("dissent-hitl");
    await cycle.finish(status, events);

    const usage = meter.now();
    const result: PlanResult = {
      issue: id,
      route: route.route,
      route_reason: route.reason,
      status,
      plan: artifacts.plan,
      acceptance_criteria: criteria(),
      pending_concerns: state.pending_concerns,
      stages: state.stage_history.filter((s) => s.cycle === cycle.number).map(toStageRun),
      labels: labels.labels,
      calls: usage.calls,
    };
    await deps.tracker.publishPlan(id, {
      status,
      route: route.route,
      plan: result.plan,
      acceptanceCriteria: result.acceptance_criteria,
      pendingConcerns: result.pending_concerns,
    });
    return result;
  });
}

/** The plan of the latest earlier cycle that made one (a cycle that ran out of budget made none). */
async function previousPlan(store: Store, issueId: string, cycle: number): Promise<string | undefined> {
  for (let n = cycle - 1; n >= 1; n--) {
    const plan = await store.artifact(issueId, n, "plan");
    if (plan !== undefined) return plan;
  }
  return undefined;
}

/** The issue fields every request is built from (exported for read models). */
export type { TrackedIssue };

/**
 * The code the plan reviewer reads: chosen for the issue and the plan — the spec stage's selection,
 * so the reviewer's request shares its cached prefix through the code block.
 */
function reviewerCode(code: CodeSource | undefined, ctx: RoleContext) {
  const texts = [issueText(ctx.issue), ...(ctx.artifacts.plan !== undefined ? [ctx.artifacts.plan] : [])];
  return code?.forTexts("plan_reviewer", texts);
}

/** The gaps an issue shipped with (its ShippedWithKnownGap events), one line each, for the planner of a replan; undefined when none. */
export function shippedGapsText(events: readonly DissentEvent[]): string | undefined {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const e of events) {
    if (e.type !== "ShippedWithKnownGap") continue;
    for (const c of e.concerns as Concern[]) {
      if (seen.has(c.fingerprint)) continue;
      seen.add(c.fingerprint);
      lines.push(`- [${c.id}] ${c.severity} (shipped in PR #${e.pr}): ${c.concern}${c.evidence ? ` — about: "${c.evidence}"` : ""}`);
    }
  }
  return lines.length ? lines.join("\n") : undefined;
}

/** The concern a trivial issue's empty plan raises: CRITICAL, for a person (a council's empty artifact raises the same). */
function emptyPlanConcern(issueId: string, why: string, idFor: (fp: string) => string, now: () => string): NewEvent {
  const text = `The producer of the plan wrote an artifact that says nothing (${why}): there was nothing to review or build on`;
  const fp = fingerprint({ concern: text });
  return {
    type: "ConcernForwarded",
    issue_id: issueId,
    reason: "exhausted",
    concern: {
      id: idFor(fp),
      phase: "plan",
      stage: "planner",
      raised_by: "council",
      severity: "CRITICAL",
      category: "producer_fault",
      concern: text,
      evidence: "",
      must_address_by: "review",
      human_required: true,
      fingerprint: fp,
      raised_at: now(),
    },
  };
}
