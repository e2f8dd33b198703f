import type { Concern, StageRun } from "../contracts/concern.js";
import { severityText } from "../contracts/severity-text.js";
import { cutAtWord, demoteHeadings, oneLine, quoteLine } from "../github/markdown.js";
import type { CriterionCheck, Settlement } from "./acceptance.js";
import { testLine, type DiffArtifact } from "./artifact.js";
import type { AttemptStory } from "./story.js";

/** The hidden marker that finds dissent's pull request body again (docs/implement.md). */
export const PR_MARKER = "<!-- dissent:pull-request -->";
/** The most characters of the plan's summary in the body. */
const SUMMARY_CHARS = 1_500;
/** GitHub refuses a body over 65,536 characters: the body stays under it. */
export const PR_BODY_CHARS = 60_000;

/** What the body is made of. */
export interface PrBodyInput {
  issueId: string;
  plan: string;
  criteria: readonly string[];
  verdicts: readonly CriterionCheck[];
  last: DiffArtifact | undefined;
  attempts: number;
  stage: StageRun;
  /** Every unresolved concern of the issue, with its id. */
  pending: readonly Concern[];
  /** The concerns the plan forwarded to implementation, as the review settled them on the final diff (docs/implement.md "Forwarded concerns"). */
  forwarded?: readonly Settlement[];
  /** Attempts whose diff held a secret dissent keeps, and what that did to the branch (docs/implement.md#safety). */
  secrets?: { attempts: readonly number[]; guard?: "withheld" | "squashed" };
  /** Every attempt of the issue's life: what blocked it and the attempt that fixed each (src/implement/story.ts). */
  story?: readonly AttemptStory[];
}

/** The most attempts the body tells of (the latest); the rest are counted. */
const STORY_ATTEMPTS = 20;
/** The most blockers told per attempt. */
const STORY_BLOCKERS = 12;

/** The plan's summary: its first paragraphs up to SUMMARY_CHARS, cut at a paragraph. */
export function planSummary(plan: string): string {
  const paragraphs = plan.trim().split(/\n\s*\n/);
  let out = "";
  for (const p of paragraphs) {
    if (out && out.length + p.length > SUMMARY_CHARS) break;
    out = out ? `${out}\n\n${p}` : p;
    if (out.length >= SUMMARY_CHARS) break;
  }
  return cutAtWord(out, SUMMARY_CHARS);
}

const quoted = (s: string | undefined) => (s ? ` — “${quoteLine(s, 200)}”` : "");

const outcomeText = (a: AttemptStory): string => {
  const tests = a.test_exit_code === null ? "" : a.test_exit_code === 0 ? ", tests passed" : `, tests failed (exit ${a.test_exit_code})`;
  const what: Record<AttemptStory["outcome"], string> = {
    tested: "tested",
    untested: "not tested (no test_command)",
    agent_failed: "the agent failed",
    timed_out: "the agent timed out",
    no_changes: "changed nothing",
    escaped: "wrote outside its worktree",
  };
  return `${what[a.outcome]}${tests}`;
};

/** What the review made of a forwarded concern, as the body says it. */
function settlementText(s: Settlement): string {
  if (s.verdict === "addressed") return `settled: addressed in the diff${s.file ? ` (\`${s.file.replace(/`/g, "")}\`)` : ""}${quoted(s.evidence)}`;
  if (s.verdict === "not_addressed") return `**not addressed** by the diff${s.reason ? `: ${quoteLine(s.reason, 200)}` : ""}`;
  return `the review could not tell${s.ungrounded ? " (it said addressed, but its quote is not in the diff)" : s.reason ? `: ${quoteLine(s.reason, 200)}` : ""}`;
}

/** Forwarded concerns: each settled (with the quote), not addressed, or one the review could not tell. */
function forwardedLines(forwarded: readonly Settlement[]): string[] {
  const lines = ["", "## Forwarded concerns", "", "Concerns the plan left for the implementation, each judged by the review on the final diff:", ""];
  for (const s of forwarded) {
    const c = s.concern;
    lines.push(`- [${s.verdict === "addressed" ? "x" : " "}] **${c.id}** ${severityText(c)} (${c.raised_by}): ${oneLine(c.concern)} — ${settlementText(s)}`);
  }
  return lines;
}

/** The review's history: per attempt, what blocked it and which attempt fixed each blocker (docs/implement.md). */
function storyLines(story: readonly AttemptStory[]): string[] {
  const lines = ["", "## Review history", ""];
  const shown = story.slice(-STORY_ATTEMPTS);
  if (story.length > shown.length) lines.push(`(${story.length - shown.length} earlier attempts are in \`dissent issue show\`)`, "");
  for (const [i, a] of shown.entries()) {
    const next = shown[i + 1];
    const head = `**Attempt ${a.attempt}** — ${outcomeText(a)}`;
    if (!a.blocked.length) {
      lines.push(`- ${head}: nothing blocked it.`);
      continue;
    }
    lines.push(`- ${head}; blocked by:`);
    for (const b of a.blocked.slice(0, STORY_BLOCKERS)) {
      const fate = b.fixed_in !== null ? `fixed in attempt ${b.fixed_in}` : next ? `still blocking in attempt ${next.attempt}` : "still open";
      lines.push(`  - **${b.id}** ${b.severity} (${b.raised_by}): ${quoteLine(b.concern, 160)} — ${fate}`);
    }
    if (a.blocked.length > STORY_BLOCKERS) lines.push(`  - …and ${a.blocked.length - STORY_BLOCKERS} more`);
  }
  return lines;
}

