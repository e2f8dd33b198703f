/**
 * The dashboard's read models as pure functions over events: the cycle timeline (a killed stage
 * resumed, the gate's call in the cycle it opens), the concern lineage (claimed vs settled), and the
 * event index (usage by role, each issue's current cycle, wiki uses, runs).
 */
import { describe, expect, it } from "vitest";
import type { Concern } from "../../src/contracts/concern.js";
import { EventIndex, type ServedEvent } from "../../src/read-models.js";
import { severityText } from "../../src/contracts/severity-text.js";
import { concernLineage } from "../../src/read-models/lineage.js";
import { cycleTimelines } from "../../src/read-models/timeline.js";
import { emptyState } from "../../src/store/state.js";

let seq = 0;
const at = () => new Date(Date.UTC(2026, 4, 17, 12, 0, seq)).toISOString();
const ev = <E extends Omit<ServedEvent, "seq" | "at">>(e: E): ServedEvent => ({ ...e, seq: ++seq, at: at() }) as unknown as ServedEvent;
const call = (role: string, extra: Record<string, unknown> = {}) =>
  ev({
    type: "ModelCall",
    issue_id: "7",
    role,
    provider: "p",
    model: role,
    route: "primary",
    cached: false,
    latency_ms: 5,
    input_tokens: 10,
    output_tokens: 2,
    cost_usd: 0.001,
    request_hash: "h",
    prompt_chars: 40,
    ...extra,
  } as never);
const started = (stage: string, phase: string, cycle = 1) => ev({ type: "AdversarialStageStarted", issue_id: "7", stage, phase, cycle } as never);
const routed = (cycle: number) => ev({ type: "ComplexityGateRouted", issue_id: "7", route: "load_bearing", reason: "model", source: "model", cycle } as never);
const run = (stage: string, phase: string, rounds: number) => ({
  stage,
  phase,
  rounds,
  retries: rounds - 1,
  outcome: "converged",
  concerns_raised: 0,
  concerns_forwarded: 0,
  duration_ms: 9,
  calls: 2,
  critic_failures: 0,
  ungrounded_findings: 0,
  invalid_findings: 0,
  input_tokens: 20,
  output_tokens: 4,
  cost_usd: 0.002,
  cycle: 1,
});
const completed = (stage: string, phase: string, rounds = 1) =>
  ev({ type: "AdversarialStageCompleted", issue_id: "7", stage, phase, cycle: 1, stage_run: run(stage, phase, rounds) } as never);

describe("cycleTimelines", () => {
  it("puts the gate's call in the cycle it opens, marks a killed stage interrupted, and the resumed one running", () => {
    seq = 0;
    const events = [
      call("complexity_gate"),
      routed(1),
      started("discovery_council", "discover"),
      call("discover.brief", { stage: "discovery_council", round: 1 }),
      started("discovery_council", "discover"), // killed, resumed
      call("discover.brief", { stage: "discovery_council", round: 1, cached: true }),
      call("assumption_surfacer", { stage: "discovery_council", round: 1, cost_usd: null }),
    ];
    const [c] = cycleTimelines(events, true);
    expect(c?.calls.map((x) => x.role)).toEqual(["complexity_gate"]);
    expect(c?.stages.map((s) => s.status)).toEqual(["interrupted", "running"]);
    expect(c?.stages[1]?.rounds[0]?.calls.map((x) => x.role)).toEqual(["discover.brief", "assumption_surfacer"]);
    expect(c?.stages[1]?.usage).toMatchObject({ calls: 1, cached_calls: 1, unpriced_calls: 1, cost_usd: null });
    expect(c?.usage).toMatchObject({ calls: 3, cost_usd: null, known_usd: 0.002 });
    // Nothing runs now (no transient label): the last unfinished stage was interrupted too.
    expect(cycleTimelines(events, false)[0]?.stages.map((s) => s.status)).toEqual(["interrupted", "interrupted"]);
  });

  it("finishes a stage with its StageRun and opens a second cycle at the next gate call", () => {
    seq = 0;
    const events = [
      routed(1),
      started("spec_judge", "spec"),
      call("spec.judge", { stage: "spec_judge", round: 1 }),
      completed("spec_judge", "spec"),
      call("plan_reviewer"),
      call("complexity_gate"),
      routed(2),
    ];
    const cycles = cycleTimelines(events, false);
    expect(cycles.map((c) => c.cycle)).toEqual([1, 2]);
    expect(cycles[0]?.stages[0]).toMatchObject({ status: "finished", run: { rounds: 1 } });
    expect(cycles[0]?.calls.map((c) => c.role)).toEqual(["plan_reviewer"]);
    expect(cycles[1]?.calls.map((c) => c.role)).toEqual(["complexity_gate"]);
  });
});

