import { z } from "zod";
import {
  AdversarialRetryLoop,
  type Critic,
  type CostedProducer,
  type LoopResult,
  type RoundProgress,
  type RoundReport,
  type Verifier,
} from "../adversarial/retry-loop.js";
import { VERIFIER_ROLE } from "../adversarial/second-opinion.js";
import type { StageSpec } from "../adversarial/loop-state.js";
import type { Concern } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { ReplyFormatError } from "../errors.js";
import type { CallBudget } from "../models/types.js";
import { ContextLedger, type CodeSelection, type CodeSource } from "../pipeline/code-context.js";
import { concernBrief, criticRequest, issueText, parseFindings, parseVerdict, verifierRequest, withCode, type RoleContext } from "../pipeline/roles.js";
import { verdictOf } from "../pipeline/stage-runner.js";
import type { CallDoor } from "../models/call.js";
import type { Meter } from "../pipeline/meter.js";
import type { CostOf, CriticVoteReport } from "../pipeline/stage-runner.js";
import type { ArtifactName } from "../pipeline/stages.js";
import { REVIEW_CRITICS } from "./roles.js";
import {
  ACCEPTANCE_ROLE,
  AcceptanceReply,
  acceptanceFindings,
  parseAcceptance,
  settle,
  SettlementReply,
  unsettled,
  verdictsFor,
  type CriterionCheck,
  type Settlement,
} from "./acceptance.js";
import { diffCodec, type DiffArtifact } from "./artifact.js";
import { attemptChecks, CHECKS_ROLE, skipEmpty } from "./checks.js";
import { reviewWatch, type ReviewWords } from "./reviewed.js";

/** The review of an implementation as a stage of the loop (docs/implement.md): its unresolved concerns go to the pull request. */
export const REVIEW_STAGE: StageSpec = { stage: "implementation_review", phase: "implement", mustAddressBy: "pull_request" };

export { IMPLEMENT_ROLES, REVIEW_CRITICS } from "./roles.js";

/** The categories review critics write (each persona names its own). */
const CATEGORIES = [
  "logic",
  "error_handling",
  "regression",
  "incomplete",
  "test_gap",
  "weak_test",
  "test_removed",
  "test_failure",
  "secret",
  "injection",
  "auth",
  "exposure",
  "supply_chain",
];

/** What the review critics see beside the diff: the plan and the criteria. */
const INPUTS: readonly ArtifactName[] = ["plan", "acceptance_criteria"];

let acceptanceSchema: { name: string; jsonSchema: Record<string, unknown> } | undefined;
const acceptanceReply = () =>
  (acceptanceSchema ??= {
    name: "acceptance_verdicts",
    jsonSchema: z.toJSONSchema(AcceptanceReply, { io: "input", unrepresentable: "any" }) as Record<string, unknown>,
  });
let settlementSchema: { name: string; jsonSchema: Record<string, unknown> } | undefined;
/** The reply's schema when the request carries tracked concerns: criteria and concerns (docs/implement.md "Forwarded concerns"). */
const settlementReply = () =>
  (settlementSchema ??= {
    name: "acceptance_and_concern_verdicts",
    jsonSchema: z.toJSONSchema(SettlementReply, { io: "input", unrepresentable: "any" }) as Record<string, unknown>,
  });

const CRITERIA_TASK =
  'Task: for every acceptance criterion, in order, reply {"criteria": [{"criterion", "evidence", "verdict": "met" | "not_met" | "cannot_tell", "reason"}]}, evidence quoted from the change under review.';
/** The task when the plan forwarded concerns to implementation: each settled on the diff, by its id. */
const settlementTask = (criteria: boolean) =>
  `Task: ${criteria ? "for every acceptance criterion, in order, and " : ""}for every concern of tracked_concerns, by its id, reply {"criteria": [${criteria ? '{"criterion", "evidence", "verdict": "met" | "not_met" | "cannot_tell", "reason"}' : ""}], "concerns": [{"id", "evidence", "verdict": "addressed" | "not_addressed" | "cannot_tell", "reason"}]}, evidence quoted from the change under review. A concern is "addressed" only when a line of the diff answers it: quote that line.`;

