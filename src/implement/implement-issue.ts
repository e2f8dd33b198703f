import type { RoundProgress, RoundReport } from "../adversarial/retry-loop.js";
import type { ImplementConfig, ReviewSettings } from "../contracts/config.js";
import { isClaim, toStageRun, type Concern, type StageRun } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { AgentEscaped, BudgetExceeded, UsageError } from "../errors.js";
import { criteriaCodec } from "../pipeline/artifact-codecs.js";
import { PlanningCycle } from "../pipeline/cycle.js";
import { runIssue, type LabelSession, type RunDeps } from "../pipeline/issue-run.js";
import { carryEvents } from "../pipeline/resolutions.js";
import { renderCriteria, type RoleContext } from "../pipeline/roles.js";
import type { Store } from "../store/port.js";
import { ACCEPTANCE_ROLE, settlementEvents, type CriterionCheck, type Settlement } from "./acceptance.js";
import type { DiffArtifact } from "./artifact.js";
import { reviewedDiff, runAttempt } from "./attempt.js";
import { readLedger, type AttemptEvent, type ImplementLedger } from "./ledger.js";
import { renderPrBody } from "./pr-body.js";
import { LivePullRequest } from "./pr-live.js";
import { isGithubTracker } from "../trackers/github.js";
import { attemptStory } from "./story.js";
import { REVIEW_STAGE, reviewImplementation } from "./review-stage.js";
import { REVIEW_CRITICS } from "./roles.js";
import { renderTask } from "./task.js";
import { historyOf, isAncestor, openClone, publishToCheckout, pushBranch, refOf, repoRoot, squashOnto, type AgentClone } from "./clone.js";
import { stopLeftovers, type ProcessRecord } from "./orphans.js";
import { openSandbox } from "./sandbox.js";
import { countSecrets } from "../redact.js";

/** Live progress of `issue implement`. */
export type ImplementProgress =
  | { kind: "worktree"; path: string; branch: string; resumed: boolean }
  | { kind: "attempt"; attempt: number; replayed: boolean }
  | { kind: "attempt-done"; attempt: AttemptEvent }
  | { kind: "review"; progress: RoundProgress }
  | { kind: "publishing" };

/** What `implementIssue` needs: the kernel's (RunDeps: ports, call door, ceilings, project, code, lease), the settings and dissent's environment. */
export interface ImplementDeps extends RunDeps {
  settings: ImplementConfig;
  /** The store's home: worktrees and task files live under it. */
  home: string;
  /** dissent's environment: the agent sees only PATH, HOME, LANG and `implement.env` of it. */
  env: Record<string, string | undefined>;
  redact: (text: string) => string;
  /** The values dissent holds as secrets (Config.secrets): redacted from every diff, and a diff holding one is flagged. */
  secrets?: readonly string[];
  onProgress?: (p: ImplementProgress) => void;
  /** On GitHub with `open_pr`: the review settings and the dashboard's address (docs/adr/037); defaults when unset. */
  pullRequest?: { review: ReviewSettings; dashboardUrl: string | null };
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
  /** Values dissent holds as secrets the attempt's diff held (redacted). */
  secrets: number;
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
  /** What the review made of each concern the plan forwarded (docs/implement.md "Forwarded concerns"). */
  forwarded_concerns: ForwardedSummary[];
  pending_concerns: Concern[];
  pull_request: { where: "github" | "store"; number: number | null; url: string | null; draft: boolean; updated: boolean };
  labels: string[];
  /** Network model calls this invocation made. */
  calls: number;
}

/** One forwarded concern as `issue implement --json` reports it: `addressed` ones are settled, the rest go on unresolved. */
export interface ForwardedSummary {
  id: string;
  severity: Concern["severity"];
  concern: string;
  verdict: Settlement["verdict"];
  evidence?: string;
  reason?: string;
  file?: string;
  /** It was said `addressed` with a quote that is not in the diff: counted as `cannot_tell`. */
  ungrounded?: true;
}