describe("concernLineage", () => {
  const concern = (id: string, severity: Concern["severity"]): Concern => ({
    id,
    phase: "plan",
    stage: "plan_council",
    raised_by: "plan.risk_skeptic",
    severity,
    category: "risk",
    concern: `concern ${id}`,
    evidence: "",
    must_address_by: "spec",
    human_required: false,
    fingerprint: `fp-${id}`,
    raised_at: "t",
  });

  it("tells a producer's claim (still pending) from a settlement, and links a wiki entry by fingerprint", () => {
    seq = 0;
    const a = concern("A", "HIGH");
    const b = concern("B", "MEDIUM");
    const events = [
      ev({ type: "ConcernForwarded", issue_id: "7", concern: a, reason: "exhausted" } as never),
      ev({ type: "ConcernForwarded", issue_id: "7", concern: b, reason: "advisory" } as never),
      ev({
        type: "ConcernAddressed",
        issue_id: "7",
        resolution: {
          concern_id: "A",
          fingerprint: "fp-A",
          resolution_kind: "addressed-in-code",
          note: "",
          resolved_by: "planner",
          resolved_at: "t",
          settled: false,
        },
      } as never),
      ev({
        type: "ConcernAddressed",
        issue_id: "7",
        resolution: { concern_id: "B", fingerprint: "fp-B", resolution_kind: "trivial", note: "", resolved_by: "planner", resolved_at: "t" },
      } as never),
    ];
    const state = { ...emptyState(), pending_concerns: [a] };
    const lines = concernLineage("7", events, state, [{ id: "entry-a", title: "A", fingerprint: "fp-A", stale: false }], (id) =>
      id === "entry-a"
        ? [
            { issue_id: "7", at: "t", seq: 1 },
            { issue_id: "9", at: "t", seq: 2 },
          ]
        : [],
    );
    expect(lines.map((l) => [l.id, l.status])).toEqual([
      ["A", "claimed"],
      ["B", "settled"],
    ]);
    expect(lines[0]?.wiki?.id).toBe("entry-a");
    expect(lines[0]?.given_to.map((u) => u.issue_id)).toEqual(["9"]); // not the issue itself
  });

  it("carries what changed a severity and the rounds a concern blocked, as the dashboard shows them (r3)", () => {
    seq = 0;
    const lone = { ...concern("L", "HIGH"), stage: "shape_council", also_raised_by: ["shape.user_advocate"] };
    const confirmed = { ...lone, second_opinion: { verdict: "confirm" as const, reason: "real", by: "verifier" } };
    const refuted = {
      ...concern("R", "MEDIUM"),
      raised_severity: "HIGH" as const,
      severity_change: "refuted" as const,
      second_opinion: { verdict: "refute" as const, reason: "a preference", by: "verifier" },
    };
    const events = [
      ev({ type: "ConcernBlocked", issue_id: "7", stage: "shape_council", round: 1, concern: confirmed } as never),
      ev({ type: "ConcernBlocked", issue_id: "7", stage: "shape_council", round: 2, concern: confirmed } as never),
      ev({ type: "ConcernForwarded", issue_id: "7", concern: confirmed, reason: "oscillation" } as never),
      ev({ type: "ConcernForwarded", issue_id: "7", concern: refuted, reason: "advisory" } as never),
    ];
    const state = { ...emptyState(), pending_concerns: [confirmed, refuted] };
    const lines = concernLineage("7", events, state, [], () => []);
    expect(lines.map((l) => [l.id, l.blocked.map((b) => b.round), l.second_opinion?.verdict, l.severity_change, l.also_raised_by])).toEqual([
      ["L", [1, 2], "confirm", undefined, ["shape.user_advocate"]],
      ["R", [], "refute", "refuted", undefined],
    ]);
    const [first, second] = lines;
    if (!first || !second) throw new Error("two lines expected");
    expect(severityText(second)).toBe("MEDIUM (raised HIGH, refuted: a preference)");
    expect(severityText(first)).toBe("HIGH (confirmed by verifier)");
  });
});

describe("EventIndex", () => {
  it("sums by role and day, keeps each issue's current cycle, the wiki's uses and the runs", () => {
    seq = 0;
    const index = new EventIndex();
    for (const e of [
      call("complexity_gate", { cost_usd: null }),
      routed(1),
      call("assumption_surfacer", { stage: "discovery_council", round: 1, wiki_entries: ["gap-1"] }),
      call("complexity_gate"),
      routed(2),
      call("planner"),
      ev({
        type: "ModelCall",
        issue_id: null,
        run_id: "r1",
        role: "executor",
        provider: "p",
        model: "m",
        route: "primary",
        cached: false,
        latency_ms: 1,
        input_tokens: 3,
        output_tokens: 1,
        cost_usd: 0.5,
        request_hash: "h",
        prompt_chars: 1,
      } as never),
      ev({
        type: "ModelCall",
        issue_id: null,
        run_id: "r1",
        role: "challenger",
        provider: "p",
        model: "m",
        route: "primary",
        cached: false,
        latency_ms: 1,
        input_tokens: 3,
        output_tokens: 1,
        cost_usd: 0.5,
        request_hash: "h",
        prompt_chars: 1,
        error: "down",
      } as never),
    ]) {
      index.apply(e);
      index.apply(e); // twice is harmless
    }
    const stats = index.stats();
    expect(stats.totals).toMatchObject({ calls: 6, unpriced_calls: 1, cost_usd: null, failed_calls: 1 });
    expect(stats.by_role.find((r) => r.key === "executor")?.known_usd).toBe(0.5);
    expect(stats.by_day.map((d) => d.key)).toEqual(["2026-05-17"]);
    expect(index.cycleUsage("7")).toMatchObject({ calls: 2, unpriced_calls: 0, cost_usd: 0.002 }); // cycle 2: its gate and planner
    expect(index.issueUsage("7")).toMatchObject({ calls: 4, unpriced_calls: 1 });
    expect(index.givenTo("gap-1")).toEqual([{ issue_id: "7", at: expect.any(String), seq: 3 }]);
    expect(index.listRuns(10)).toEqual([expect.objectContaining({ run_id: "r1", audit: true, challenger_failed: true, roles: ["executor", "challenger"] })]);
  });
});