/** What the review of one implement run needs from the driver. */
export interface ReviewDeps {
  issueId: string;
  /** The planning cycle being implemented: the stage's record and events carry it. */
  cycle: number;
  door: CallDoor;
  costOf: CostOf;
  append: (events: NewEvent[]) => Promise<unknown>;
  budget: CallBudget;
  meter: Meter;
  context: () => RoleContext;
  /** The code the review reads around the diff (docs/implement.md "What the review reads"); none: the diff alone. */
  code?: CodeSource;
  criteria: readonly string[];
  /**
   * Pending concerns due at implementation: critics see them as tracked, and review.acceptance
   * settles each on the diff (docs/implement.md "Forwarded concerns").
   */
  tracked: readonly Concern[];
  concernId: (fingerprint: string, phase: string, role: string) => string;
  /** Runs (or replays, on resume) round `n`'s attempt given the last round's blocking concerns and artifact. */
  attempt: (n: number, blocking: readonly Concern[], previous: DiffArtifact | undefined) => Promise<DiffArtifact>;
  now: () => string;
  warn?: (message: string) => void;
  onProgress?: (p: RoundProgress) => void;
  onVote?: (v: CriticVoteReport) => void;
  /** How a round no critic answered is named in its error (default: an attempt of `issue implement`). */
  words?: ReviewWords;
  /** The most rounds (default: the loop's four). `pr review` votes once: a person's pull request is not revised by dissent. */
  maxRounds?: number;
  /** Told of each tallied round with review.acceptance's verdicts (and settlements) on its attempt (the pull request's review and check: src/implement/pr-live.ts). */
  onRound?: (r: RoundReport<DiffArtifact>, verdicts: readonly CriterionCheck[], settled: readonly Settlement[]) => void;
}

/** The stage's result, the events to commit with it, and the acceptance verdicts on the final diff. */
export interface ReviewOutcome {
  result: LoopResult<DiffArtifact>;
  events: NewEvent[];
  verdicts: CriterionCheck[];
  /** What review.acceptance made of each tracked concern on the final diff, in the order of `tracked` (docs/implement.md "Forwarded concerns"). */
  settled: Settlement[];
}

/**
 * The adversarial review of an implementation (docs/implement.md): the agent is the producer (an
 * attempt per round), the council is the three review critics, `review.acceptance` and dissent's
 * own checks (failing tests, a timeout, an empty diff: CRITICAL), with second opinions on lone
 * HIGHs. Findings are grounded against the diff and the test output. The same AdversarialRetryLoop
 * as the plan's stages: at most 3 retries, oscillation, forwarding.
 */
