import { callBudget } from "../adversarial/budget.js";
import type { RoundProgress } from "../adversarial/retry-loop.js";
import type { ImplementConfig } from "../contracts/config.js";
import { toStageRun, type Concern, type StageRun } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { AgentEscaped, BudgetExceeded, DissentError, isFatal, UsageError } from "../errors.js";
import type { CallRecord } from "../contracts/audit.js";
import { doorOf, networkCalls, type CallDoor } from "../models/call.js";
import type { CallContext } from "../models/types.js";
import { checkCeilings, lifetimeUsage } from "../pipeline/ceilings.js";
import { criteriaCodec } from "../pipeline/artifact-codecs.js";
import { PlanningCycle } from "../pipeline/cycle.js";
import { LabelSession } from "../pipeline/label-session.js";
import { holdLease, processHolder } from "../pipeline/lease.js";
import { carryEvents } from "../pipeline/resolutions.js";
import { renderCriteria, type RoleContext } from "../pipeline/roles.js";
import { Meter } from "../pipeline/meter.js";
import type { CostOf, CriticVoteReport } from "../pipeline/stage-runner.js";
import type { LeaseHolder, Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import type { CriterionCheck } from "./acceptance.js";
import type { DiffArtifact } from "./artifact.js";
import { runAttempt } from "./attempt.js";
import { readLedger, type AttemptEvent } from "./ledger.js";
import { renderPrBody } from "./pr-body.js";
import { REVIEW_STAGE, reviewImplementation } from "./review-stage.js";
import { REVIEW_CRITICS } from "./roles.js";
import { renderTask } from "./task.js";
import { diffOf, ensureWorktree, pushBranch, repoRoot, type Worktree } from "./worktree.js";

/** Live progress of `issue implement`. */
export type ImplementProgress =
  | { kind: "worktree"; path: string; branch: string; resumed: boolean }
  | { kind: "attempt"; attempt: number; replayed: boolean }
  | { kind: "attempt-done"; attempt: AttemptEvent }
  | { kind: "review"; progress: RoundProgress }
  | { kind: "publishing" };

/** What `implementIssue` needs: the ports, the call door's configuration, the settings and dissent's environment. */
export interface ImplementDeps {
  store: Store;
  tracker: Tracker;
  calls: CallContext;
  settings: ImplementConfig;
  /** The store's home: worktrees and task files live under it. */
  home: string;
  /** dissent's environment: the agent sees only PATH, HOME, LANG and `implement.env` of it. */
  env: Record<string, string | undefined>;
  redact: (text: string) => string;
  maxCalls: number;
  maxUsd?: number | null;
  project?: () => Promise<string | undefined>;
  warn?: (message: string) => void;
  now?: () => string;
  holder?: LeaseHolder;
  lease?: { ttlMs?: number; renewMs?: number };
  onProgress?: (p: ImplementProgress) => void;
  onVote?: (v: CriticVoteReport) => void;
}

/** One attempt as `issue implement --json` reports it. */
export interface AttemptSummary {
  attempt: number;
  outcome: AttemptEvent["outcome"];
  commit: string | null;
  agent_exit_code: number | null;
  agent_ms: number;
  files: number;
  insertions: number;
  deletions: number;
  test_exit_code: number | null;
}

/** `dissent issue implement --json` (docs/implement.md). */
export interface ImplementResult {
  issue: string;
  run: number;
  /** `review`: the pull request (or recorded review) is out; `hitl`: a CRITICAL is left, a person decides. */
  status: "review" | "hitl";
  branch: string;
  worktree: string;
  attempts: AttemptSummary[];
  stage: StageRun;
  acceptance: CriterionCheck[];
  pending_concerns: Concern[];
  pull_request: { where: "github" | "store"; number: number | null; url: string | null; draft: boolean; updated: boolean };
  labels: string[];
  /** Network model calls this invocation made. */
  calls: number;
}

const summary = (e: AttemptEvent): AttemptSummary => ({
  attempt: e.attempt,
  outcome: e.outcome,
  commit: e.commit,
  agent_exit_code: e.agent.exit_code,
  agent_ms: e.agent.duration_ms,
  files: e.diff.files,
  insertions: e.diff.insertions,
  deletions: e.diff.deletions,
  test_exit_code: e.test?.exit_code ?? null,
});

/** The ceilings of an issue's implement life (docs/implement.md): attempts and agent wall time. */
function checkAgentCeilings(issueId: string, s: ImplementConfig, attempts: number, agentMs: number): void {
  if (attempts >= s.maxAttemptsPerIssue) {
    throw new BudgetExceeded(
      `issue ${issueId} has had ${attempts} agent attempts, the most implement.max_attempts_per_issue (${s.maxAttemptsPerIssue}) allows; raise it to implement the issue again`,
      s.maxAttemptsPerIssue,
      attempts,
      "calls",
      "implement.max_attempts_per_issue",
    );
  }
  if (agentMs >= s.maxAgentMsPerIssue) {
    throw new BudgetExceeded(
      `issue ${issueId}'s agent has run ${Math.round(agentMs / 1000)} s, the most implement.max_agent_ms_per_issue (${Math.round(s.maxAgentMsPerIssue / 1000)} s) allows; raise it to implement the issue again`,
      s.maxAgentMsPerIssue,
      agentMs,
      "calls",
      "implement.max_agent_ms_per_issue",
    );
  }
}

/** An attempt as recorded, read back into the artifact under review (the diff from git, the rest from the event). */
async function replay(w: Worktree, e: AttemptEvent, testCommand: string | null): Promise<DiffArtifact> {
  const diff = e.commit ? await diffOf(w.path, e.base_sha, e.commit) : { text: "", truncated: false, stats: e.diff };
  return {
    attempt: e.attempt,
    outcome: e.outcome,
    commit: e.commit,
    diff: diff.text,
    truncated: diff.truncated,
    stats: e.diff,
    agent: e.agent,
    testCommand,
    test: e.test,
    ...(e.escaped ? { escaped: e.escaped } : {}),
  };
}

/**
 * `dissent issue implement` (docs/implement.md): for an issue whose plan is ready, a worktree on
 * `dissent/issue-<ID>`, then the implementation review — the coding agent as the loop's producer
 * (an attempt per round: agent, commit, tests), the review council on the diff — and the review's
 * outcome as a pull request (GitHub, `open_pr`) or recorded in the store. One process per issue (the
 * lease); a run killed mid-attempt resumes at that attempt, every review already received from the cache.
 */
export async function implementIssue(issueId: string, deps: ImplementDeps): Promise<ImplementResult> {
  const now = deps.now ?? (() => new Date().toISOString());
  const { store, settings } = deps;
  const issue = await deps.tracker.get(issueId);
  const id = issue.id;
  const row = await store.plan(id);
  if (row?.status !== "ready") {
    throw new UsageError(
      row?.status === "fixed" || issue.labels.includes("dissent-fixed")
        ? `issue ${id} is already merged (dissent-fixed)`
        : `issue ${id} has no ready plan (its plan is ${row?.status ?? "not made"}); run dissent issue plan ${id} first`,
    );
  }
  const repo = await repoRoot(settings.repo);
  const project = await deps.project?.();
  const lease = await holdLease(store, id, deps.holder ?? processHolder(), deps.lease);
  const signal = deps.calls.signal ? AbortSignal.any([deps.calls.signal, lease.lost]) : lease.lost;
  const labels = new LabelSession(deps.tracker, id, issue.labels, (e) => store.append([e]));
  const ledger = await readLedger(store, id);
  const run = ledger.run;
  try {
    const spent = await lifetimeUsage(store, id);
    checkCeilings(id, undefined, spent, { maxCalls: deps.maxCalls, maxUsd: deps.maxUsd ?? null, maxCycles: null });
    if (!ledger.resuming) checkAgentCeilings(id, settings, ledger.attemptsEver, ledger.agentMsEver);
    const cycle = await PlanningCycle.current(store, id);
    if (!cycle) throw new UsageError(`issue ${id} has no plan; run dissent issue plan ${id} first`);
    const budget = callBudget(deps.maxCalls, spent.calls, deps.maxUsd ? { max: deps.maxUsd, spent: spent.usd } : undefined);
    const meter = new Meter();
    // Every call of the review is metered where it is made, in the door (failed ones too).
    const callCtx = { ...deps.calls, issueId: id, budget, signal, meter: (r: CallRecord) => meter.record(r) };
    const door: CallDoor = doorOf({ ...callCtx, emit: (e) => store.append([e]).then(() => undefined) });
    const costOf: CostOf = (meta, request) => networkCalls(meta, request, callCtx);

    await labels.moveTo("dissent-implementing");
    const worktree = await ensureWorktree(repo, settings.baseBranch, deps.home, id);
    deps.onProgress?.({ kind: "worktree", path: worktree.path, branch: worktree.branch, resumed: ledger.resuming });

    const plan = (await store.artifact(id, cycle.number, "plan")) ?? "";
    const criteriaText = await store.artifact(id, cycle.number, "acceptance_criteria");
    const criteria: string[] = criteriaText ? criteriaCodec.decode(criteriaText) : [];
    const context = (): RoleContext => ({
      issue,
      artifacts: { plan, ...(criteria.length ? { acceptance_criteria: renderCriteria(criteria) } : {}) },
      ...(project ? { project } : {}),
    });
    const byId = (a: Concern, b: Concern) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const tracked = (await store.state(id)).pending_concerns.filter((c) => c.must_address_by === "implement").sort(byId);

    const attempts = new Map(ledger.recorded);
    let agentMs = ledger.agentMsEver;
    let attemptsEver = ledger.attemptsEver;
    let refused: BudgetExceeded | undefined;
    const attempt = async (n: number, blocking: readonly Concern[], previous: DiffArtifact | undefined): Promise<DiffArtifact> => {
      const known = attempts.get(n);
      deps.onProgress?.({ kind: "attempt", attempt: n, replayed: known !== undefined });
      if (known) return replay(worktree, known, settings.testCommand);
      try {
        checkAgentCeilings(id, settings, attemptsEver, agentMs);
        // The review of this attempt needs its critics' calls: an attempt whose review the budget cannot pay is not started.
        if (budget.remaining() < REVIEW_CRITICS.length + 1) {
          throw new BudgetExceeded(
            `no call budget left to review another attempt of issue ${id}: raise budget.max_calls_per_issue (${budget.max})`,
            budget.max,
            budget.used(),
            "calls",
            "budget.max_calls_per_issue",
          );
        }
      } catch (e) {
        if (BudgetExceeded.isInstance(e)) refused = e;
        throw e;
      }
      await store.append([{ type: "ImplementAttemptStarted", issue_id: id, run, attempt: n, branch: worktree.branch }]);
      const task = renderTask({
        issue,
        ...(project ? { project } : {}),
        plan,
        criteria,
        concerns: tracked,
        branch: worktree.branch,
        testCommand: settings.testCommand,
        attempt: n,
        ...(previous && blocking.length
          ? { retry: { blocking, ...(previous.test && previous.test.exit_code !== 0 ? { failedTests: previous.test.output_tail } : {}) } }
          : {}),
      });
      const done = await runAttempt(
        { issueId: id, worktree, config: settings, env: deps.env, home: deps.home, redact: deps.redact, signal },
        n,
        deps.redact(task),
      );
      const a = done.artifact;
      const event: AttemptEvent = {
        type: "ImplementAttempt",
        at: now(),
        issue_id: id,
        run,
        attempt: n,
        branch: worktree.branch,
        base_sha: worktree.baseSha,
        commit: a.commit,
        outcome: a.outcome,
        agent: a.agent,
        diff: a.stats,
        test: a.test,
        ...(done.escaped.length ? { escaped: done.escaped } : {}),
      };
      const { at: _at, ...recorded } = event;
      await store.append([recorded]);
      attempts.set(n, event);
      attemptsEver++;
      agentMs += a.agent.duration_ms;
      deps.onProgress?.({ kind: "attempt-done", attempt: event });
      if (done.escaped.length) {
        throw new AgentEscaped(
          `the coding agent wrote outside its worktree in attempt ${n} of issue ${id} (${done.escaped.slice(0, 3).join(", ")}${done.escaped.length > 3 ? ", …" : ""}); nothing was committed or pushed — check those paths (docs/implement.md safety)`,
          done.escaped,
        );
      }
      return a;
    };

    const review = await reviewImplementation({
      issueId: id,
      cycle: cycle.number,
      door,
      costOf,
      append: (events) => store.append(events),
      budget,
      meter,
      context,
      criteria,
      tracked,
      concernId: (fp, phase, role) => cycle.concernId(tracked, fp, phase, role),
      attempt,
      now,
      ...(deps.warn ? { warn: deps.warn } : {}),
      onProgress: (progress) => deps.onProgress?.({ kind: "review", progress }),
      ...(deps.onVote ? { onVote: deps.onVote } : {}),
    });
    const { result } = review;
    if (result.artifact === undefined) {
      await labels.moveTo("dissent-ready"); // nothing was tried: the issue is as ready as before
      if (refused) throw refused;
      throw new BudgetExceeded(
        `no attempt could be made for issue ${id}: its call budget of ${budget.max} model calls cannot pay for a review (${budget.used()} used); raise budget.max_calls_per_issue`,
        budget.max,
        budget.used(),
        "calls",
        "budget.max_calls_per_issue",
      );
    }
    // Concerns due at implementation that the review did not settle go on to the pull request, with the review's own.
    await cycle.commitEvents([...review.events, ...carryEvents(id, tracked, [], REVIEW_STAGE.mustAddressBy, "carried")]);

    deps.onProgress?.({ kind: "publishing" });
    const state = await store.state(id);
    const pending = [...state.pending_concerns].sort(byId);
    const critical = pending.some((c) => c.severity === "CRITICAL");
    const stageRun = toStageRun(result.stageRun);
    const body = renderPrBody({
      issueId: id,
      plan,
      criteria,
      verdicts: review.verdicts,
      last: result.artifact,
      attempts: attempts.size,
      stage: stageRun,
      pending,
    });
    await store.transaction((tx) => tx.putArtifact(id, cycle.number, "pull_request", body));
    const github = settings.openPr && deps.tracker.openPullRequest !== undefined;
    let pr: ImplementResult["pull_request"] = { where: "store", number: null, url: null, draft: critical, updated: ledger.lastPr !== undefined };
    if (github && deps.tracker.openPullRequest) {
      await pushBranch(worktree.path, settings.remote, worktree.branch);
      const opened = await deps.tracker.openPullRequest({
        issueId: id,
        head: worktree.branch,
        base: settings.baseBranch,
        title: issue.title,
        body,
        draft: critical,
      });
      pr = { where: "github", number: opened.number, url: opened.url, draft: critical, updated: opened.updated };
    }
    await store.append([
      {
        type: "PullRequestOpened",
        issue_id: id,
        run,
        where: pr.where,
        branch: worktree.branch,
        number: pr.number,
        url: pr.url,
        draft: pr.draft,
        updated: pr.updated,
        body_chars: body.length,
      },
    ]);
    const status = critical ? "hitl" : "review";
    await labels.moveTo(critical ? "dissent-hitl" : "dissent-review");
    return {
      issue: id,
      run,
      status,
      branch: worktree.branch,
      worktree: worktree.path,
      attempts: [...attempts.values()].sort((a, b) => a.attempt - b.attempt).map(summary),
      stage: stageRun,
      acceptance: review.verdicts,
      pending_concerns: pending,
      pull_request: pr,
      labels: labels.labels,
      calls: meter.now().calls,
    };
  } catch (e) {
    if (AgentEscaped.isInstance(e)) {
      // The run is over: a person looks at what the agent touched before anything goes on.
      const escaped: NewEvent = { type: "ImplementFailed", issue_id: id, run, cycle: row.cycle, attempt: 1, error: e.message, retry_at: null, final: true };
      await store.append([escaped]);
      await labels.moveTo("dissent-hitl").catch((err: unknown) => deps.warn?.(`could not label issue ${id} dissent-hitl: ${String(err)}`));
    }
    // A lost lease aborts the agent and the calls with its own error: report that, not an interruption.
    if (lease.lost.aborted && DissentError.isInstance(lease.lost.reason) && !isFatal(e)) throw lease.lost.reason;
    throw e;
  } finally {
    await lease.release().catch(() => undefined);
  }
}
