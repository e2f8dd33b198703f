/** Event builders shared by the fold and store tests, and an arbitrary of random event sequences. */
import fc from "fast-check";
import type { Concern, ConcernResolution, StageRecord } from "../../src/contracts/concern.js";
import type { DissentEvent, NewEvent } from "../../src/contracts/events.js";

export const AT = "2026-05-17T12:00:00.000Z";

export const concern = (id: string, over: Partial<Concern> = {}): Concern => ({
  id,
  phase: "plan",
  stage: "plan_council",
  raised_by: "plan.tester",
  severity: "HIGH",
  category: "test_strategy",
  concern: `concern ${id}`,
  evidence: "",
  must_address_by: "spec",
  human_required: false,
  fingerprint: `fp-${id}`,
  raised_at: AT,
  ...over,
});

export const stageRun = (stage: string, over: Partial<StageRecord> = {}): StageRecord => ({
  stage,
  phase: "plan",
  rounds: 1,
  retries: 0,
  outcome: "converged",
  concerns_raised: 0,
  concerns_forwarded: 0,
  duration_ms: 3,
  calls: 2,
  critic_failures: 0,
  ungrounded_findings: 0,
  invalid_findings: 0,
  input_tokens: 10,
  output_tokens: 5,
  cached_input_tokens: 0,
  cost_usd: null,
  second_opinions: 0,
  second_opinions_skipped: 0,
  producer_warnings: 0,
  cycle: 1,
  ...over,
});

export const resolution = (concernId: string, over: Partial<ConcernResolution> = {}): ConcernResolution => ({
  concern_id: concernId,
  fingerprint: `fp-${concernId}`,
  resolution_kind: "addressed-in-code",
  note: "done",
  resolved_by: "planner",
  resolved_at: AT,
  ...over,
});

export const forwarded = (issue: string | null, c: Concern): NewEvent => ({ type: "ConcernForwarded", issue_id: issue, concern: c, reason: "advisory" });
export const addressed = (issue: string | null, r: ConcernResolution): NewEvent => ({ type: "ConcernAddressed", issue_id: issue, resolution: r });
export const started = (issue: string | null, stage: string, phase: StageRecord["phase"] = "plan"): NewEvent => ({
  type: "AdversarialStageStarted",
  issue_id: issue,
  stage,
  phase,
  cycle: 1,
});
export const completed = (issue: string | null, run: StageRecord): NewEvent => ({
  type: "AdversarialStageCompleted",
  issue_id: issue,
  stage: run.stage,
  phase: run.phase,
  cycle: run.cycle,
  stage_run: run,
});
export const shipped = (issue: string | null, concerns: Concern[]): NewEvent => ({
  type: "ShippedWithKnownGap",
  issue_id: issue,
  pr: 7,
  concerns,
  wiki_entries: [],
});
export const routed = (issue: string | null, route: "trivial" | "load_bearing"): NewEvent => ({
  type: "ComplexityGateRouted",
  issue_id: issue,
  route,
  reason: "r",
  source: "label",
  cycle: 1,
});
export const label = (issue: string | null, n: number): NewEvent => ({
  type: "LabelChanged",
  issue_id: issue,
  added: [`l${n}`],
  removed: [],
  labels: [`l${n}`],
});
export const modelCall = (issue: string | null, over: { cached?: boolean; cost_usd?: number | null } = {}): NewEvent => ({
  type: "ModelCall",
  issue_id: issue,
  role: "plan.tester",
  provider: "p",
  model: "m",
  route: "primary",
  cached: over.cached ?? false,
  latency_ms: 1,
  input_tokens: 1,
  output_tokens: 1,
  ...(over.cost_usd !== undefined ? { cost_usd: over.cost_usd } : {}),
  request_hash: "h",
  prompt_chars: 1,
});

/** A new event as the log would keep it, stamped (for pure folds). */
export const stamp = (e: NewEvent, at = AT): DissentEvent => ({ ...e, at }) as DissentEvent;