export async function reviewImplementation(deps: ReviewDeps): Promise<ReviewOutcome> {
  const stage = REVIEW_STAGE;
  const renderDiffArtifact = diffCodec.render;
  const criticOrder = [...REVIEW_CRITICS, ACCEPTANCE_ROLE, CHECKS_ROLE];
  const slots = new Map<string, NewEvent[]>();
  const sinkFor = (slot: string) => (e: NewEvent) => void slots.set(slot, [...(slots.get(slot) ?? []), e]);
  // Critics answer in any order; their ModelCall events are appended in council order, then the verifier's by concern id.
  const flush = async () => {
    const order = [...criticOrder, ...[...slots.keys()].filter((k) => k.startsWith(`${VERIFIER_ROLE}#`)).sort()];
    const events = order.flatMap((slot) => slots.get(slot) ?? []);
    slots.clear();
    if (events.length) await deps.append(events);
  };
  // The door meters every call itself (docs/serve.md): the review only orders its events.
  const call: CallDoor = deps.door;
  const contextTexts = () => [issueText(deps.context().issue), ...Object.values(deps.context().artifacts).filter((t): t is string => typeof t === "string")];

  // The code around the diff: the definitions it changes and their callers, then what the plan names —
  // the same block for every critic of a round (and its second opinions) under one budget.
  const ledger = new ContextLedger();
  const codeFor = (role: string, a: DiffArtifact): CodeSelection | undefined => {
    const ctx = deps.context();
    return deps.code?.aroundDiff(role, a.diff, [ctx.artifacts.plan ?? "", ctx.artifacts.acceptance_criteria ?? ""]);
  };
  const context = (sel: CodeSelection | undefined): RoleContext => withCode(deps.context(), sel);

  // A round in which every model critic failed is no review: the run stops there (docs/implement.md#errors).
  const watch = reviewWatch(deps.issueId, deps.words);
  const producer: CostedProducer<DiffArtifact> = {
    calls: async () => 0, // the agent makes no model call of dissent's
    produce: async (input) => {
      await flush();
      if (input.previous) watch.assertReviewed(input.round - 1, input.previous.attempt);
      return { artifact: await deps.attempt(input.round, input.previous !== undefined ? input.blocking : [], input.previous) };
    },
  };

  const findingsCritic = (role: string): Critic<DiffArtifact> => {
    const build = (a: DiffArtifact, review: { round: number; previous?: readonly import("../contracts/concern.js").Finding[] }) => {
      const sel = codeFor(role, a);
      return {
        meta: { role, stage: stage.stage, round: review.round },
        request: criticRequest(
          role,
          context(sel),
          INPUTS,
          { name: "diff", text: renderDiffArtifact(a) },
          { ...(review.previous ? { previous: review.previous } : {}), tracked: deps.tracked, categories: CATEGORIES },
        ),
        sel,
      };
    };
    return {
      role,
      calls: async (a, review) => {
        const { meta, request } = build(a, review);
        return deps.costOf(meta, request);
      },
      review: async (a, review) => {
        const { meta, request, sel } = build(a, review);
        ledger.note(role, sel);
        const reply = await call(
          meta,
          request,
          (answer) => parseFindings(answer, [renderDiffArtifact(a), ...contextTexts(), ...(sel ? [sel.text] : [])]),
          sinkFor(role),
        );
        const parsed = reply.parsed;
        if (!parsed?.ok)
          throw new ReplyFormatError(
            `${role} reply is ${parsed?.reason === "unparseable" ? "not JSON" : "not a findings object"}: ${parsed?.error ?? "empty"}`,
          );
        deps.onVote?.({ stage: stage.stage, phase: stage.phase, round: review.round, role, findings: parsed.value.findings });
        return { findings: parsed.value.findings, invalid: parsed.invalid, ...(sel ? { code: sel.evidence } : {}) };
      },
    };
  };

  // review.acceptance answers per criterion; its verdicts become findings (not_met HIGH) and the PR's checklist.
  // Given tracked concerns, it also settles each on the diff: addressed (quoting it), not addressed, cannot tell.
  const verdictsByAttempt = new Map<number, CriterionCheck[]>();
  const settledByAttempt = new Map<number, Settlement[]>();
  const settles = deps.tracked.length > 0;
  const hasWork = deps.criteria.length > 0 || settles;
  const trackedJson = settles ? [JSON.stringify(deps.tracked.map(concernBrief))] : [];
  const acceptanceBuild = (a: DiffArtifact, round: number, sel = codeFor(ACCEPTANCE_ROLE, a)) => ({
    meta: { role: ACCEPTANCE_ROLE, stage: stage.stage, round },
    sel,
    request: criticRequest(
      ACCEPTANCE_ROLE,
      context(sel),
      INPUTS,
      { name: "diff", text: renderDiffArtifact(a) },
      settles
        ? { tracked: deps.tracked, reply: { schema: settlementReply(), task: settlementTask(deps.criteria.length > 0) } }
        : { reply: { schema: acceptanceReply(), task: CRITERIA_TASK } },
    ),
  });
  const acceptance: Critic<DiffArtifact> = {
    role: ACCEPTANCE_ROLE,
    calls: async (a, review) => {
      if (!hasWork) return 0;
      const { meta, request } = acceptanceBuild(a, review.round);
      return deps.costOf(meta, request);
    },
    review: async (a, review) => {
      if (!hasWork) return { findings: [] }; // nothing to check against
      const { meta, request, sel } = acceptanceBuild(a, review.round);
      ledger.note(ACCEPTANCE_ROLE, sel);
      const reply = await call(
        meta,
        request,
        // The tracked concerns are quoted from the request too: echoed back, they are no reply.
        (answer) => parseAcceptance(answer, [renderDiffArtifact(a), ...contextTexts(), ...trackedJson, ...(sel ? [sel.text] : [])]),
        sinkFor(ACCEPTANCE_ROLE),
      );
      const parsed = reply.parsed;
      if (!parsed?.ok) throw new ReplyFormatError(`${ACCEPTANCE_ROLE} reply is not a list of verdicts: ${parsed?.error ?? "empty"}`);
      const verdicts = verdictsFor(deps.criteria, parsed.value.criteria);
      verdictsByAttempt.set(a.attempt, verdicts);
      if (settles) settledByAttempt.set(a.attempt, settle(deps.tracked, parsed.value.concerns ?? [], a.diff));
      const findings = acceptanceFindings(verdicts);
      deps.onVote?.({ stage: stage.stage, phase: stage.phase, round: review.round, role: ACCEPTANCE_ROLE, findings });
      return { findings, invalid: parsed.invalid };
    },
  };
  const checks: Critic<DiffArtifact> = { role: CHECKS_ROLE, calls: async () => 0, review: async (a) => ({ findings: attemptChecks(a) }) };

  // The second opinion reads the code the critic that raised the finding read.
  const verifierBuild = (a: DiffArtifact, concern: Concern, round: number) => {
    const sel = codeFor(concern.raised_by, a);
    return {
      meta: { role: VERIFIER_ROLE, stage: stage.stage, round },
      request: verifierRequest(VERIFIER_ROLE, context(sel), INPUTS, { name: "diff", text: renderDiffArtifact(a) }, concern),
      sel,
    };
  };
  const verifier: Verifier<DiffArtifact> = {
    role: VERIFIER_ROLE,
    calls: async (a, concern, round) => {
      const { meta, request } = verifierBuild(a, concern, round);
      return deps.costOf(meta, request);
    },
    check: async (a, concern, round) => {
      const { meta, request, sel } = verifierBuild(a, concern, round);
      ledger.note(VERIFIER_ROLE, sel);
      const finding = JSON.stringify({ concern: concern.concern, evidence: concern.evidence });
      const reply = await call(
        meta,
        request,
        (answer) => parseVerdict(answer, [renderDiffArtifact(a), finding, ...contextTexts(), ...(sel ? [sel.text] : [])]),
        sinkFor(`${VERIFIER_ROLE}#${concern.id}`),
      );
      const parsed = reply.parsed;
      if (!parsed?.ok) throw new ReplyFormatError(`${VERIFIER_ROLE} reply is not a verdict: ${parsed?.error ?? "empty"}`);
      return verdictOf(parsed.value, sel);
    },
  };

  const buffered: NewEvent[] = [];
  const started: Promise<unknown>[] = [];
  const mark = deps.meter.now();
  const models = [...REVIEW_CRITICS.map(findingsCritic), acceptance].map((c) => skipEmpty(c === acceptance && !hasWork ? c : watch.watch(c)));
  const loop = new AdversarialRetryLoop<DiffArtifact>(producer, [...models, checks], verifier);
  let result: LoopResult<DiffArtifact>;
  try {
    result = await loop.run(stage, {
      issueId: deps.issueId,
      cycle: deps.cycle,
      emit: (e) => {
        if (e.type !== "AdversarialStageStarted") return void buffered.push(e);
        const p = deps.append([e]);
        p.catch(() => undefined); // awaited below; a failure must not surface first as an unhandled rejection
        started.push(p);
      },
      budget: deps.budget,
      reserve: 0,
      usage: () => deps.meter.since(mark),
      concernId: deps.concernId,
      ...(deps.maxRounds ? { maxRounds: deps.maxRounds } : {}),
      textOf: renderDiffArtifact,
      now: deps.now,
      ...(deps.warn ? { warn: deps.warn } : {}),
      ...(deps.onProgress ? { onProgress: deps.onProgress } : {}),
      ...(deps.onRound
        ? {
            onRound: (r: RoundReport<DiffArtifact>) =>
              deps.onRound?.(r, verdictsByAttempt.get(r.artifact.attempt) ?? [], settledByAttempt.get(r.artifact.attempt) ?? []),
          }
        : {}),
    });
  } finally {
    await Promise.all(started);
    await flush();
  }
  ledger.record(result.stageRun, buffered);
  const last = result.artifact;
  if (last) watch.assertReviewed(result.stageRun.rounds, last.attempt);
  // Settled on the final attempt's verdicts; none (its acceptance call failed, or no model read it): every concern cannot_tell.
  const settled = !settles
    ? []
    : ((last && settledByAttempt.get(last.attempt)) ?? unsettled(deps.tracked, `${ACCEPTANCE_ROLE} gave no verdict on the final attempt.`));
  return { result, events: buffered, verdicts: last ? (verdictsByAttempt.get(last.attempt) ?? []) : [], settled };
}
