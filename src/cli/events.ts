import type { DissentEvent } from "../contracts/events.js";
import { withDissent, type Common } from "./common.js";
import { safe, type Io } from "./io.js";
import { severityText } from "../contracts/severity-text.js";

function summary(e: DissentEvent): string {
  switch (e.type) {
    case "ModelCall":
      return `${e.role} ${e.provider}:${e.model} ${e.cached ? "cached" : "network"} ${Math.round(e.latency_ms)}ms${e.error ? ` error: ${e.error}` : ""}`;
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
      return `${e.resolution.concern_id} ${e.resolution.resolution_kind} by ${e.resolution.resolved_by}${e.resolution.settled === false ? " (claim)" : ""}`;
    case "LabelChanged":
      return `${[...e.added.map((l) => `+${l}`), ...e.removed.map((l) => `-${l}`)].join(" ")}`;
    case "IssuePlanFailed":
      return `attempt ${e.attempt}: ${e.error}${e.retry_at ? ` (retry after ${e.retry_at})` : ""}`;
  }
}

/** `dissent events [--issue ID] [--json]`: the event log, oldest first. */
export async function eventsCommand(opts: Common & { issue?: string }, io: Io): Promise<number> {
  return withDissent(
    opts,
    io,
    async (d) => {
      const events = await d.events(opts.issue !== undefined ? { issueId: opts.issue.replace(/^#/, "") } : {});
      if (opts.json) io.stdout(events.map(({ seq: _seq, ...e }) => `${JSON.stringify(e)}\n`).join(""));
      else io.stdout(events.map((e) => `${e.at}  ${e.type.padEnd(24)} ${e.issue_id ?? "-"}  ${safe(summary(e))}\n`).join(""));
      return 0;
    },
    { readOnly: true },
  );
}