/**
 * The pull request's body (docs/implement.md): it closes the issue; the plan's summary; the
 * acceptance checklist with the review's verdicts; the test result; every unresolved concern with
 * its id. The same body is the local tracker's recorded review.
 */
export function renderPrBody(b: PrBodyInput): string {
  const lines = [`Closes #${b.issueId}`, "", "## Plan", "", demoteHeadings(planSummary(b.plan)), "", "## Acceptance criteria", ""];
  if (!b.criteria.length) lines.push("(the plan has no acceptance criteria)");
  for (const [i, c] of b.criteria.entries()) {
    const v = b.verdicts[i];
    const mark = v?.verdict === "met" ? "x" : " ";
    const said = v ? (v.verdict === "met" ? "met" : v.verdict === "not_met" ? "**not met**" : "cannot tell") : "not reviewed";
    lines.push(`- [${mark}] ${oneLine(c)} (${said}${quoted(v?.evidence)})`);
  }
  if (b.forwarded?.length) lines.push(...forwardedLines(b.forwarded));
  if (b.secrets) {
    const n = b.secrets.attempts;
    lines.push("", "## Secrets", "");
    if (n.length)
      lines.push(
        `**The diff of attempt${n.length === 1 ? "" : "s"} ${n.join(", ")} held a value dissent keeps secret** (a key, a token, a database password): it is shown as [redacted] in the review and was never sent to a model.`,
        "",
      );
    if (b.secrets.guard === "withheld")
      lines.push("The branch still holds it: it was **not pushed**. Remove the secret (and rotate it), then run the implementation again.");
    else if (b.secrets.guard === "squashed")
      lines.push(
        n.length
          ? "The branch was published as **one commit** with the reviewed files, so no commit that held the secret left this machine. Rotate the secret all the same."
          : "The branch's history was too long to check for secrets, so it was published as **one commit** with the reviewed files.",
      );
    else lines.push("The reviewed branch no longer holds it. Rotate the secret all the same.");
  }
  lines.push("", "## Tests", "");
  lines.push(b.last ? testLine(b.last) : "No attempt was made.");
  if (b.last?.test && b.last.test.exit_code !== 0 && b.last.test.output_tail.trim()) {
    lines.push("", "<details><summary>Tail of the test output</summary>", "", "```text", b.last.test.output_tail.trim().slice(-4000), "```", "", "</details>");
  }
  if (b.story?.length) lines.push(...storyLines(b.story));
  lines.push("", "## Unresolved concerns", "");
  if (!b.pending.length) lines.push("None.");
  const fate = new Map((b.forwarded ?? []).map((s) => [s.concern.id, s.verdict]));
  for (const c of b.pending) {
    const f = fate.get(c.id);
    const said = f === "not_addressed" ? " — forwarded, not addressed by the diff" : f === "cannot_tell" ? " — forwarded, the review could not tell" : "";
    lines.push(`- **${c.id}** ${severityText(c)} (${c.raised_by}): ${oneLine(c.concern)}${quoted(c.evidence)}${said}`);
  }
  const s = b.stage;
  lines.push(
    "",
    "---",
    `Reviewed by dissent: ${b.attempts} attempt${b.attempts === 1 ? "" : "s"}${b.story && b.story.length > b.attempts ? ` in this run (${b.story.length} in all)` : ""}, review ${s.outcome} after ${s.rounds} round${s.rounds === 1 ? "" : "s"}, ${s.calls} model call${s.calls === 1 ? "" : "s"}.`,
    PR_MARKER,
  );
  const body = lines.join("\n");
  return body.length > PR_BODY_CHARS
    ? `${body.slice(0, PR_BODY_CHARS)}\n\n(cut: the full review is in \`dissent issue show ${b.issueId}\`)\n${PR_MARKER}`
    : body;
}
