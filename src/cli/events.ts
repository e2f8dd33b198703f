import type { DissentEvent } from "../contracts/events.js";
import type { Io } from "./io.js";
import { withRuntime } from "./issue.js";

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
      return `${e.concern.id} ${e.concern.severity} → ${e.concern.must_address_by} (${e.reason})`;
    case "ConcernAddressed":
      return `${e.resolution.concern_id} ${e.resolution.resolution_kind} by ${e.resolution.resolved_by}`;
    case "LabelChanged":
      return `${[...e.added.map((l) => `+${l}`), ...e.removed.map((l) => `-${l}`)].join(" ")}`;
  }
}

/** `dissent events [--issue ID] [--json]`: the event log, oldest first. */
export async function eventsCommand(opts: { issue?: string; json?: boolean; config?: string; verbose?: boolean }, io: Io): Promise<number> {
  return withRuntime(opts, io, async (rt) => {
    const events = rt.events.list(opts.issue !== undefined ? { issueId: opts.issue.replace(/^#/, "") } : undefined);
    if (opts.json) io.stdout(events.map((e) => `${JSON.stringify(e)}\n`).join(""));
    else io.stdout(events.map((e) => `${e.at}  ${e.type.padEnd(24)} ${e.issue_id ?? "-"}  ${summary(e)}\n`).join(""));
    return 0;
  });
}
