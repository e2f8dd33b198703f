import { callRow, emptyUsage, usageOf } from "./usage.js";
import type { CallRow, CycleTimeline, Estimator, RoundEntry, ServedEvent, StageEntry } from "./types.js";

/**
 * An issue's planning cycles read from its events, oldest first: the ComplexityGate's route, every
 * stage with its rounds and their calls, and the calls outside stages (gate, trivial planner,
 * reviewer). `running` says whether a phase is running now (its transient label is on the issue):
 * the last unfinished stage is then `running`, every other unfinished one `interrupted`.
 *
 * `estimate` prices the calls of unknown price from their tokens (the dashboard's; the CLI has none).
 *
 * ModelCall events carry no cycle: a call belongs to the cycle last routed, except the gate's own
 * call, which comes just before the ComplexityGateRouted event of the cycle it opens.
 */
export function cycleTimelines(events: readonly ServedEvent[], running: boolean, estimate?: Estimator): CycleTimeline[] {
  const cycles = new Map<number, CycleTimeline & { stageCalls: Map<StageEntry, CallRow[]> }>();
  const cycleOf = (n: number) => {
    let c = cycles.get(n);
    if (!c) {
      c = {
        cycle: n,
        route: null,
        route_reason: null,
        route_source: null,
        started_at: null,
        calls: [],
        stages: [],
        usage: emptyUsage(),
        stageCalls: new Map(),
      };
      cycles.set(n, c);
    }
    return c;
  };
  const latest = (cycle: number, stage: string) => {
    const c = cycles.get(cycle);
    if (!c) return undefined;
    for (let i = c.stages.length - 1; i >= 0; i--) if (c.stages[i]?.stage === stage) return c.stages[i];
    return undefined;
  };
  let routed = 0; // the cycle of the last ComplexityGateRouted (or stage) event seen
  let current = 0;

  /** A new entry for a stage that starts (or, in a log cut short, only completes) in this cycle. */
  const openStage = (e: { stage: string; phase: StageEntry["phase"]; cycle: number; at: string; seq: number }): StageEntry => {
    const entry: StageEntry = {
      stage: e.stage,
      phase: e.phase,
      cycle: e.cycle,
      status: "running",
      started_at: e.at,
      started_seq: e.seq,
      finished_at: null,
      run: null,
      rounds: [],
      usage: emptyUsage(),
    };
    const c = cycleOf(e.cycle);
    c.stages.push(entry);
    c.stageCalls.set(entry, []);
    return entry;
  };

  for (const e of events) {
    switch (e.type) {
      case "ComplexityGateRouted": {
        const c = cycleOf(e.cycle);
        c.route = e.route;
        c.route_reason = e.reason;
        c.route_source = e.source;
        c.started_at ??= e.at;
        routed = current = e.cycle;
        break;
      }
      case "AdversarialStageStarted": {
        current = Math.max(current, e.cycle);
        const c = cycleOf(e.cycle);
        c.started_at ??= e.at;
        const before = latest(e.cycle, e.stage);
        if (before?.status === "running") before.status = "interrupted"; // a killed run, resumed: the stage starts again
        openStage(e);
        break;
      }
      case "AdversarialStageCompleted": {
        let entry = latest(e.cycle, e.stage);
        // a completion with no start of its own (a log cut short): the stage still shows
        if (!entry || entry.status === "finished") entry = openStage(e);
        entry.status = "finished";
        entry.finished_at = e.at;
        entry.run = e.stage_run;
        break;
      }
      case "OscillationDetected": {
        const entry = latest(current, e.stage);
        if (entry) entry.oscillation_round = e.round;
        break;
      }
      case "AdversarialRetryExhausted": {
        const entry = latest(current, e.stage);
        if (entry) entry.exhausted = true;
        break;
      }
      case "ModelCall": {
        const row = callRow(e, estimate);
        if (e.role === "complexity_gate") {
          const c = cycleOf(routed + 1);
          c.started_at ??= e.at;
          c.calls.push(row);
          break;
        }
        const c = cycleOf(Math.max(current, 1));
        const entry = row.stage ? latest(c.cycle, row.stage) : undefined;
        if (entry && entry.started_seq < row.seq) (c.stageCalls.get(entry) ?? []).push(row);
        else c.calls.push(row);
        break;
      }
      default:
        break;
    }
  }

  // At most one stage of an issue runs at a time (one lease per issue): the last unfinished one, if any runs now.
  const unfinished = [...cycles.values()].flatMap((c) => c.stages).filter((s) => s.status === "running");
  unfinished.sort((a, b) => a.started_seq - b.started_seq);
  unfinished.forEach((s, i) => {
    if (!running || i < unfinished.length - 1) s.status = "interrupted";
  });

  return [...cycles.values()]
    .sort((a, b) => a.cycle - b.cycle)
    .map(({ stageCalls, ...c }) => {
      for (const s of c.stages) {
        const calls = stageCalls.get(s) ?? [];
        s.rounds = roundsOf(calls);
        s.usage = usageOf(calls);
      }
      return { ...c, usage: usageOf([...c.calls, ...[...stageCalls.values()].flat()]) };
    });
}

function roundsOf(calls: readonly CallRow[]): RoundEntry[] {
  const byRound = new Map<number, CallRow[]>();
  for (const c of calls) {
    const n = c.round ?? 0;
    byRound.set(n, [...(byRound.get(n) ?? []), c]);
  }
  return [...byRound.entries()].sort(([a], [b]) => a - b).map(([round, list]) => ({ round, calls: list, usage: usageOf(list) }));
}

/** The current cycle's usage (the last one), for `issue show`'s cost. */
export function currentCycleUsage(cycles: readonly CycleTimeline[], cycle: number) {
  return cycles.find((c) => c.cycle === cycle)?.usage ?? emptyUsage();
}
