import type { RoundProgress, RoundReport } from "../adversarial/retry-loop.js";
import { concernIdOf } from "../adversarial/concern-id.js";
import type { Concern, StageRun } from "../contracts/concern.js";
import { toStageRun } from "../contracts/concern.js";
import type { ReviewSettings } from "../contracts/config.js";
import { BudgetExceeded, messageOf, UsageError } from "../errors.js";
import { settlementEvents, type CriterionCheck, type Settlement } from "../implement/acceptance.js";
import { REVIEW_DIFF_CHARS, testLine, type DiffArtifact } from "../implement/artifact.js";
import { redactedDiff } from "../implement/attempt.js";
import { forwardedConcerns } from "../implement/implement-issue.js";
import { settledLine } from "../implement/pr-live.js";
import { reviewImplementation } from "../implement/review-stage.js";
import { criteriaCodec } from "../pipeline/artifact-codecs.js";
import { runIssue, type RunDeps } from "../pipeline/issue-run.js";
import { renderCriteria, type RoleContext } from "../pipeline/roles.js";
import type { Store } from "../store/port.js";
import { isGithubTracker } from "../trackers/github.js";
import type { TrackedIssue } from "../trackers/port.js";
import { CheckWriter, checkText, conclusionOf, type CheckConclusion } from "./check-run.js";
import { findingsOfRound, type ReviewFinding } from "./findings.js";
import { isRefused, type PullRef } from "./pr-port.js";
import { postRoundReview } from "./pr-review.js";

/** What `dissent pr review` needs: the kernel's (RunDeps), the review settings and the secrets to redact. */
export interface PrReviewDeps extends RunDeps {
  review: ReviewSettings;
  /** `serve.public_url`: the check links to the dashboard. */
  dashboardUrl: string | null;
  redact: (text: string) => string;
  /** The values dissent holds as secrets: redacted from the diff before any critic reads it. */
  secrets?: readonly string[];
  onProgress?: (p: RoundProgress) => void;
}

/** `dissent pr review --json` (docs/github-action.md "Reviewing any pull request"). */
export interface PrReviewResult {
  pull: number;
  url: string;
  head: string;
  /** `passed` (nothing found), `advice` (advisory findings only), `blocking` (a finding blocks), `empty` (the diff changes nothing). */
  status: "passed" | "advice" | "blocking" | "empty";
  /** What the diff was reviewed against: the plan of the issue it closes (dissent planned it), else its own description. */
  contract: { kind: "plan"; issue: string } | { kind: "description" };
  findings: ReviewFinding[];
  acceptance: CriterionCheck[];
  /** The concerns the plan forwarded to implementation, as review.acceptance settled them on this diff (none without a plan). */
  forwarded_concerns: { id: string; verdict: Settlement["verdict"]; evidence: string | null; file: string | null }[];
  /** The review posted: null when this head was reviewed before (nothing is posted twice) or there was nothing to review. */
  review: { id: number; event: "COMMENT" | "REQUEST_CHANGES"; inline: number; in_body: number; resolved: number } | null;
  check: CheckConclusion | null;
  stage: StageRun | null;
  /** Network model calls this invocation made. */
  calls: number;
}

/** The subject a pull request's review runs under: its lease, its lifetime ceilings and its events (issue_id). */
export const prSubject = (n: number) => `pr-${n}`;

/** GitHub's closing keywords (`Closes #12`, `fixes #12`) and dissent's own branch name (`dissent/issue-12`): the issue a pull request is for. */
export function linkedIssue(pull: Pick<PullRef, "body" | "headRef">): string | undefined {
  const own = /^dissent\/issue-(\d{1,10})$/.exec(pull.headRef);
  if (own) return own[1];
  const closes = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d{1,10})\b/i.exec(pull.body);
  return closes?.[1];
}

