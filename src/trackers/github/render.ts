import type { Concern } from "../../contracts/concern.js";
import type { PlanReport } from "../port.js";

/** Hidden markers that find dissent's comments again; a comment is ours when its body starts with one. */
export const PLAN_MARKER = "<!-- dissent:plan -->";
export const MERGED_MARKER = "<!-- dissent:merged -->";
/** dissent's reply to comment commands when there is no plan comment to update (docs/github-action.md). */
export const REPLY_MARKER = "<!-- dissent:reply -->";

/** GitHub refuses comment bodies over 65,536 characters; stay clear of it. */
const MAX_BODY = 65_000;

const STATUS: Record<PlanReport["status"], string> = {
  ready: "**ready**: the plan passed review and can be implemented",
  needs_replan: "**needs a re-plan**: the plan reviewer rejected it; its findings go to the planner of the next `dissent issue plan`",
  hitl: "**needs a human decision** before implementation (see the pending concerns)",
};

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

function concernLine(c: Concern): string {
  const flags = c.human_required ? ", human decision required" : "";
  return `- **${c.severity}** \`${c.id}\` (${c.raised_by} → ${c.must_address_by}${flags}): ${oneLine(c.concern)}`;
}

function fit(body: string, issueId: string): string {
  if (body.length <= MAX_BODY) return body;
  const cut = body.lastIndexOf("\n", MAX_BODY - 200);
  return `${body.slice(0, cut > 0 ? cut : MAX_BODY - 200)}\n\n… (truncated: GitHub limits comment size; the whole plan is in \`dissent issue show ${issueId}\`)\n`;
}

/** The plan comment: plan, acceptance criteria and pending concerns, in one body (issue #6). */
export function planComment(issueId: string, report: PlanReport): string {
  const lines = [
    PLAN_MARKER,
    "## dissent plan",
    "",
    `Status: ${STATUS[report.status]}. Route: ${report.route === "trivial" ? "trivial (adversarial stages skipped)" : "load-bearing (every adversarial stage)"}.`,
    "",
    "### Plan",
    "",
    report.plan.trim(),
    "",
    "### Acceptance criteria",
    "",
    ...(report.acceptanceCriteria.length ? report.acceptanceCriteria.map((c) => `- [ ] ${oneLine(c)}`) : ["_none_"]),
    "",
    `### Pending concerns (${report.pendingConcerns.length})`,
    "",
    ...(report.pendingConcerns.length ? report.pendingConcerns.map(concernLine) : ["_none_"]),
    "",
    ...(report.note ? [`> ${oneLine(report.note)}`, ""] : []),
    `<sub>Written by dissent and updated in place on every \`dissent issue plan ${issueId}\`.</sub>`,
    "",
  ];
  return fit(lines.join("\n"), issueId);
}

/** The merge note: one comment of its own, so watchers hear of it and the plan comment stays the plan of record. */
export function mergedComment(issueId: string, pr: number, gaps: readonly Concern[]): string {
  const lines = [
    MERGED_MARKER,
    `## dissent: merged in #${pr}`,
    "",
    gaps.length
      ? `Shipped with ${gaps.length} known gap${gaps.length === 1 ? "" : "s"} (pending concerns never resolved; CRITICAL and HIGH ones are now wiki entries that later issues are checked against):`
      : "Shipped with no known gaps.",
    ...(gaps.length ? ["", ...gaps.map(concernLine)] : []),
    "",
  ];
  return fit(lines.join("\n"), issueId);
}
