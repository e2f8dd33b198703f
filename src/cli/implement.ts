import { severityText } from "../contracts/severity-text.js";
import { UsageError } from "../errors.js";
import type { AttemptSummary, ImplementProgress, ImplementResult } from "../implement/implement-issue.js";
import { IMPLEMENT_ROLES } from "../implement/roles.js";
import { callKind, callsText, json, withDissent, type Common } from "./common.js";
import { terminalSafe } from "../terminal.js";
import type { Io } from "./io.js";
import { table } from "./table.js";

const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** One line per finished attempt (stderr), the same on a TTY and off it. */
function attemptLine(p: Extract<ImplementProgress, { kind: "attempt-done" }>): string {
  const a = p.attempt;
  const tests = a.test
    ? a.test.timed_out
      ? "tests timed out"
      : a.test.exit_code === 0
        ? "tests passed"
        : `tests failed (exit ${a.test.exit_code})`
    : "not tested";
  return `dissent: attempt ${a.attempt} ${a.outcome} · agent ${a.agent.timed_out ? "timed out" : `exit ${a.agent.exit_code ?? a.agent.signal}`} in ${secs(a.agent.duration_ms)} · +${a.diff.insertions} -${a.diff.deletions} in ${a.diff.files} file${a.diff.files === 1 ? "" : "s"} · ${tests}`;
}

function attemptTable(attempts: readonly AttemptSummary[]): string {
  return table(
    ["attempt", "outcome", "agent", "time", "diff", "tests"],
    attempts.map((a) => [
      String(a.attempt),
      a.outcome,
      a.agent_exit_code === null ? "stopped" : `exit ${a.agent_exit_code}`,
      secs(a.agent_ms),
      `+${a.insertions} -${a.deletions} (${a.files})`,
      a.test_exit_code === null ? "-" : a.test_exit_code === 0 ? "passed" : `failed (${a.test_exit_code})`,
    ]),
  );
}

/** The human summary of `issue implement`. */
function summaryLines(r: ImplementResult, kind: "local" | "network" | "model"): string[] {
  const counts = { met: 0, not_met: 0, cannot_tell: 0 };
  for (const v of r.acceptance) counts[v.verdict]++;
  const lines = [
    `issue ${r.issue}: ${r.status} · review ${r.stage.outcome} after ${r.stage.rounds} round${r.stage.rounds === 1 ? "" : "s"} · branch ${r.branch}`,
    attemptTable(r.attempts).trimEnd(),
    `acceptance: ${counts.met} met, ${counts.not_met} not met, ${counts.cannot_tell} cannot tell`,
    `status: ${r.status}  ·  labels: ${r.labels.join(", ")}  ·  ${callsText(r.calls, kind)}`,
  ];
  if (r.forwarded_concerns.length) {
    const n = (v: string) => r.forwarded_concerns.filter((f) => f.verdict === v).length;
    lines.splice(
      3,
      0,
      `forwarded concerns: ${n("addressed")} settled by the diff, ${n("not_addressed")} not addressed, ${n("cannot_tell")} the review could not tell`,
    );
  }
  if (r.pending_concerns.length) {
    lines.push(`unresolved concerns (${r.pending_concerns.length}):`);
    for (const c of r.pending_concerns) lines.push(`  ${c.id}  ${terminalSafe(severityText(c)).padEnd(8)} ${terminalSafe(c.concern)}`);
  } else lines.push("unresolved concerns: none");
  const pr = r.pull_request;
  lines.push(
    pr.where === "github"
      ? `pull request: #${pr.number}${pr.draft ? " (draft)" : ""}${pr.updated ? " (updated)" : ""} ${pr.url ?? ""}`.trimEnd()
      : `review recorded for branch ${r.branch}: dissent issue show ${r.issue}`,
  );
  return lines;
}

/** `dissent issue implement ID` (docs/implement.md). */
export async function issueImplement(id: string, opts: Common & { cache: boolean; replay?: boolean }, io: Io): Promise<number> {
  if (!opts.cache && opts.replay) throw new UsageError("--no-cache and --replay cannot be used together");
  return withDissent(opts, io, async (d, status) => {
    let result: ImplementResult;
    try {
      result = await d.implementIssue(id, {
        cache: opts.replay ? "replay" : opts.cache ? "use" : "bypass",
        onProgress: (p) => {
          if (p.kind === "attempt-done") return status.print(attemptLine(p));
          if (opts.json) return;
          if (p.kind === "worktree") status.print(`dissent: ${p.resumed ? "resuming in" : "worktree"} ${p.path} (${p.branch})`);
          else if (p.kind === "attempt") status.set(`dissent: attempt ${p.attempt}${p.replayed ? " (recorded)" : ": the agent is working…"}`);
          else if (p.kind === "review") status.set(`dissent: review r${p.progress.round} ${p.progress.step}…`);
          else status.set("dissent: publishing the review…");
        },
      });
    } finally {
      status.clear();
    }
    if (opts.json) json(io, result);
    else io.stdout(`${summaryLines(result, callKind(d.config, IMPLEMENT_ROLES)).join("\n")}\n`);
    return 0;
  });
}