const forwardedSummary = (s: Settlement): ForwardedSummary => ({
  id: s.concern.id,
  severity: s.concern.severity,
  concern: s.concern.concern,
  verdict: s.verdict,
  ...(s.evidence ? { evidence: s.evidence } : {}),
  ...(s.reason ? { reason: s.reason } : {}),
  ...(s.file ? { file: s.file } : {}),
  ...(s.ungrounded ? { ungrounded: true as const } : {}),
});

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
  secrets: e.secrets ?? 0,
});

/** The ceilings of an issue's implement life (docs/implement.md): attempts and agent wall time. */
function checkAgentCeilings(issueId: string, s: ImplementConfig, attempts: number, agentMs: number): void {
  if (attempts >= s.maxAttemptsPerIssue) {
    throw new BudgetExceeded(
      `issue ${issueId} has had ${attempts} agent attempts, the most implement.max_attempts_per_issue (${s.maxAttemptsPerIssue}) allows; raise it to implement the issue again`,
      { max: s.maxAttemptsPerIssue, used: attempts, unit: "attempts", setting: "implement.max_attempts_per_issue" },
    );
  }
  if (agentMs >= s.maxAgentMsPerIssue) {
    throw new BudgetExceeded(
      `issue ${issueId}'s agent has run ${Math.round(agentMs / 1000)} s, the most implement.max_agent_ms_per_issue (${Math.round(s.maxAgentMsPerIssue / 1000)} s) allows; raise it to implement the issue again`,
      { max: s.maxAgentMsPerIssue, used: agentMs, unit: "ms", setting: "implement.max_agent_ms_per_issue" },
    );
  }
}

/** An attempt as recorded, read back into the artifact under review (the diff from git, the rest from the event). */
async function replay(
  c: AgentClone,
  e: AttemptEvent,
  testCommand: string | null,
  redact: (t: string) => string,
  secrets: readonly string[],
): Promise<DiffArtifact> {
  const diff = e.commit ? await reviewedDiff(c, e.base_sha, e.commit, redact, secrets) : { text: "", truncated: false, stats: e.diff, secrets: 0 };
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
    ...(diff.secrets ? { secrets: diff.secrets } : {}),
  };
}

/**
 * What leaves with the branch (docs/implement.md#safety): the reviewed commit — unless its diff holds
 * a secret dissent keeps (then nothing is pushed: `withheld`), or an earlier commit since the last
 * publication held one, or the history is too long to check (then one commit with the reviewed files
 * on top of the last published commit, or the base, goes instead: `squashed`).
 */
async function outgoing(
  c: AgentClone,
  last: DiffArtifact,
  secrets: readonly string[],
  issueId: string,
): Promise<{ commit: string; guard?: "withheld" | "squashed" }> {
  const reviewed = last.commit ?? (await refOf(c, `refs/heads/${c.branch}`)) ?? c.baseSha;
  if (last.secrets) return { commit: reviewed, guard: "withheld" };
  if (!secrets.length) return { commit: reviewed };
  const published = await refOf(c, "refs/dissent/published");
  const from = published && (await isAncestor(c, published, reviewed)) ? published : c.baseSha;
  if (from === reviewed) return { commit: reviewed };
  const history = await historyOf(c, from, reviewed);
  if (!history.truncated && countSecrets(history.text, secrets) === 0) return { commit: reviewed };
  const why = history.truncated ? "its history is too long to check for secrets" : "an earlier commit held a secret dissent keeps";
  return { commit: await squashOnto(c, from, reviewed, `dissent: issue #${issueId}, reviewed (one commit: ${why})`), guard: "squashed" };
}

/**
 * The concerns the review settles (docs/implement.md "Forwarded concerns"), by id: those the plan
 * forwarded to implementation; those an earlier run carried to the pull request unsettled; and those
 * an earlier run's review settled — so a later run (or one resumed after its review was committed)
 * asks the same of the same concerns, and a fix its diff no longer holds is unsettled again.
 */
