import { resolutionText } from "../contracts/resolution-text.js";
import { severityText } from "../contracts/severity-text.js";
import type { DissentEvent } from "../contracts/events.js";

/** A concern that blocked a round: its id, its severity as shown everywhere, and its first line. */
export interface BlockedConcern {
  id: string;
  severity: string;
  line: string;
}

/** What blocked one stage, round by round, and how each blocking concern ended (`issue plan`'s text output). */
export interface StageBlocks {
  stage: string;
  outcome: string;
  rounds: number;
  blocked: { round: number; concerns: BlockedConcern[] }[];
  /** Per blocking concern, in the order it first blocked: how it left the stage. */
  ended: { id: string; how: string }[];
}

const firstLine = (text: string, max = 100) => {
  const line = (text.split("\n")[0] ?? "").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/**
 * The stages of an issue's latest planning cycle that a concern blocked (docs/issue.md): per stage,
 * each round's blocking concerns, and how each ended — forwarded (to which phase, why), settled in
 * the stage (the next draft addressed it and the council agreed), or revised away (the next round's critics no longer raised it). From the events each
 * stage commits with itself (its start to its completion); a stage nothing blocked is left out.
 */
export function blockedStages(events: readonly DissentEvent[]): StageBlocks[] {
  let cycle = 0;
  for (const e of events) if (e.type === "ComplexityGateRouted" || e.type === "AdversarialStageStarted") cycle = Math.max(cycle, e.cycle);
  const out: StageBlocks[] = [];
  let window: DissentEvent[] | undefined;
  for (const e of events) {
    if (e.type === "AdversarialStageStarted") {
      window = e.cycle === cycle ? [] : undefined;
      continue;
    }
    if (!window) continue;
    if (e.type !== "AdversarialStageCompleted") {
      window.push(e);
      continue;
    }
    const seen = window;
    window = undefined;
    if (e.cycle !== cycle) continue;
    const rounds = new Map<number, BlockedConcern[]>();
    const last = new Map<string, number>();
    for (const b of seen) {
      if (b.type !== "ConcernBlocked" || b.stage !== e.stage) continue;
      rounds.set(b.round, [...(rounds.get(b.round) ?? []), { id: b.concern.id, severity: severityText(b.concern), line: firstLine(b.concern.concern) }]);
      last.set(b.concern.id, Math.max(last.get(b.concern.id) ?? 0, b.round));
    }
    if (rounds.size === 0) continue;
    const run = e.stage_run;
    const ended = [...last.entries()].map(([id, round]) => {
      const forwarded = seen.find((x) => x.type === "ConcernForwarded" && x.concern.id === id);
      if (forwarded?.type === "ConcernForwarded") return { id, how: `forwarded to ${forwarded.concern.must_address_by} (${forwarded.reason})` };
      const settled = seen.find((x) => x.type === "ConcernAddressed" && x.resolution.concern_id === id);
      if (settled?.type === "ConcernAddressed") {
        const r = settled.resolution;
        return { id, how: `settled${round < run.rounds ? ` in round ${round + 1}` : ""} (${resolutionText(r)})` };
      }
      if (round < run.rounds) return { id, how: `revised away: not raised again in round ${round + 1}` };
      return { id, how: `still blocking when the stage ended (${run.outcome})` };
    });
    out.push({
      stage: e.stage,
      outcome: run.outcome,
      rounds: run.rounds,
      blocked: [...rounds.entries()].sort(([a], [b]) => a - b).map(([round, concerns]) => ({ round, concerns })),
      ended,
    });
  }
  return out;
}
