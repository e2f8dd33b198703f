import { describe, expect, it } from "vitest";
import { finish, type FinishEnv } from "../../src/adversarial/loop-finish.js";
import { startState, type LoopState } from "../../src/adversarial/loop-state.js";
import { StageRecord, type Concern } from "../../src/contracts/concern.js";
import { DissentEvent } from "../../src/contracts/events.js";

/**
 * The pure end of a stage (DESIGN: a rule engine with a pure core): `finish` is called directly on
 * a state, with no model, loop or store — what is forwarded and why, the review-gap concerns, the
 * stage's own resolutions and the StageRecord.
 */
const NOW = "2026-11-26T12:00:00.000Z";
const env = (over: Partial<FinishEnv> = {}): FinishEnv => ({
  issueId: "7",
  cycle: 2,
  critics: ["plan.builder", "plan.tester"],
  usage: { calls: 6, inputTokens: 60, outputTokens: 30, cachedInputTokens: 0, cacheWriteTokens: 0, costUsd: 0.01 },
  durationMs: 1234.4,
  idFor: (fp, role) => `PLAN-${role.toUpperCase()}-${fp.slice(0, 4)}`,
  now: () => NOW,
  ...over,
});
const concern = (id: string, severity: Concern["severity"] = "HIGH", over: Partial<Concern> = {}): Concern => ({
  id,
  phase: "plan",
  stage: "plan_council",
  raised_by: "plan.builder",
  severity,
  category: "risk",
  concern: `concern ${id}`,
  evidence: "",
  must_address_by: "spec",
  human_required: false,
  fingerprint: `fp-${id}`,
  raised_at: NOW,
  ...over,
});
function state(over: Partial<LoopState<string>> = {}): LoopState<string> {
  return {
    ...startState<string>({ stage: "plan_council", phase: "plan", mustAddressBy: "spec" }),
    round: 2,
    artifact: "v2",
    votedOnArtifact: true,
    votedRounds: 2,
    ...over,
  };
}
const reasons = (events: ReturnType<typeof finish>["events"]) => events.flatMap((e) => (e.type === "ConcernForwarded" ? [[e.concern.id, e.reason]] : []));

