import type { DissentEvent } from "../contracts/events.js";
import { Interrupted, messageOf } from "../errors.js";
import { onceEach } from "../models/sdk-warnings.js";
import type { StoredEvent } from "../store/port.js";
import { withDissent, type Common } from "./common.js";
import { jsonLine, terminalSafe } from "../terminal.js";
import type { Io } from "./io.js";
import { resolutionText } from "../contracts/resolution-text.js";
import { severityText } from "../contracts/severity-text.js";

/** Whether a provider of the config is the in-process engine (its calls are `local`, not `network`). */
type IsLocal = (provider: string) => boolean;

function summary(e: DissentEvent, local: IsLocal): string {
  switch (e.type) {
    case "ModelCall":
      return `${e.role} ${e.provider}:${e.model} ${e.cached ? "cached" : local(e.provider) ? "local" : "network"} ${Math.round(e.latency_ms)}ms${e.queue_ms ? ` (queued ${Math.round(e.queue_ms)}ms)` : ""}${e.error ? ` error: ${e.error}` : ""}`;
    case "AdversarialStageStarted":
      return `${e.phase} ${e.stage} (cycle ${e.cycle})`;
    case "AdversarialStageCompleted":
      return `${e.phase} ${e.stage}: ${e.stage_run.outcome} after ${e.stage_run.rounds} round(s)`;
    case "AdversarialRetryExhausted":
      return `${e.stage}: ${e.unresolved.length} unresolved after ${e.rounds} rounds`;
    case "OscillationDetected":
      return `${e.stage}: same blocking concerns in round ${e.round}`;
    case "ComplexityGateRouted":
      return `${e.route} (${e.reason})`;
    case "ShippedWithKnownGap":
      return `PR #${e.pr}: ${e.concerns.length} gap(s)${e.wiki_entries.length ? `, wiki ${e.wiki_entries.join(", ")}` : ""}`;
    case "ConcernForwarded":
      return `${e.concern.id} ${severityText(e.concern)} → ${e.concern.must_address_by} (${e.reason})`;
    case "ConcernBlocked":
      return `${e.concern.id} ${severityText(e.concern)} blocked ${e.stage} round ${e.round}`;
    case "ConcernAddressed":
      return `${e.resolution.concern_id} ${resolutionText(e.resolution)}`;
    case "LabelChanged":
      return `${[...e.added.map((l) => `+${l}`), ...e.removed.map((l) => `-${l}`)].join(" ")}`;
    case "IssuePlanFailed":
      return `attempt ${e.attempt}: ${e.error}${e.retry_at ? ` (retry after ${e.retry_at})` : ""}`;
    case "CommentCommand":
      return `comment ${e.comment_id} by @${e.user}: ${e.command} → ${e.outcome}${e.detail ? ` (${e.detail})` : ""}`;
    case "ImplementAttemptStarted":
      return `attempt ${e.attempt} on ${e.branch}`;
    case "ImplementProcessStarted":
      return `attempt ${e.attempt}: ${e.command} started (process group ${e.pgid}, ${e.sandbox === "none" ? "unsandboxed" : e.sandbox})`;
    case "ImplementAttempt":
      return `attempt ${e.attempt}: ${e.outcome} · agent exit ${e.agent.exit_code ?? e.agent.signal} in ${(e.agent.duration_ms / 1000).toFixed(1)}s · +${e.diff.insertions} -${e.diff.deletions} in ${e.diff.files} file(s)${e.test ? ` · tests ${e.test.exit_code === 0 ? "passed" : "failed"}` : ""}${e.secrets ? ` · ${e.secrets} secret(s) redacted from the diff` : ""}`;
    case "PullRequestOpened":
      return `${e.where === "github" ? `PR #${e.number}${e.draft ? " (draft)" : ""}${e.updated ? " updated" : ""}` : "review recorded"} · ${e.branch}`;
    case "PullRequestReviewed":
      return `PR #${e.number} at ${e.head.slice(0, 7)}: ${e.conclusion} · ${e.findings} finding(s), ${e.blocking} blocking${e.review === null ? " · reviewed before" : ` · review ${e.review}`}${e.linked_issue ? ` · against issue ${e.linked_issue}'s plan` : ""}`;
    case "ImplementFailed":
      return `${e.error}${e.retry_at ? ` (retry after ${e.retry_at})` : ""}`;
  }
}

/** How one event is printed: a JSON line (`seq` left out), or the time, type, issue and a summary. */
const line = (e: StoredEvent, json: boolean | undefined, local: IsLocal) => {
  if (json) {
    const { seq: _seq, ...rest } = e;
    return `${jsonLine(rest)}\n`;
  }
  return `${e.at}  ${e.type.padEnd(24)} ${e.issue_id ?? "-"}  ${terminalSafe(summary(e, local))}\n`;
};

/**
 * `dissent events [--issue ID] [--json] [--follow]`: the event log, oldest first; with `--follow`,
 * then every event any process commits, until Ctrl-C or SIGTERM (exit 130 / 143, no error line: a
 * stop the user asked for).
 */
export async function eventsCommand(opts: Common & { issue?: string; follow?: boolean }, io: Io): Promise<number> {
  const issueId = opts.issue?.replace(/^#/, "");
  return withDissent(
    opts,
    io,
    async (d) => {
      const events = await d.events(issueId !== undefined ? { issueId } : {});
      const local: IsLocal = (provider) => d.config.providers[provider]?.type === "llama-cpp";
      io.stdout(events.map((e) => line(e, opts.json, local)).join(""));
      if (!opts.follow) return 0;
      const store = await d.store();
      const after = events.length > 0 ? Math.max(...events.map((e) => e.seq)) : 0;
      // A read that failed (a busy file, a dropped listener) is said once; the store keeps following.
      const warn = onceEach((m) => io.stderr(`dissent: warning: events --follow: ${terminalSafe(m.split("\n")[0] ?? "")}\n`));
      return new Promise<number>((resolve) => {
        const stopped = () => {
          stop();
          const reason: unknown = io.signal.reason;
          resolve(Interrupted.isInstance(reason) && reason.signal === "SIGTERM" ? 143 : 130);
        };
        const stop = store.follow(
          after,
          (e) => {
            if (issueId === undefined || e.issue_id === issueId) io.stdout(line(e, opts.json, local));
          },
          (e) => warn(messageOf(e)),
        );
        if (io.signal.aborted) stopped();
        else io.signal.addEventListener("abort", stopped, { once: true });
      });
    },
    { readOnly: true },
  );
}