export async function forwardedConcerns(store: Store, issueId: string): Promise<Concern[]> {
  const state = await store.state(issueId);
  const fromPlan = (c: Concern) => c.must_address_by === "implement" || (c.must_address_by === "pull_request" && c.phase !== "implement");
  const pending = new Set(state.pending_concerns.map((c) => c.id));
  const settledBefore = new Set(
    state.addressed_concerns.filter((r) => r.resolved_by === ACCEPTANCE_ROLE && !isClaim(r) && !pending.has(r.concern_id)).map((r) => r.concern_id),
  );
  const out = state.pending_concerns.filter(fromPlan);
  if (settledBefore.size) {
    // As they were last forwarded: the settlement changes nothing of a concern but whether it is pending.
    const last = new Map<string, Concern>();
    for (const e of await store.events({ issueId, types: ["ConcernForwarded"] })) if (e.type === "ConcernForwarded") last.set(e.concern.id, e.concern);
    for (const id of settledBefore) {
      const c = last.get(id);
      if (c && fromPlan(c)) out.push(c);
    }
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Before anything runs again (docs/implement.md#resuming): the process groups of attempts that never
 * ended — their dissent was killed — are stopped, if they are still alive in this pid space.
 */
async function stopInterrupted(store: Store, issueId: string, warn?: (m: string) => void): Promise<void> {
  const events = await store.events({ issueId, types: ["ImplementProcessStarted", "ImplementAttempt"] });
  const ended = new Set(events.filter((e) => e.type === "ImplementAttempt").map((e) => `${e.run}/${e.attempt}`));
  const records = events.filter(
    (e): e is Extract<typeof e, { type: "ImplementProcessStarted" }> => e.type === "ImplementProcessStarted" && !ended.has(`${e.run}/${e.attempt}`),
  );
  if (!records.length) return;
  const { elsewhere } = await stopLeftovers(records.map(({ pgid, space, started, mark }) => ({ pgid, space, started, mark })));
  if (elsewhere) {
    warn?.(
      `issue ${issueId}: an interrupted attempt's ${records.length === 1 ? "command was" : "commands were"} started by a dissent on another machine or container: if still running there, it is not stopped from here (under bubblewrap it died with that dissent)`,
    );
  }
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
  const repo = await repoRoot(settings.repo, deps.calls.signal);
  const secrets = deps.secrets ?? [];
  // bubblewrap, or none (with a warning for auto): decided before anything is taken or labelled.
  const sandbox = openSandbox(settings.sandbox, (m) => deps.warn?.(m), deps.env);
  const project = await deps.project?.();
  const code = await deps.code?.();
  let live: LivePullRequest | undefined;
  // The lease, the ceilings, the budget, the meter and the one door: the issue-run kernel's; the agent's ceilings and an escape are implement's.
  const kernel = {
    store,
    subject: id,
    calls: deps.calls,
    ceilings: { maxCalls: deps.maxCalls, maxUsd: deps.maxUsd ?? null },
    busy: `issue ${id} is being implemented`,
    labels: { tracker: deps.tracker, current: issue.labels },
    ...(deps.holder ? { holder: deps.holder } : {}),
    ...(deps.lease ? { lease: deps.lease } : {}),
    ...(deps.warn ? { warn: deps.warn } : {}),
    first: async () => {
      const ledger = await readLedger(store, id);
      await stopInterrupted(store, id, deps.warn);
      return ledger;
    },
    ceiling: (ledger: ImplementLedger) => {
      if (!ledger.resuming) checkAgentCeilings(id, settings, ledger.attemptsEver, ledger.agentMsEver);
    },
    onError: async (e: unknown, { first: ledger, labels }: { first: ImplementLedger | undefined; labels?: LabelSession }) => {
      await live?.failed(e);
      if (!AgentEscaped.isInstance(e) || !ledger || !labels) return;
      // The run is over: a person looks at what the agent touched before anything goes on.
      const escaped: NewEvent = {
        type: "ImplementFailed",
        issue_id: id,
        run: ledger.run,
        cycle: row.cycle,
        attempt: e.attempt,
        error: e.message,
        retry_at: null,
        final: true,
      };
      await store.append([escaped]);
      await labels.moveTo("dissent-hitl").catch((err: unknown) => deps.warn?.(`could not label issue ${id} dissent-hitl: ${String(err)}`));
    },
  };
  return runIssue(kernel, async ({ budget, meter, door, costOf, signal, labels }, ledger) => {
    const run = ledger.run;
    const cycle = await PlanningCycle.current(store, id);
    if (!cycle) throw new UsageError(`issue ${id} has no plan; run dissent issue plan ${id} first`);

    await labels.moveTo("dissent-implementing");
    const worktree = await openClone(repo, settings.baseBranch, deps.home, id, signal);
    deps.onProgress?.({ kind: "worktree", path: worktree.path, branch: worktree.branch, resumed: ledger.resuming });

    const plan = (await store.artifact(id, cycle.number, "plan")) ?? "";
    const criteriaText = await store.artifact(id, cycle.number, "acceptance_criteria");
    const criteria: string[] = criteriaText ? criteriaCodec.decode(criteriaText) : [];
    const context = (): RoleContext => ({
      issue,
      artifacts: { plan, ...(criteria.length ? { acceptance_criteria: renderCriteria(criteria) } : {}) },
      ...(project ? { project } : {}),
    });
    // On GitHub: each attempt pushed and checked as it is made, each round's review on the pull request (docs/adr/037).
    live =
      settings.openPr && isGithubTracker(deps.tracker) && typeof deps.tracker.pullRequests === "function"
        ? await LivePullRequest.open({
            port: deps.tracker.pullRequests(),
            issueId: id,
            clone: worktree,
            repo,
            remote: settings.remote,
            secrets,
            review: deps.pullRequest?.review ?? { inlineMinSeverity: "MEDIUM", event: "COMMENT" },
            dashboardUrl: deps.pullRequest?.dashboardUrl ?? null,
            criteria,
            ...(deps.warn ? { warn: deps.warn } : {}),
          })
        : undefined;
    const byId = (a: Concern, b: Concern) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const tracked = await forwardedConcerns(store, id);
    const wasPending = new Set((await store.state(id)).pending_concerns.map((c) => c.id));

    const attempts = new Map(ledger.recorded);
    let agentMs = ledger.agentMsEver;
    let attemptsEver = ledger.attemptsEver;
    let refused: BudgetExceeded | undefined;
    const attempt = async (n: number, blocking: readonly Concern[], previous: DiffArtifact | undefined): Promise<DiffArtifact> => {
      const known = attempts.get(n);
      deps.onProgress?.({ kind: "attempt", attempt: n, replayed: known !== undefined });
      if (known) {
        const replayed = await replay(worktree, known, settings.testCommand, deps.redact, secrets);
        void live?.attempt(replayed); // queued: pushed and checked while the review reads it (settled below)
        return replayed;
      }
      try {
        checkAgentCeilings(id, settings, attemptsEver, agentMs);
        // The review of this attempt needs its critics' calls: an attempt whose review the budget cannot pay is not started.
        if (budget.remaining() < REVIEW_CRITICS.length + 1) {
          throw new BudgetExceeded(`no call budget left to review another attempt of issue ${id}: raise budget.max_calls_per_issue (${budget.max})`, {
            max: budget.max,
            used: budget.used(),
            unit: "calls",
            setting: "budget.max_calls_per_issue",
          });
        }
      } catch (e) {
        if (BudgetExceeded.isInstance(e)) refused = e;
        throw e;
      }
      await live?.drained(); // the last attempt's push and check are out before this one touches the clone
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
      const started = async (command: "agent" | "test", r: ProcessRecord) => {
        await store.append([{ type: "ImplementProcessStarted", issue_id: id, run, attempt: n, command, sandbox: sandbox.kind, ...r }]);
      };
      const done = await runAttempt(
        { issueId: id, clone: worktree, config: settings, env: deps.env, home: deps.home, sandbox, redact: deps.redact, secrets, started, signal },
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
        ...(a.secrets ? { secrets: a.secrets } : {}),
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
          { paths: done.escaped, attempt: n },
        );
      }
      // Queued, not awaited: the push and the check's start run while the review's critics read the diff;
      // the round's review waits for them in the same queue, and settle() below surfaces an interruption.
      void live?.attempt(a);
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
      ...(code ? { code } : {}),
      criteria,
      tracked,
      concernId: (fp, phase, role) => cycle.concernId(tracked, fp, phase, role),
      // The loop's round r is the issue's attempt attemptsBefore + r (numbered over the issue's life).
      attempt: (round, blocking, previous) => attempt(ledger.attemptsBefore + round, blocking, previous),
      now,
      ...(deps.warn ? { warn: deps.warn } : {}),
      onProgress: (progress) => deps.onProgress?.({ kind: "review", progress }),
      ...(deps.onVote ? { onVote: deps.onVote } : {}),
      ...(live
        ? { onRound: (r: RoundReport<DiffArtifact>, verdicts: readonly CriterionCheck[], settled: readonly Settlement[]) => live?.round(r, verdicts, settled) }
        : {}),
    });
    await live?.settle();
    const { result } = review;
    if (result.artifact === undefined) {
      await labels.moveTo("dissent-ready"); // nothing was tried: the issue is as ready as before
      if (refused) throw refused;
      throw new BudgetExceeded(
        `no attempt could be made for issue ${id}: its call budget of ${budget.max} model calls cannot pay for a review (${budget.used()} used); raise budget.max_calls_per_issue`,
        { max: budget.max, used: budget.used(), unit: "calls", setting: "budget.max_calls_per_issue" },
      );
    }
    // review.acceptance settled the forwarded concerns the final diff addresses (quoting it; one an
    // earlier run settled is not resolved twice); the rest go on to the pull request unresolved — one
    // settled before that this diff no longer addresses too — with the review's own (docs/implement.md "Forwarded concerns").
    const addressed = new Set(review.settled.filter((s) => s.verdict === "addressed").map((s) => s.concern.id));
    const settled = settlementEvents(
      id,
      review.settled.filter((s) => wasPending.has(s.concern.id)),
      now,
    );
    const onward = carryEvents(
      id,
      tracked.filter((c) => !addressed.has(c.id)),
      [],
      REVIEW_STAGE.mustAddressBy,
      "carried",
    );
    await cycle.commitEvents([...review.events, ...settled, ...onward]);

    deps.onProgress?.({ kind: "publishing" });
    const state = await store.state(id);
    const pending = [...state.pending_concerns].sort(byId);
    const critical = pending.some((c) => c.severity === "CRITICAL");
    const stageRun = toStageRun(result.stageRun);
    const out = await outgoing(worktree, result.artifact, secrets, id);
    const leaked = [...attempts.values()].filter((e) => (e.secrets ?? 0) > 0).map((e) => e.attempt);
    const body = renderPrBody({
      issueId: id,
      plan,
      criteria,
      verdicts: review.verdicts,
      forwarded: review.settled,
      last: result.artifact,
      attempts: attempts.size,
      stage: stageRun,
      pending,
      story: attemptStory(await store.events({ issueId: id, types: ["ImplementAttemptStarted", "ImplementAttempt", "ConcernBlocked"] })),
      ...(leaked.length || out.guard ? { secrets: { attempts: leaked.sort((a, b) => a - b), ...(out.guard ? { guard: out.guard } : {}) } } : {}),
    });
    await store.transaction((tx) => tx.putArtifact(id, cycle.number, "pull_request", body));
    // The reviewed commit (or its one-commit squash) becomes the branch of the user's checkout, then leaves from there.
    await publishToCheckout(worktree, out.commit);
    const github = settings.openPr && deps.tracker.openPullRequest !== undefined;
    let pr: ImplementResult["pull_request"] = { where: "store", number: null, url: null, draft: critical, updated: ledger.lastPr !== undefined };
    if (github && out.guard === "withheld") {
      deps.warn?.(
        `the diff of issue ${id}'s branch holds a secret dissent keeps: the branch was not pushed and no pull request opened; remove it, then run dissent issue implement ${id} again (docs/implement.md#safety)`,
      );
    } else if (github && deps.tracker.openPullRequest) {
      await pushBranch(repo, settings.remote, worktree.branch, out.commit, signal);
      const opened = await deps.tracker.openPullRequest({
        issueId: id,
        head: worktree.branch,
        base: settings.baseBranch,
        title: issue.title,
        body,
        draft: critical,
      });
      pr = { where: "github", number: opened.number, url: opened.url, draft: critical, updated: opened.updated };
      await live?.opened(opened.number);
    }
    await live?.settle();
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
        ...(out.guard ? { secrets: out.guard } : {}),
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
      forwarded_concerns: review.settled.map(forwardedSummary),
      pending_concerns: pending,
      pull_request: pr,
      labels: labels.labels,
      calls: meter.now().calls,
    };
  });
}
