import type { StageRecord } from "../contracts/concern.js";
import { jsonLine } from "../terminal.js";

/**
 * What the factory reports on stdout (docs/factory.md): one line per issue when it starts, per
 * finished stage, and when it ends — as text, or one JSON object per line with `--json`.
 */
export type FactoryLine =
  | { event: "started"; issue: string; cycle: number; attempt: number; worker: string; kind?: "implement" }
  /** An attempt of the coding agent ended (docs/implement.md). */
  | { event: "attempt"; issue: string; cycle: number; attempt: number; outcome: string; test_exit_code: number | null }
  /** An issue's implementation was reviewed: its pull request (or recorded review) is out. */
  | {
      event: "implemented";
      issue: string;
      cycle: number;
      status: "review" | "hitl";
      attempts: number;
      pull_request: number | null;
      calls: number;
      cost_usd: number | null;
    }
  | { event: "stage"; issue: string; cycle: number; stage: string; phase: string; outcome: string; rounds: number; calls: number; cost_usd: number | null }
  | { event: "finished"; issue: string; cycle: number; status: "ready" | "needs_replan" | "hitl"; route: string; calls: number; cost_usd: number | null }
  | { event: "failed"; issue: string; cycle: number; attempt: number; max_attempts: number; error: string; retry_at: string | null }
  | { event: "skipped"; issue: string; cycle: number; reason: string; retry_at: string | null }
  | { event: "interrupted"; issue: string; cycle: number }
  | { event: "merged"; issue: string; pr: number; gaps: number; wiki_entries: string[] }
  | { event: "gave_up"; issue: string; cycle: number; attempts: number; error: string | null }
  /** A `/dissent` comment command handled (docs/github-action.md). */
  | { event: "command"; issue: string; comment: number; command: string | null; status: string; detail: string }
  /** An issue past a ceiling of its life (docs/issue.md): not planned again until `setting` is raised. */
  | { event: "ceiling"; issue: string; cycle: number; setting: string; error: string };

/** A line as printed: stamped with its time. */
export type StampedLine = FactoryLine & { at: string };

const usd = (v: number | null) => (v === null ? "cost unknown" : v === 0 ? "$0" : `$${v < 0.01 ? v.toFixed(4) : v.toFixed(2)}`);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The text form: `#ID what happened · details`. */
export function textLine(l: FactoryLine): string {
  const who = `#${l.issue}`;
  switch (l.event) {
    case "started":
      return `${who} ${l.kind === "implement" ? "implementing" : "started"} · cycle ${l.cycle} · attempt ${l.attempt} · ${l.worker}`;
    case "attempt":
      return `${who} agent attempt ${l.attempt} ${l.outcome}${l.test_exit_code === null ? "" : l.test_exit_code === 0 ? " · tests passed" : ` · tests failed (exit ${l.test_exit_code})`}`;
    case "implemented":
      return `${who} ${l.status} · ${plural(l.attempts, "attempt")} · ${l.pull_request ? `PR #${l.pull_request}` : "review recorded"} · ${plural(l.calls, "call")} · ${usd(l.cost_usd)}`;
    case "stage":
      return `${who} ${l.phase} ${l.outcome} after ${plural(l.rounds, "round")} · ${plural(l.calls, "call")} · ${usd(l.cost_usd)}`;
    case "finished":
      return `${who} ${l.status} · ${l.route} · ${plural(l.calls, "call")} · ${usd(l.cost_usd)}`;
    case "failed":
      return `${who} failed (attempt ${l.attempt} of ${l.max_attempts}): ${l.error}${l.retry_at ? ` · retry after ${l.retry_at}` : ` · no more attempts: plan it with dissent issue plan ${l.issue}`}`;
    case "skipped":
      return `${who} skipped: ${l.reason}${l.retry_at ? ` · again after ${l.retry_at}` : ""}`;
    case "interrupted":
      return `${who} interrupted · state saved · the next factory (or dissent issue plan ${l.issue}) resumes it`;
    case "merged":
      return `${who} merged in PR #${l.pr} · ${plural(l.gaps, "known gap")} shipped${l.wiki_entries.length ? ` · wiki: ${l.wiki_entries.join(", ")}` : ""}`;
    case "command":
      return `${who} comment ${l.comment} ${l.status}: ${l.detail}`;
    case "ceiling":
      return `${who} not planned: ${l.error} · not retried until ${l.setting} is raised`;
    case "gave_up":
      return `${who} not retried: ${plural(l.attempts, "failed attempt")} in cycle ${l.cycle}${l.error ? ` (last: ${l.error})` : ""} · plan it with dissent issue plan ${l.issue}`;
  }
}

/** A finished stage as a line. */
export function stageLine(issue: string, r: StageRecord): FactoryLine {
  return { event: "stage", issue, cycle: r.cycle, stage: r.stage, phase: r.phase, outcome: r.outcome, rounds: r.rounds, calls: r.calls, cost_usd: r.cost_usd };
}

/** Prints lines as text (after the time, to the second) or JSON, each one whole. */
export function lineWriter(write: (text: string) => void, json: boolean, now: () => Date = () => new Date()): (l: FactoryLine) => void {
  return (l) => {
    const at = now().toISOString();
    write(json ? `${jsonLine({ at, ...l })}\n` : `${at.slice(0, 19)}Z  ${textLine(l)}\n`);
  };
}