describe("finish(state): the end of a stage as a pure function", () => {
  it("converged: the last round's advice goes on as advisory; the concern that blocked round 1 is resolved by the council, its note saying what the council did (not the producer's word)", () => {
    const blocked = concern("B1");
    const s = state({
      outcome: "converged",
      advisory: [concern("A1", "MEDIUM")],
      blocked: new Map([["B1", { concern: blocked, round: 1 }]]),
      addressed: [
        { round: 1, items: [] },
        { round: 2, items: [{ concern_id: "B1", resolution_kind: "addressed-in-test", note: "step 4 now has a test" }] },
      ],
      raised: new Set(["fp-A1", "fp-B1"]),
      counts: { criticFailures: 1, ungrounded: 2, invalid: 3, secondOpinions: 4, secondOpinionsSkipped: 5, producerWarnings: 6 },
    });
    const { result, events } = finish(s, env());
    expect(result.forwarded.map((c) => c.id)).toEqual(["A1"]);
    expect(reasons(events)).toEqual([["A1", "advisory"]]);
    expect(result.resolved).toEqual(["B1"]);
    const resolution = events.find((e) => e.type === "ConcernAddressed");
    expect(resolution).toEqual({
      type: "ConcernAddressed",
      issue_id: "7",
      resolution: {
        concern_id: "B1",
        fingerprint: "fp-B1",
        resolution_kind: "addressed-in-test",
        note: "settled by council: no longer raised against the final draft (round 2); it blocked round 1",
        resolved_by: "council",
        resolved_at: NOW,
      },
    });
    expect(result.addressed).toEqual([{ concern_id: "B1", resolution_kind: "addressed-in-test", note: "step 4 now has a test" }]);
    expect(result.stageRun).toEqual({
      stage: "plan_council",
      phase: "plan",
      rounds: 2,
      retries: 1,
      outcome: "converged",
      concerns_raised: 2,
      concerns_forwarded: 1,
      duration_ms: 1234,
      calls: 6,
      critic_failures: 1,
      ungrounded_findings: 2,
      invalid_findings: 3,
      input_tokens: 60,
      output_tokens: 30,
      cached_input_tokens: 0,
      cost_usd: 0.01,
      second_opinions: 4,
      second_opinions_skipped: 5,
      producer_warnings: 6,
      cycle: 2,
    });
    expect(StageRecord.parse(result.stageRun)).toEqual(result.stageRun);
    for (const e of events) expect(DissentEvent.safeParse({ ...e, at: NOW }).success, e.type).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "AdversarialStageCompleted", stage_run: result.stageRun });
  });

  it("no outcome yet means exhausted: the unresolved blocking concerns go on with reason exhausted, after an AdversarialRetryExhausted event; the rejected draft settles nothing", () => {
    const s = state({
      round: 4,
      blocking: [concern("B4")],
      advisory: [concern("A4", "LOW"), concern("B4-again", "MEDIUM", { fingerprint: "fp-B4" })],
      addressed: [{ round: 4, items: [{ concern_id: "P1", resolution_kind: "trivial", note: "done" }] }],
    });
    const { result, events } = finish(s, env());
    expect(result.stageRun.outcome).toBe("exhausted");
    expect(events[0]).toEqual({ type: "AdversarialRetryExhausted", issue_id: "7", stage: "plan_council", phase: "plan", rounds: 4, unresolved: ["B4"] });
    // A finding with a blocking concern's fingerprint is that concern: forwarded once.
    expect(reasons(events)).toEqual([
      ["B4", "exhausted"],
      ["A4", "advisory"],
    ]);
    expect(result.addressed).toEqual([]);
  });

  it("budget before any vote: one HIGH review_unavailable, so an unreviewed artifact never reads as reviewed", () => {
    const s = state({ outcome: "budget", round: 0, votedRounds: 0, votedOnArtifact: false, artifact: undefined });
    const { result, events } = finish(s, env());
    expect(result.forwarded).toEqual([
      expect.objectContaining({ severity: "HIGH", category: "review_unavailable", raised_by: "council", must_address_by: "spec" }),
    ]);
    expect(reasons(events)).toEqual([[result.forwarded[0]?.id, "budget"]]);
    expect(result.stageRun).toMatchObject({ rounds: 0, retries: 0, concerns_raised: 1, concerns_forwarded: 1 });
  });

  it("crashed: one HIGH review_unavailable naming the last error; nothing is resolved on an artifact nobody voted on", () => {
    const s = state({
      outcome: "crashed",
      round: 4,
      allFailedInARow: 3,
      lastCriticError: "plan.tester: timed out",
      votedOnArtifact: false,
      blocking: [concern("B1")],
      blocked: new Map([["B0", { concern: concern("B0"), round: 1 }]]),
      failedRounds: new Map([
        ["plan.builder", 4],
        ["plan.tester", 4],
      ]),
    });
    const { result, events } = finish(s, env());
    const gap = result.forwarded.find((c) => c.category === "review_unavailable");
    expect(gap).toMatchObject({ severity: "HIGH", evidence: "last error: plan.tester: timed out" });
    expect(result.resolved).toEqual([]);
    expect(reasons(events)).toEqual([
      [gap?.id, "crashed"],
      ["B1", "crashed"],
    ]);
  });

  it("a critic that failed in every round it was asked adds one MEDIUM review_incomplete naming it (when the others answered)", () => {
    const s = state({ outcome: "converged", failedRounds: new Map([["plan.tester", 2]]) });
    const { result, events } = finish(s, env());
    expect(result.forwarded).toEqual([expect.objectContaining({ severity: "MEDIUM", category: "review_incomplete", raised_by: "plan.tester" })]);
    expect(reasons(events)).toEqual([[result.forwarded[0]?.id, "advisory"]]);
  });

  it("is pure: the same state gives the same result and events, and the state is left as it was", () => {
    const s = state({ outcome: "oscillation", blocking: [concern("B1")], blocked: new Map([["B1", { concern: concern("B1"), round: 2 }]]) });
    const before = JSON.stringify({ ...s, blocked: [...s.blocked], raised: [...s.raised] });
    const a = finish(s, env());
    const b = finish(s, env());
    expect(a).toEqual(b);
    expect(JSON.stringify({ ...s, blocked: [...s.blocked], raised: [...s.raised] })).toBe(before);
    expect(s.outcome).toBe("oscillation");
  });
});
