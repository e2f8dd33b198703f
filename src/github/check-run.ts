import type { CriterionCheck } from "../implement/acceptance.js";
import type { ReviewFinding } from "./findings.js";
import { cutAtWord } from "./markdown.js";
import { isRefused, type CheckRunFields, type PullRequestPort, type StatusFields } from "./pr-port.js";
import { checklist, findingCounts, findingsTable } from "./review-text.js";

/**
 * The `dissent` check on a commit (docs/adr/037): in progress while the review runs, then success
 * (nothing found), neutral (advice only) or failure (a finding blocks); its summary the acceptance
 * checklist and the findings. Check runs can be written only with a GitHub App's token (an Actions
 * run's GITHUB_TOKEN is one); with any other (a personal access token: 403) — or where the API has
 * no checks (404) — the same verdict goes on the commit as a commit status named `dissent`.
 */

/** The check's name on GitHub (and the commit status's context). */
export const CHECK_NAME = "dissent";
/** GitHub's bound on a check's summary is 65,535 characters; dissent's stays under this. */
export const CHECK_SUMMARY_CHARS = 60_000;

export type CheckConclusion = "success" | "neutral" | "failure" | "cancelled";

/** failure while a finding blocks, neutral for advice only, success for nothing found. */
export function conclusionOf(findings: readonly ReviewFinding[]): CheckConclusion {
  if (findings.some((f) => f.blocking)) return "failure";
  return findings.length ? "neutral" : "success";
}

/** What the check says: a title, and a summary of the checklist and the findings. */
export interface CheckText {
  title: string;
  summary: string;
}

/** The check's text for a finished review: its headline, the acceptance checklist, the findings table. */
export function checkText(o: {
  label: string;
  findings: readonly ReviewFinding[];
  criteria: readonly string[];
  verdicts: readonly CriterionCheck[];
  notes?: readonly string[];
}): CheckText {
  const title = cutAtWord(`${o.label}: ${findingCounts(o.findings)}`, 200);
  const lines = [
    `**dissent's review of ${o.label}: ${findingCounts(o.findings)}.**`,
    ...(o.notes?.length ? ["", ...o.notes] : []),
    "",
    "### Acceptance criteria",
    "",
    ...checklist(o.criteria, o.verdicts),
    "",
    "### Findings",
    "",
    ...findingsTable(o.findings),
  ];
  const summary = lines.join("\n");
  return { title, summary: summary.length > CHECK_SUMMARY_CHARS ? `${summary.slice(0, CHECK_SUMMARY_CHARS)}\n\n(cut)` : summary };
}

const STATUS_OF: Record<CheckConclusion, StatusFields["state"]> = { success: "success", neutral: "success", failure: "failure", cancelled: "error" };

/**
 * Writes the `dissent` check of commits: one check run per commit, found again on the commit when
 * it has one (a resumed run updates it), or — once GitHub has refused check runs — commit statuses.
 * What GitHub refuses is a warning, never a failure of the run.
 */
export class CheckWriter {
  private mode: "check" | "status" | "none" = "check";
  private readonly runs = new Map<string, number>();
  private warned = false;

  constructor(
    private readonly port: PullRequestPort,
    private readonly warn?: (m: string) => void,
  ) {}

  /** How the verdicts go out now: check runs, commit statuses, or (both refused) not at all. */
  get channel(): "check" | "status" | "none" {
    return this.mode;
  }

  /** The check is in progress on `sha`. */
  async start(sha: string, text: CheckText, detailsUrl?: string | null): Promise<void> {
    await this.write(sha, { status: "in_progress", ...text, ...(detailsUrl ? { detailsUrl } : {}) }, "pending", text.title);
  }

  /** The check is over on `sha` with its conclusion. */
  async finish(sha: string, conclusion: CheckConclusion, text: CheckText, detailsUrl?: string | null): Promise<void> {
    await this.write(sha, { status: "completed", conclusion, ...text, ...(detailsUrl ? { detailsUrl } : {}) }, STATUS_OF[conclusion], text.title);
  }

  private async write(sha: string, f: CheckRunFields, state: StatusFields["state"], description: string): Promise<void> {
    if (this.mode === "check") {
      const done = await this.checkRun(sha, f);
      if (done === "ok") return;
      if (done.refused !== 403 && done.refused !== 404) {
        this.warnOnce(`GitHub refused the ${CHECK_NAME} check on commit ${sha.slice(0, 7)} (${done.refused}: ${done.errors.join("; ")})`);
        return;
      }
      this.mode = "status"; // check runs need a GitHub App's token: commit statuses instead, from now on
    }
    if (this.mode === "status") {
      const done = await this.port.createStatus(sha, CHECK_NAME, {
        state,
        description: cutAtWord(description, 140),
        ...(f.detailsUrl ? { targetUrl: f.detailsUrl } : {}),
      });
      if (isRefused(done)) {
        this.mode = "none";
        this.warnOnce(
          `GitHub refused both a check run and a commit status on commit ${sha.slice(0, 7)} of ${this.port.repo} (${done.refused}: ${done.errors.join("; ")}): the review has no check; give the token checks or statuses write access`,
        );
      }
    }
  }

  private async checkRun(sha: string, f: CheckRunFields): Promise<"ok" | { refused: number; errors: string[] }> {
    let id = this.runs.get(sha);
    if (id === undefined) {
      const listed = await this.port.checkRuns(sha, CHECK_NAME);
      if (isRefused(listed)) return listed;
      id = listed[0]?.id;
    }
    if (id !== undefined) {
      const done = await this.port.updateCheckRun(id, f);
      if (!isRefused(done)) {
        this.runs.set(sha, id);
        return "ok";
      }
      if (done.refused !== 404) return done;
    }
    const made = await this.port.createCheckRun(sha, CHECK_NAME, f);
    if (isRefused(made)) return made;
    this.runs.set(sha, made.id);
    return "ok";
  }

  private warnOnce(m: string): void {
    if (this.warned) return;
    this.warned = true;
    this.warn?.(m);
  }
}
