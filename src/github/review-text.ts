import type { CriterionCheck } from "../implement/acceptance.js";
import type { ReviewFinding, SecondOpinionView } from "./findings.js";
import { cell, cutAtWord, quoteLine } from "./markdown.js";

/**
 * The text of what dissent writes on a pull request — its review, inline comments and check
 * (docs/adr/037) — shared by `issue implement` and `pr review`.
 */

/** How many blocking findings and how much advice, in words. */
export function findingCounts(findings: readonly ReviewFinding[]): string {
  const blocking = findings.filter((f) => f.blocking).length;
  const advice = findings.length - blocking;
  if (!findings.length) return "nothing found";
  const parts = [
    ...(blocking ? [`${blocking} blocking finding${blocking === 1 ? "" : "s"}`] : []),
    ...(advice ? [`${advice} ${blocking ? "more as advice" : `advisory finding${advice === 1 ? "" : "s"}`}`] : []),
  ];
  return parts.join(", ");
}

/** The second opinion on a lone HIGH, in one line. */
export function opinionLine(o: SecondOpinionView): string {
  const by = o.by ? ` (${o.by})` : "";
  const why = o.reason ? ` — ${quoteLine(o.reason, 300)}` : "";
  switch (o.outcome) {
    case "confirmed":
      return `**Second opinion**${by}: confirmed${why}`;
    case "refuted":
      return `**Second opinion**${by}: refuted, so it is advice (MEDIUM)${why}`;
    case "unquoted":
      return `**Second opinion**${by}: confirmed without quoting the change, so not counted (MEDIUM)${why}`;
    case "failed":
      return `**Second opinion**: could not be had, so it is advice (MEDIUM)${why}`;
    case "skipped":
      return `**Second opinion**: not asked, so it is advice (MEDIUM)${why}`;
  }
}

/** The head line of a finding: severity, whether it blocks, its id and its critics. */
export function findingHead(f: ReviewFinding): string {
  const raised = f.raisedSeverity && f.raisedSeverity !== f.severity ? ` (raised as ${f.raisedSeverity})` : "";
  const critics = [f.critic, ...f.alsoBy].join(", ");
  return `**${f.severity}**${raised} · ${f.blocking ? "blocks" : "advice"} · \`${f.id}\` · ${critics}`;
}

/** A quote as a markdown blockquote: its lines, bounded. */
export function blockquote(text: string, max = 1000): string {
  const cut = cutAtWord(text.trim(), max);
  return cut
    .split("\n")
    .slice(0, 20)
    .map((l) => `> ${l}`)
    .join("\n");
}

/** A finding in full: head, concern, quote and second opinion (an inline comment's text, or an entry of the review's body). */
export function findingText(f: ReviewFinding): string {
  return [
    findingHead(f),
    "",
    cutAtWord(f.concern.trim(), 2000),
    ...(f.evidence.trim() ? ["", blockquote(f.evidence)] : []),
    ...(f.secondOpinion ? ["", opinionLine(f.secondOpinion)] : []),
  ].join("\n");
}

/** The acceptance checklist: each criterion checked when the review found it met, with its verdict. */
export function checklist(criteria: readonly string[], verdicts: readonly CriterionCheck[]): string[] {
  if (!criteria.length) return ["(no acceptance criteria)"];
  return criteria.map((c, i) => {
    const v = verdicts[i];
    const said = v ? (v.verdict === "met" ? "met" : v.verdict === "not_met" ? "**not met**" : "cannot tell") : "not reviewed";
    return `- [${v?.verdict === "met" ? "x" : " "}] ${quoteLine(c, 300)} (${said})`;
  });
}

/** The findings as a table: severity, id, critic, what it says, whether it blocks. */
export function findingsTable(findings: readonly ReviewFinding[], max = 50): string[] {
  if (!findings.length) return ["No findings."];
  const rows = findings
    .slice(0, max)
    .map((f) => `| ${f.severity} | \`${f.id}\` | ${cell(f.critic)} | ${cell(quoteLine(f.concern, 200))} | ${f.blocking ? "blocks" : "advice"} |`);
  return [
    "| severity | id | critic | finding | |",
    "|---|---|---|---|---|",
    ...rows,
    ...(findings.length > max ? [`| | | | …and ${findings.length - max} more | |`] : []),
  ];
}

/** One line of a finding for a list: id, severity, critic and what it says. */
export const findingLine = (f: ReviewFinding): string =>
  `**${f.id}** ${f.severity}${f.blocking ? " (blocks)" : ""} (${f.critic}): ${quoteLine(f.concern, 200)}${f.evidence.trim() ? ` — “${quoteLine(f.evidence, 200)}”` : ""}`;