/** The diff's statistics, counted from the unified diff (GitHub sends no numbers with the `diff` media type). */
function statsOf(diff: string): DiffArtifact["stats"] {
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("diff --git ")) files++;
    else if (line.startsWith("+") && !line.startsWith("+++ ")) insertions++;
    else if (line.startsWith("-") && !line.startsWith("--- ")) deletions++;
  }
  return { files, insertions, deletions };
}

/**
 * The ids the pull request's earlier reviews gave their findings (by phase, critic and fingerprint),
 * and the highest number among them: ids are numbered over the pull request's life, as an issue's are.
 */
async function earlierIds(store: Store, subject: string): Promise<{ byFinding: Map<string, string>; seq: number }> {
  const byFinding = new Map<string, string>();
  let seq = 0;
  for (const e of await store.events({ issueId: subject, types: ["ConcernBlocked", "ConcernForwarded"] })) {
    if (e.type !== "ConcernBlocked" && e.type !== "ConcernForwarded") continue;
    const c = e.concern;
    byFinding.set(`${c.phase}\u0000${c.raised_by}\u0000${c.fingerprint}`, c.id);
    seq = Math.max(seq, Number(/-(\d+)$/.exec(c.id)?.[1] ?? 0));
  }
  return { byFinding, seq };
}

/** No process of dissent's ran for a pull request's diff: the artifact's agent record says so. */
const NO_RUN = { exit_code: 0, signal: null, timed_out: false, duration_ms: 0, output_tail: "", output_bytes: 0 };

/**
 * The contract the diff is reviewed against: the plan and acceptance criteria of the issue it closes
 * when dissent planned that issue (and the concerns forwarded to implementation, as tracked), else the
 * pull request's own title and description.
 */
async function contractOf(
  d: PrReviewDeps,
  pull: PullRef,
): Promise<{ issue: TrackedIssue; artifacts: RoleContext["artifacts"]; criteria: string[]; tracked: Concern[]; linked: string | null }> {
  const described: TrackedIssue = {
    id: prSubject(pull.number),
    title: pull.title,
    body: `${pull.body.trim() || "(no description)"}\n\n(Pull request #${pull.number} by @${pull.author || "unknown"}: dissent planned no issue it closes, so its title and this description are what the change is reviewed against.)`,
    labels: [],
    url: pull.url,
  };
  const linked = linkedIssue(pull);
  const row = linked ? await d.store.plan(linked) : undefined;
  const plan = linked && row && row.status !== "planning" && row.status !== "new" ? await d.store.artifact(linked, row.cycle, "plan") : undefined;
  if (!linked || !row || !plan) return { issue: described, artifacts: {}, criteria: [], tracked: [], linked: null };
  const criteriaText = await d.store.artifact(linked, row.cycle, "acceptance_criteria");
  const criteria: string[] = criteriaText ? criteriaCodec.decode(criteriaText) : [];
  const issue = await d.tracker.get(linked);
  // The concerns the plan forwarded to implementation: review.acceptance settles them on this diff, as on dissent's own (docs/implement.md "Forwarded concerns").
  const tracked = await forwardedConcerns(d.store, linked);
  return { issue, artifacts: { plan, ...(criteria.length ? { acceptance_criteria: renderCriteria(criteria) } : {}) }, criteria, tracked, linked };
}

/**
 * `dissent pr review N` and `/dissent review` (docs/github-action.md, docs/adr/037): reviews any pull
 * request — a person's too — with the implement review's council, tally, second opinions and budget,
 * in one round (dissent revises nothing of a pull request), and leaves the result where maintainers
 * read reviews: one GitHub review with inline comments (a later head's review resolves or updates
 * dissent's earlier comments; a person's are never touched) and the `dissent` check on the head. It
 * never pushes, never approves and runs none of the pull request's code.
 */