/** Drops what the store adds (`at`, `seq`) so a stored event compares with the event appended. */
export const unstamped = (e: DissentEvent & { seq?: number }): NewEvent => {
  const { at: _at, seq: _seq, ...rest } = e;
  return rest as NewEvent;
};

export const ISSUES = ["i1", "i2", "i3"] as const;
const IDS = ["A", "B", "C", "D"] as const;
const STAGES = ["discover", "shape", "plan_council", "spec"] as const;

const arbIssue = fc.constantFrom<string | null>(...ISSUES, null);

/** Random events of three issues (and none), touching the same few concern ids; claims (settled: false) included. */
export const arbEvent: fc.Arbitrary<NewEvent> = fc.oneof(
  fc
    .record({
      issue: arbIssue,
      id: fc.constantFrom(...IDS),
      severity: fc.constantFrom("CRITICAL", "HIGH", "MEDIUM", "LOW" as const),
      by: fc.constantFrom("spec", "review", "implement" as const),
    })
    .map(({ issue, id, severity, by }) => forwarded(issue, concern(id, { severity, must_address_by: by }))),
  fc
    .record({
      issue: arbIssue,
      id: fc.constantFrom(...IDS, "UNKNOWN"),
      kind: fc.constantFrom("trivial", "deferred", "ignored" as const),
      settled: fc.constantFrom<boolean | undefined>(undefined, true, false),
      by: fc.constantFrom("planner", "human", "plan_reviewer"),
    })
    .map(({ issue, id, kind, settled, by }) =>
      addressed(issue, resolution(id, { resolution_kind: kind, resolved_by: by, ...(settled !== undefined ? { settled } : {}) })),
    ),
  fc.record({ issue: arbIssue, stage: fc.constantFrom(...STAGES) }).map(({ issue, stage }) => started(issue, stage)),
  fc
    .record({ issue: arbIssue, stage: fc.constantFrom(...STAGES), rounds: fc.integer({ min: 0, max: 4 }) })
    .map(({ issue, stage, rounds }) => completed(issue, stageRun(stage, { rounds, retries: Math.max(0, rounds - 1) }))),
  fc.record({ issue: arbIssue, ids: fc.subarray([...IDS]) }).map(({ issue, ids }) =>
    shipped(
      issue,
      ids.map((id) => concern(id)),
    ),
  ),
  fc.record({ issue: arbIssue, route: fc.constantFrom("trivial", "load_bearing" as const) }).map(({ issue, route }) => routed(issue, route)),
  arbIssue.map((issue): NewEvent => ({ type: "LabelChanged", issue_id: issue, added: ["dissent-plan"], removed: [], labels: ["dissent-plan"] })),
  arbIssue.map((issue) => modelCall(issue)),
);

/** An independent model of the fold's rules, per issue. */
export interface Model {
  pending: Map<string, Concern>; // insertion order = pending order
  addressed: string[];
  history: string[];
  route: "trivial" | "load_bearing" | null;
}
export const emptyModel = (): Model => ({ pending: new Map(), addressed: [], history: [], route: null });
export function step(m: Model, e: NewEvent): void {
  if (e.type === "ConcernForwarded") m.pending.set(e.concern.id, e.concern);
  else if (e.type === "ConcernAddressed") {
    // r2: a claim (settled: false) is recorded but leaves the concern pending; so does a deferral
    // anyone but a person makes ("later" answers nothing, docs/issue.md).
    const r = e.resolution;
    const claim = r.settled === false || (r.resolution_kind === "deferred" && r.resolved_by !== "human");
    if (!claim) m.pending.delete(r.concern_id);
    m.addressed.push(e.resolution.concern_id);
  } else if (e.type === "AdversarialStageCompleted") m.history.push(e.stage_run.stage);
  else if (e.type === "ShippedWithKnownGap") m.pending.clear();
  else if (e.type === "ComplexityGateRouted") m.route = e.route;
}
