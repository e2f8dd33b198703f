import type { EventOf } from "../contracts/events.js";
import type { StoredEvent } from "../store/port.js";

/** One agent attempt as `issue show` and the dashboard show it. */
export interface AttemptView {
  run: number;
  attempt: number;
  at: string;
  outcome: EventOf<"ImplementAttempt">["outcome"];
  commit: string | null;
  agent_exit_code: number | null;
  agent_ms: number;
  agent_timed_out: boolean;
  files: number;
  insertions: number;
  deletions: number;
  test_exit_code: number | null;
}

/** An issue's implementation (docs/implement.md): its branch, its attempts, and the pull request or recorded review. */
export interface ImplementationView {
  branch: string;
  run: number;
  attempts: AttemptView[];
  pull_request: { where: "github" | "store"; number: number | null; url: string | null; draft: boolean } | null;
  /** The pull request's body, as recorded in the store. */
  body: string | null;
}

/** The implementation of an issue read from its events (null when it was never implemented). */
export function implementationOf(events: readonly StoredEvent[], body: string | undefined): ImplementationView | null {
  let view: ImplementationView | null = null;
  for (const e of events) {
    if (e.type === "ImplementAttemptStarted" || e.type === "ImplementAttempt") {
      if (!view || view.run !== e.run) view = { branch: e.branch, run: e.run, attempts: [], pull_request: null, body: null };
      if (e.type !== "ImplementAttempt") continue;
      view.attempts.push({
        run: e.run,
        attempt: e.attempt,
        at: e.at,
        outcome: e.outcome,
        commit: e.commit,
        agent_exit_code: e.agent.exit_code,
        agent_ms: e.agent.duration_ms,
        agent_timed_out: e.agent.timed_out,
        files: e.diff.files,
        insertions: e.diff.insertions,
        deletions: e.diff.deletions,
        test_exit_code: e.test?.exit_code ?? null,
      });
    } else if (e.type === "PullRequestOpened" && view && view.run === e.run) {
      view.pull_request = { where: e.where, number: e.number, url: e.url, draft: e.draft };
    }
  }
  if (view?.pull_request && body !== undefined) view.body = body;
  return view;
}