export async function reviewPullRequest(number: number, d: PrReviewDeps): Promise<PrReviewResult> {
  const tracker = d.tracker;
  if (!isGithubTracker(tracker) || typeof tracker.pullRequests !== "function")
    throw new UsageError(`dissent pr review needs the GitHub tracker (tracker: { type: github, repo: OWNER/NAME }); this config uses ${tracker.kind}`);
  const port = tracker.pullRequests();
  const pull = await port.pull(number);
  if (!pull) throw new UsageError(`${port.repo} has no pull request #${number}`);
  if (pull.state !== "open") throw new UsageError(`pull request #${number} of ${port.repo} is closed: dissent reviews open pull requests`);
  const got = await port.pullDiff(number, REVIEW_DIFF_CHARS);
  if (isRefused(got))
    throw new UsageError(
      `GitHub will not give the diff of pull request #${number} (${got.refused}: ${got.errors.join("; ") || "refused"}): it is too large to review; split it`,
    );
  const shown = redactedDiff(got.text, d.redact, d.secrets ?? []);
  const contract = await contractOf(d, pull);
  const subject = prSubject(number);
  const project = await d.project?.();
  const code = await d.code?.();
  const artifact: DiffArtifact = {
    attempt: 1,
    outcome: "untested",
    commit: pull.headSha,
    diff: shown.text,
    truncated: got.truncated,
    stats: statsOf(got.text),
    agent: NO_RUN,
    testCommand: null,
    test: null,
    ...(shown.secrets ? { secrets: shown.secrets } : {}),
    pull: { number, author: pull.author, base: pull.baseRef, head: pull.headSha },
  };
  const detailsUrl = d.dashboardUrl ? `${d.dashboardUrl}/#/events?issue=${encodeURIComponent(subject)}` : null;
  const base = {
    pull: number,
    url: pull.url,
    head: pull.headSha,
    contract: contract.linked ? ({ kind: "plan", issue: contract.linked } as const) : ({ kind: "description" } as const),
  };
  if (artifact.stats.files === 0) {
    return { ...base, status: "empty", findings: [], acceptance: [], forwarded_concerns: [], review: null, check: null, stage: null, calls: 0 };
  }

  return runIssue(
    {
      store: d.store,
      subject,
      calls: d.calls,
      ceilings: { maxCalls: d.maxCalls, maxUsd: d.maxUsd ?? null },
      words: { name: `pull request #${number}`, over: "over its reviews", again: "review it again" },
      busy: `pull request #${number} is being reviewed`,
      ...(d.holder ? { holder: d.holder } : {}),
      ...(d.lease ? { lease: d.lease } : {}),
      ...(d.warn ? { warn: d.warn } : {}),
    },
    async ({ door, costOf, budget, meter }) => {
      const checks = new CheckWriter(port, d.warn);
      const label = `head ${pull.headSha.slice(0, 7)}`;
      await checks.start(
        pull.headSha,
        { title: `reviewing ${label}…`, summary: `dissent's review of pull request #${number} at ${label} is running.` },
        detailsUrl,
      );
      const ids = await earlierIds(d.store, subject);
      let report: { r: RoundReport<DiffArtifact>; verdicts: readonly CriterionCheck[]; settled: readonly Settlement[] } | undefined;
      const context = (): RoleContext => ({ issue: contract.issue, artifacts: contract.artifacts, ...(project ? { project } : {}) });
      let review: Awaited<ReturnType<typeof reviewImplementation>>;
      try {
        review = await reviewImplementation({
          issueId: subject,
          cycle: 1,
          door,
          costOf,
          append: (events) => d.store.append(events),
          budget,
          meter,
          context,
          ...(code ? { code } : {}),
          criteria: contract.criteria,
          tracked: contract.tracked,
          // The same finding keeps its id over the pull request's heads; a new one never takes an earlier one's (its comment would be "still raised").
          concernId: (fp, phase, role) => {
            const key = `${phase}\u0000${role}\u0000${fp}`;
            let id = ids.byFinding.get(key);
            if (!id) ids.byFinding.set(key, (id = concernIdOf(phase, role, ++ids.seq)));
            return id;
          },
          attempt: async () => artifact,
          maxRounds: 1,
          words: { what: `pull request #${number} at ${label}`, again: `dissent pr review ${number} again once the model is back` },
          now: d.now ?? (() => new Date().toISOString()),
          ...(d.warn ? { warn: d.warn } : {}),
          ...(d.onProgress ? { onProgress: d.onProgress } : {}),
          ...(d.onVote ? { onVote: d.onVote } : {}),
          onRound: (r, verdicts, settled) => {
            report = { r, verdicts, settled };
          },
        });
      } catch (e) {
        await checks.finish(
          pull.headSha,
          "cancelled",
          {
            title: `${label}: the review stopped`,
            summary: `dissent's review of ${label} stopped before it ended: ${d.redact(messageOf(e)).split("\n")[0] ?? ""}`,
          },
          detailsUrl,
        );
        throw e;
      }
      // The stage's own events (its end, what it forwarded) go to the pull request's log as the loop emitted them.
      await d.store.append(review.events);
      // A round every critic failed threw above (the review's watch); one never voted is the budget's.
      if (!report) {
        const refused = new BudgetExceeded(
          `pull request #${number} has no call budget left for a review (${budget.used()} of ${budget.max} calls used): raise budget.max_calls_per_issue`,
          { max: budget.max, used: budget.used(), unit: "calls", setting: "budget.max_calls_per_issue" },
        );
        await checks.finish(pull.headSha, "cancelled", { title: `${label}: not reviewed`, summary: refused.message }, detailsUrl);
        throw refused;
      }
      const findings = findingsOfRound(report.r);
      const { verdicts, settled } = report;
      const notes = [testLine(artifact), ...(settled.length ? [settledLine(settled)] : [])];
      const conclusion = conclusionOf(findings);
      let posted: PrReviewResult["review"] = null;
      await checks.finish(pull.headSha, conclusion, checkText({ label, findings, criteria: contract.criteria, verdicts, notes }), detailsUrl);
      const out = await postRoundReview(
        port,
        {
          subject: { key: subject, pull: number, commit: pull.headSha },
          round: { token: pull.headSha.slice(0, 12), label },
          diff: artifact.diff,
          findings,
          criteria: contract.criteria,
          verdicts,
          settings: d.review,
          notes,
          detailsUrl,
        },
        d.warn,
      );
      for (const f of out.fallbacks) if (f.kind === "inline_refused") d.warn?.(`pull request #${number}: ${f.detail}`);
      if (out.review !== null && out.event !== null)
        posted = { id: out.review, event: out.event, inline: out.inline.length, in_body: out.inBody.length, resolved: out.resolved.length };
      const blocking = findings.filter((f) => f.blocking).length;
      // The forwarded concerns this diff addresses are settled on the issue's own record, as `issue implement`
      // settles them: on merge they are no known gap. Those still pending only (one settled before stays so).
      const linkedId = contract.linked;
      if (linkedId && settled.length) {
        const pending = new Set((await d.store.state(linkedId)).pending_concerns.map((c) => c.id));
        const events = settlementEvents(
          linkedId,
          settled.filter((s) => pending.has(s.concern.id)),
          d.now ?? (() => new Date().toISOString()),
        );
        if (events.length) await d.store.append(events);
      }
      await d.store.append([
        {
          type: "PullRequestReviewed",
          issue_id: subject,
          number,
          head: pull.headSha,
          linked_issue: contract.linked,
          review: posted?.id ?? null,
          event: posted?.event ?? null,
          conclusion,
          findings: findings.length,
          blocking,
          inline: posted?.inline ?? 0,
          resolved: posted?.resolved ?? 0,
        },
      ]);
      const status: PrReviewResult["status"] = blocking ? "blocking" : findings.length ? "advice" : "passed";
      return {
        ...base,
        status,
        findings,
        acceptance: [...verdicts],
        forwarded_concerns: settled.map((s) => ({ id: s.concern.id, verdict: s.verdict, evidence: s.evidence ?? null, file: s.file ?? null })),
        review: posted,
        check: checks.channel === "none" ? null : conclusion,
        stage: toStageRun(review.result.stageRun),
        calls: meter.now().calls,
      };
    },
  );
}
