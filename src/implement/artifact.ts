import type { AttemptOutcome, CommandRun } from "../contracts/events.js";
import { RunError } from "../errors.js";
import type { ArtifactCodec } from "../pipeline/artifact-codecs.js";
import type { DiffStats } from "./clone.js";

/** The most diff characters a review request carries (docs/limits.md); the rest is cut, and the cut said. */
export const REVIEW_DIFF_CHARS = 200_000;

/** What one attempt produced for review (docs/implement.md): the diff base…branch and the test result. */
export interface DiffArtifact {
  attempt: number;
  outcome: AttemptOutcome;
  /** The branch head after the attempt (null when nothing could be committed). */
  commit: string | null;
  diff: string;
  /** The diff was longer than git's output bound or REVIEW_DIFF_CHARS. */
  truncated: boolean;
  stats: DiffStats;
  agent: CommandRun;
  testCommand: string | null;
  test: CommandRun | null;
  escaped?: readonly string[];
  /** Values dissent holds as secrets the diff held (each shown as `[redacted]`). */
  secrets?: number;
  /**
   * Set when the diff is a pull request's, reviewed by `dissent pr review` (docs/github-action.md): who
   * wrote it and between which commits. No agent made it and dissent ran none of its code.
   */
  pull?: PullSource;
}

/** The pull request a reviewed diff is (`pr review`). */
export interface PullSource {
  number: number;
  author: string;
  base: string;
  head: string;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The one line that says how the tests ended: quoted by a failing-test concern. */
export function testLine(a: Pick<DiffArtifact, "test" | "testCommand"> & { outcome?: AttemptOutcome; pull?: PullSource | undefined }): string {
  const t = a.test;
  if (a.pull) return "Tests: dissent runs none of a pull request's code; the repository's own checks run its tests.";
  if (!a.testCommand) return "Tests: no test_command is configured.";
  if (!t) return `Tests: \`${a.testCommand}\` was not run: ${a.outcome === "no_changes" ? "the attempt changed nothing" : "the attempt was stopped first"}.`;
  if (t.timed_out) return `Tests: \`${a.testCommand}\` timed out after ${seconds(t.duration_ms)} and was stopped.`;
  if (t.exit_code === 0) return `Tests: \`${a.testCommand}\` passed (exit 0).`;
  return `Tests: \`${a.testCommand}\` failed (exit ${t.exit_code ?? t.signal}).`;
}

/** The one line that says how the agent ended: quoted by a timeout or no-change concern. */
export function agentLine(a: Pick<DiffArtifact, "agent" | "outcome" | "attempt"> & { pull?: PullSource | undefined }): string {
  if (a.pull) return `Pull request #${a.pull.number} by @${a.pull.author || "unknown"}: ${a.pull.base}…${a.pull.head.slice(0, 7)}.`;
  if (a.agent.timed_out) return `Agent: attempt ${a.attempt} timed out after ${seconds(a.agent.duration_ms)} and was stopped.`;
  if (a.outcome === "no_changes") return `Agent: attempt ${a.attempt} changed nothing (the diff is empty).`;
  return `Agent: attempt ${a.attempt} exited ${a.agent.exit_code ?? a.agent.signal} after ${seconds(a.agent.duration_ms)}.`;
}

/** The line that says the diff held secrets: quoted by dissent's own check (docs/implement.md#safety). */
export function secretLine(a: Pick<DiffArtifact, "secrets" | "attempt">): string {
  const n = a.secrets ?? 0;
  return `Secrets: the diff of attempt ${a.attempt} holds ${n} value${n === 1 ? "" : "s"} dissent keeps secret (a key, a token), shown here as [redacted].`;
}

/**
 * The artifact codec for a diff (DESIGN: artifacts with codecs): the text critics review and quote —
 * the agent's line, the diff in a fence, then the test line and the tail of the test output.
 */
export function renderDiffArtifact(a: DiffArtifact): string {
  const cut = a.diff.length > REVIEW_DIFF_CHARS;
  const diff = cut ? a.diff.slice(0, REVIEW_DIFF_CHARS) : a.diff;
  const parts = [
    agentLine(a),
    `## Diff (${a.stats.files} file${a.stats.files === 1 ? "" : "s"}, +${a.stats.insertions} -${a.stats.deletions})`,
    diff.trim() ? `\`\`\`diff\n${diff.trimEnd()}\n\`\`\`` : "(empty diff)",
  ];
  if (cut || a.truncated) parts.push(`(the diff is cut here: it is longer than the ${REVIEW_DIFF_CHARS} characters a review shows)`);
  if (a.secrets) parts.push(secretLine(a));
  parts.push("## Test result", testLine(a));
  const tail = a.test?.output_tail.trim();
  if (tail) parts.push(`\`\`\`text\n${tail}\n\`\`\``);
  return parts.join("\n\n");
}

/**
 * The diff's codec in the stage table's terms: rendered as above, kept as JSON. Its producer is the
 * coding agent, not a model reply: there is no reply to read.
 */
export const diffCodec: ArtifactCodec<DiffArtifact> = {
  kind: "diff",
  read: (role) => {
    throw new RunError(`${role}: a diff is made by the coding agent, never read from a model reply`);
  },
  render: renderDiffArtifact,
  encode: (a) => JSON.stringify(a),
  decode: (s) => JSON.parse(s) as DiffArtifact,
};
