import type { Critic } from "../adversarial/retry-loop.js";
import type { Finding } from "../contracts/concern.js";
import { agentLine, secretLine, testLine, type DiffArtifact } from "./artifact.js";

/** The role name of the checks dissent makes itself on every attempt (no model call): tests, timeout, an empty diff. */
export const CHECKS_ROLE = "test_command";

/** The last non-empty line of a text: the line a failing-test concern quotes (a test runner's summary). */
function lastLine(text: string): string | undefined {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length >= 12)
    .at(-1);
}

/**
 * What the attempt itself shows, as CRITICAL findings grounded in the artifact (docs/implement.md):
 * a failing or timed-out test run, an agent stopped at its time limit, an attempt that changed
 * nothing, a diff that holds a secret dissent keeps. They vote in the council like a critic, so they
 * block like one.
 */
export function attemptChecks(a: DiffArtifact): Finding[] {
  const out: Finding[] = [];
  if (a.secrets) {
    out.push({
      evidence: secretLine(a),
      severity: "CRITICAL",
      category: "secret",
      concern:
        "The change writes a credential dissent holds (an API key, a token, a database password) into the repository: remove it and read it from the environment instead. A branch holding it is never pushed.",
    });
  }
  if (a.agent.timed_out) {
    out.push({
      evidence: agentLine(a),
      severity: "CRITICAL",
      category: "timeout",
      concern: "The coding agent did not finish within implement.attempt_timeout_ms and was stopped; its work is incomplete.",
    });
  } else if (a.outcome === "no_changes") {
    out.push({ evidence: agentLine(a), severity: "CRITICAL", category: "incomplete", concern: "The attempt changed nothing: the plan is not implemented." });
  }
  const t = a.test;
  if (t && a.testCommand && t.exit_code !== 0) {
    const line = (!t.timed_out && lastLine(t.output_tail)) || testLine(a);
    out.push({
      evidence: line,
      severity: "CRITICAL",
      category: "test_failure",
      concern: t.timed_out
        ? "The test command did not finish within implement.test_timeout_ms."
        : "The tests fail on this branch: the change must make test_command pass.",
    });
  }
  return out;
}

/**
 * A model critic that is not asked about an attempt that changed nothing (docs/implement.md): there
 * is no diff to read, dissent's own check already blocks it, and the call would be paid for nothing.
 */
export function skipEmpty(critic: Critic<DiffArtifact>): Critic<DiffArtifact> {
  return {
    ...critic,
    calls: async (a, review) => (a.outcome === "no_changes" ? 0 : critic.calls ? critic.calls(a, review) : 1),
    review: async (a, review) => (a.outcome === "no_changes" ? { findings: [] } : critic.review(a, review)),
  };
}
