import type { RoundReport } from "../adversarial/retry-loop.js";
import type { ReviewSettings } from "../contracts/config.js";
import { isFatal, messageOf } from "../errors.js";
import { CheckWriter, checkText, conclusionOf } from "../github/check-run.js";
import { findingsOfRound, type ReviewFinding } from "../github/findings.js";
import type { PullRequestPort } from "../github/pr-port.js";
import { postRoundReview } from "../github/pr-review.js";
import { countSecrets } from "../redact.js";
import type { CriterionCheck, Settlement } from "./acceptance.js";
import { testLine, type DiffArtifact } from "./artifact.js";
import { CHECKS_ROLE } from "./checks.js";
import { headOf, historyOf, isAncestor, publishToCheckout, pushBranch, refOf, type AgentClone } from "./clone.js";

/** The round's settlement of the plan's forwarded concerns, as one line of its check and review (docs/implement.md "Forwarded concerns"). */
export function settledLine(settled: readonly Settlement[]): string {
  const said = { addressed: "addressed in the diff", not_addressed: "not addressed", cannot_tell: "the review could not tell" } as const;
  return `Forwarded concerns: ${settled.map((s) => `${s.concern.id} ${said[s.verdict]}`).join(", ")}.`;
}

/** What the pull request's live review needs: GitHub, the issue's clone and where it is pushed, the review settings. */
export interface LiveDeps {
  port: PullRequestPort;
  issueId: string;
  clone: AgentClone;
  /** The user's checkout and remote: attempts leave from there, as the reviewed commit does. */
  repo: string;
  remote: string;
  secrets: readonly string[];
  review: ReviewSettings;
  /** `serve.public_url`: the check links to the issue's page of the dashboard. */
  dashboardUrl: string | null;
  criteria: readonly string[];
  warn?: (message: string) => void;
}

/** One round held until there is a pull request to post it on. */
interface HeldRound {
  attempt: number;
  sha: string | null;
  diff: string;
  findings: ReviewFinding[];
  verdicts: readonly CriterionCheck[];
  notes: string[];
}

/**
 * `issue implement` on GitHub, live (docs/adr/037): each attempt's commit is pushed to the issue's
 * branch as it is made — unless it, or the history since the last push, holds a secret dissent keeps
 * (then it waits for the end, where the safety rules decide: docs/implement.md#safety) — and the
 * `dissent` check on it is in progress while its review runs, then success, neutral or failure. Each
 * round's review goes on the pull request as soon as there is one: at once when a pull request is
 * open for the branch (a later run), else when the run opens it, every round in order, each on its
 * attempt's commit. GitHub failing is a warning; the run goes on.
 */
export class LivePullRequest {
  private chain: Promise<void> = Promise.resolve();
  private stop: unknown;
  private readonly checks: CheckWriter;
  private readonly pushed = new Map<number, string>();
  private readonly checking = new Map<string, number>();
  private readonly held: HeldRound[] = [];
  private pull: number | null = null;

  private constructor(private readonly d: LiveDeps) {
    this.checks = new CheckWriter(d.port, d.warn);
  }

  /** The live review of an issue's run: the open pull request of its branch, if there is one, is found first. */
  static async open(d: LiveDeps): Promise<LivePullRequest> {
    const live = new LivePullRequest(d);
    live.pull = (await d.port.openPull(d.clone.branch))?.number ?? null;
    return live;
  }

  private get detailsUrl(): string | null {
    return this.d.dashboardUrl ? `${this.d.dashboardUrl}/#/issue/${encodeURIComponent(this.d.issueId)}` : null;
  }

