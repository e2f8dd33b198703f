import { usageOf } from "./usage.js";
import type { CallRow, CycleTimeline, StepRow } from "./types.js";

/** The steps of a cycle that are one call each, by role, in the order `issue plan` runs them. */
const SINGLE: Readonly<Record<string, { phase: string; order: number }>> = {
  complexity_gate: { phase: "gate", order: 0 },
  planner: { phase: "plan", order: 2 }, // a trivial issue's planner (a load-bearing one's is in its stage)
  plan_reviewer: { phase: "review", order: 3 },
};

/**
 * A planning cycle's steps as `issue plan` and `issue show` print them (docs/issue.md "Output"):
 * the ComplexityGate, every stage (an interrupted run of one too, with the calls it spent), a trivial
 * issue's planner, the plan reviewer, and any other call of the cycle — every network call of the
 * cycle in exactly one row, read from its ModelCall events, so the rows add up to the store's count.
 */
export function cycleSteps(cycle: CycleTimeline | undefined): StepRow[] {
  if (!cycle) return [];
  const singles = new Map<string, CallRow[]>();
  for (const c of cycle.calls) singles.set(c.role, [...(singles.get(c.role) ?? []), c]);
  const single = (role: string, calls: readonly CallRow[]): StepRow & { order: number } => ({
    phase: SINGLE[role]?.phase ?? "-",
    stage: role,
    rounds: null,
    outcome: calls.some((c) => c.error === "interrupted") ? "interrupted" : calls.every((c) => c.error) ? "failed" : null,
    concerns_raised: null,
    concerns_forwarded: null,
    usage: usageOf(calls),
    duration_ms: calls.reduce((n, c) => n + c.latency_ms, 0),
    order: SINGLE[role]?.order ?? 4,
  });
  const stages: StepRow[] = cycle.stages.map((s) => ({
    phase: s.phase,
    stage: s.stage,
    rounds: s.run?.rounds ?? (s.rounds.length || null),
    outcome: s.run?.outcome ?? s.status,
    concerns_raised: s.run?.concerns_raised ?? null,
    concerns_forwarded: s.run?.concerns_forwarded ?? null,
    usage: s.usage,
    duration_ms: s.run?.duration_ms ?? null,
  }));
  const ones = [...singles].map(([role, calls]) => single(role, calls)).sort((a, b) => a.order - b.order);
  const strip = ({ order: _o, ...row }: StepRow & { order: number }): StepRow => row;
  return [...ones.filter((r) => r.order === 0).map(strip), ...stages, ...ones.filter((r) => r.order > 0).map(strip)];
}