  /** Runs `work` after what is queued; a GitHub failure is a warning, an interruption stops the run at the next settle. */
  private queue(what: string, work: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.stop !== undefined) return;
      try {
        await work();
      } catch (e) {
        if (isFatal(e))
          this.stop = e; // an interruption, a token GitHub rejects: the run stops
        else this.d.warn?.(`issue ${this.d.issueId}: ${what} on GitHub failed, the run goes on: ${messageOf(e).split("\n")[0] ?? ""}`);
      }
    });
    return this.chain;
  }

  /** What is queued so far is done (never throws: settle() does). The next attempt waits for it, so no push races its commit. */
  drained(): Promise<void> {
    return this.chain;
  }

  /** Everything queued is done; an interruption met on the way is thrown here. */
  async settle(): Promise<void> {
    await this.chain;
    if (this.stop !== undefined) throw this.stop;
  }

  /** Would pushing this attempt's commit send a secret dissent keeps (its diff, or a commit since the last push)? */
  private async clean(a: DiffArtifact, commit: string): Promise<boolean> {
    if (a.secrets) return false;
    if (!this.d.secrets.length) return true;
    const c = this.d.clone;
    const published = await refOf(c, "refs/dissent/published");
    const from = published && (await isAncestor(c, published, commit)) ? published : c.baseSha;
    if (from === commit) return true;
    const history = await historyOf(c, from, commit);
    return !history.truncated && countSecrets(history.text, this.d.secrets) === 0;
  }

  /** An attempt was made (or read back on resume): its commit pushed, when that is safe, and its check started. */
  attempt(a: DiffArtifact): Promise<void> {
    return this.queue(`publishing attempt ${a.attempt}`, async () => {
      const commit = a.commit;
      const c = this.d.clone;
      // Only the branch's head leaves (an older attempt read back on resume went out before).
      if (!commit || (await headOf(c)) !== commit || !(await this.clean(a, commit))) return;
      await publishToCheckout(c, commit);
      await pushBranch(this.d.repo, this.d.remote, c.branch, commit);
      this.pushed.set(a.attempt, commit);
      this.checking.set(commit, a.attempt);
      await this.checks.start(
        commit,
        { title: `reviewing attempt ${a.attempt}…`, summary: `dissent's review of attempt ${a.attempt} is running.\n\n${testLine(a)}` },
        this.detailsUrl,
      );
    });
  }

  /** A round was tallied: its check concluded, its review posted (or held for the pull request). */
  round(r: RoundReport<DiffArtifact>, verdicts: readonly CriterionCheck[], settled: readonly Settlement[] = []): void {
    const a = r.artifact;
    const findings = findingsOfRound(r);
    const notes = [testLine(a), ...(settled.length ? [settledLine(settled)] : [])];
    const models = r.critics.filter((c) => c.role !== CHECKS_ROLE);
    const unreviewed = models.length > 0 && models.every((c) => c.failed !== undefined);
    void this.queue(`the review of attempt ${a.attempt}`, async () => {
      const sha = this.pushed.get(a.attempt) ?? null; // read in the queue: the attempt's push (queued before) is done by now
      if (sha) {
        this.checking.delete(sha);
        if (unreviewed)
          await this.checks.finish(
            sha,
            "cancelled",
            {
              title: `attempt ${a.attempt}: not reviewed`,
              summary: "Every critic of the review failed: the attempt was not reviewed. The next run resumes here.",
            },
            this.detailsUrl,
          );
        else
          await this.checks.finish(
            sha,
            conclusionOf(findings),
            checkText({ label: `attempt ${a.attempt}`, findings, criteria: this.d.criteria, verdicts, notes }),
            this.detailsUrl,
          );
      }
      if (unreviewed) return;
      this.held.push({ attempt: a.attempt, sha, diff: a.diff, findings, verdicts, notes });
      if (this.pull !== null) await this.post();
    });
  }

  /** The run opened (or updated) the pull request: the rounds held are posted on it, in order. */
  opened(pull: number): Promise<void> {
    this.pull = pull;
    return this.queue("posting the review", () => this.post());
  }

  /** The run stopped with `e`: a check still in progress says the review did not finish (the next run resumes it). */
  failed(e: unknown): Promise<void> {
    const why = messageOf(e).split("\n")[0] ?? "";
    return this.queue("closing the check", async () => {
      for (const [sha, attempt] of this.checking) {
        await this.checks.finish(
          sha,
          "cancelled",
          { title: `attempt ${attempt}: the review stopped`, summary: `The review of attempt ${attempt} stopped before it ended: ${why}` },
          this.detailsUrl,
        );
      }
      this.checking.clear();
    });
  }

  private async post(): Promise<void> {
    const pull = this.pull;
    if (pull === null) return;
    for (const h of this.held.splice(0)) {
      const posted = await postRoundReview(
        this.d.port,
        {
          subject: { key: `issue-${this.d.issueId}`, pull, commit: h.sha },
          round: { token: String(h.attempt), label: `attempt ${h.attempt}` },
          diff: h.sha ? h.diff : null,
          findings: h.findings,
          criteria: this.d.criteria,
          verdicts: h.verdicts,
          settings: this.d.review,
          notes: h.notes,
          detailsUrl: this.detailsUrl,
        },
        this.d.warn,
      );
      // A change request GitHub refuses on the token's own pull request is expected (docs/implement.md): only a misplaced comment is said.
      for (const f of posted.fallbacks) if (f.kind === "inline_refused") this.d.warn?.(`issue ${this.d.issueId}, pull request #${pull}: ${f.detail}`);
    }
  }
}
