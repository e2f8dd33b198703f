import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { callBudget, type IssueBudget } from "../../src/adversarial/budget.js";
import { fingerprint } from "../../src/adversarial/fingerprint.js";
import {
  AdversarialRetryLoop,
  MAX_RETRIES,
  type Critic,
  type LoopContext,
  type Producer,
  type RoundInput,
  type StageSpec,
} from "../../src/adversarial/retry-loop.js";
import { Concern, StageRecord as StageRun, type Finding, type Severity } from "../../src/contracts/concern.js";
import { DissentEvent, type NewEvent } from "../../src/contracts/events.js";
import { ProviderAuthError } from "../../src/errors.js";
import { memoryStore } from "../../src/store/sqlite.js";
import { foldState } from "../../src/store/state.js";

const STAGE: StageSpec = { stage: "plan_council", phase: "plan", mustAddressBy: "spec" };
const NOW = "2026-05-17T12:00:00.000Z";

const f = (severity: Severity, concern: string, extra: Partial<Finding> = {}): Finding => ({ severity, concern, category: "test_strategy", ...extra });

/** A producer that records what it was given and returns `v1`, `v2`, … (or a scripted artifact). */
function scriptedProducer(make: (input: RoundInput<string>) => string = (i) => `v${i.round}`, onCall?: () => void) {
  const inputs: RoundInput<string>[] = [];
  const producer: Producer<string> = async (input) => {
    inputs.push({ ...input, blocking: [...input.blocking] });
    onCall?.();
    return { artifact: make(input) };
  };
  return { producer, inputs };
}

/**
 * A critic answering from a function of (artifact, round), recording what it reviewed. A finding
 * without evidence quotes the whole artifact (as a real critic must, for CRITICAL and HIGH).
 */
function critic(role: string, answer: (artifact: string, round: number) => Finding[] | Error, onCall?: () => void) {
  const seen: { artifact: string; round: number; previous?: readonly Finding[] }[] = [];
  const c: Critic<string> = {
    role,
    async review(artifact, { round, previous }) {
      seen.push({ artifact, round, ...(previous ? { previous } : {}) });
      onCall?.();
      const a = answer(artifact, round);
      if (a instanceof Error) throw a;
      return { findings: a.map((x) => (x.evidence === undefined ? { ...x, evidence: artifact } : x)) };
    },
  };
  return Object.assign(c, { seen });
}
const silent = (role: string) => critic(role, () => []);

/** A LoopContext that records events, with deterministic ids and clock. */
function context(over: Partial<LoopContext> = {}) {
  const events: NewEvent[] = [];
  let seq = 0;
  const ctx: LoopContext = {
    issueId: "issue-1",
    cycle: 1,
    emit: (e) => events.push(e),
    concernId: (_fp, phase, role) => `${phase.toUpperCase()}-${(role.split(".").pop() ?? role).toUpperCase()}-${String(++seq).padStart(3, "0")}`,
    now: () => NOW,
    ...over,
  };
  return { ctx, events };
}

const types = (events: readonly NewEvent[]) => events.map((e) => e.type);
const ofType = <T extends NewEvent["type"]>(events: readonly NewEvent[], type: T) => events.filter((e): e is Extract<NewEvent, { type: T }> => e.type === type);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("AdversarialRetryLoop: convergence", () => {
  it("converges in round 1 when no critic blocks", async () => {
    const { producer, inputs } = scriptedProducer();
    const a = silent("plan.builder");
    const b = silent("plan.tester");
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [a, b]).run(STAGE, ctx);

    expect(inputs).toEqual([{ round: 1, previous: undefined, blocking: [] }]);
    expect(a.seen).toEqual([{ artifact: "v1", round: 1 }]);
    expect(b.seen).toEqual([{ artifact: "v1", round: 1 }]);
    expect(r.artifact).toBe("v1");
    expect(r.stageRun).toMatchObject({
      stage: "plan_council",
      phase: "plan",
      outcome: "converged",
      rounds: 1,
      retries: 0,
      concerns_raised: 0,
      concerns_forwarded: 0,
      cycle: 1,
    });
    expect(r.forwarded).toEqual([]);
    expect(r.unresolved).toEqual([]);
    expect(types(events)).toEqual(["AdversarialStageStarted", "AdversarialStageCompleted"]);
  });

  it("converges in round 2, the producer's second call receiving the blocking concern and its own first artifact", async () => {
    const { producer, inputs } = scriptedProducer((i) =>
      i.blocking.some((c) => /retry path/i.test(c.concern)) ? "plan v2 with a retry-path test" : "plan v1",
    );
    const tester = critic("plan.tester", (artifact) =>
      artifact.includes("retry-path test") ? [] : [f("CRITICAL", "Missing test for the retry path.", { evidence: "plan v1" })],
    );
    const builder = silent("plan.builder");
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [builder, tester]).run(STAGE, ctx);

    expect(inputs).toHaveLength(2);
    expect(inputs[0]).toEqual({ round: 1, previous: undefined, blocking: [] });
    expect(inputs[1]?.round).toBe(2);
    expect(inputs[1]?.previous).toBe("plan v1");
    expect(inputs[1]?.blocking).toHaveLength(1);
    const given = inputs[1]?.blocking[0] as Concern;
    expect(Concern.parse(given)).toEqual(given);
    expect(given).toMatchObject({
      id: "PLAN-TESTER-001",
      phase: "plan",
      stage: "plan_council",
      raised_by: "plan.tester",
      severity: "CRITICAL",
      category: "test_strategy",
      concern: "Missing test for the retry path.",
      evidence: "plan v1",
      must_address_by: "spec",
      fingerprint: fingerprint({ category: "test_strategy", concern: "Missing test for the retry path." }),
    });
    expect(tester.seen.map((s) => s.artifact)).toEqual(["plan v1", "plan v2 with a retry-path test"]);
    expect(r.artifact).toBe("plan v2 with a retry-path test");
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 2, retries: 1, concerns_raised: 1, concerns_forwarded: 0 });
    // The concern was resolved inside the tight loop: nothing goes downstream, and both its blocking
    // and its resolution are on the record (r3: every concern that blocks has its events).
    expect(r.forwarded).toEqual([]);
    expect(r.unresolved).toEqual([]);
    expect(r.resolved).toEqual([given.id]);
    expect(types(events)).toEqual(["AdversarialStageStarted", "ConcernBlocked", "ConcernAddressed", "AdversarialStageCompleted"]);
    expect(ofType(events, "ConcernBlocked")).toEqual([{ type: "ConcernBlocked", issue_id: "issue-1", stage: "plan_council", round: 1, concern: given }]);
    expect(ofType(events, "ConcernAddressed")[0]?.resolution).toMatchObject({
      concern_id: given.id,
      fingerprint: given.fingerprint,
      resolution_kind: "addressed-in-code",
      resolved_by: "council",
    });
  });

  it("reports the `addressed` items of the accepted draft only: a draft the council rejected settles nothing", async () => {
    let n = 0;
    const producer: Producer<string> = async () => {
      n++;
      return { artifact: `v${n}`, addressed: [{ concern_id: `C-${n}`, resolution_kind: "trivial", note: `round ${n}` }] };
    };
    const c = critic("spec.judge", (_a, round) => (round === 1 ? [f("HIGH", "AC 3 contradicts AC 1")] : []));
    const r = await new AdversarialRetryLoop(producer, [c]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, context().ctx);
    expect(r.addressed).toEqual([{ concern_id: "C-2", resolution_kind: "trivial", note: "round 2" }]);
  });

  it("reports no `addressed` items when the stage did not converge (its last draft was rejected)", async () => {
    let n = 0;
    const producer: Producer<string> = async () => {
      n++;
      return { artifact: `v${n}`, addressed: [{ concern_id: `C-${n}`, resolution_kind: "trivial", note: `round ${n}` }] };
    };
    const c = critic("spec.judge", () => [f("HIGH", "AC 3 contradicts AC 1")]);
    const r = await new AdversarialRetryLoop(producer, [c]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, context().ctx);
    expect(r.stageRun.outcome).toBe("oscillation");
    expect(r.addressed).toEqual([]);
  });
});

describe("AdversarialRetryLoop: oscillation", () => {
  it("stops in exactly 2 rounds when the blocking fingerprint set repeats (paraphrased), and forwards it with must_address_by", async () => {
    const { producer, inputs } = scriptedProducer();
    const risk = critic("plan.risk_skeptic", (_a, round) => [
      round === 1 ? f("CRITICAL", "Missing test for the retry path.") : f("CRITICAL", "missing tests for retry path"),
    ]);
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [silent("plan.builder"), risk]).run(STAGE, ctx);

    expect(inputs).toHaveLength(2);
    expect(r.stageRun).toMatchObject({ outcome: "oscillation", rounds: 2, retries: 1, concerns_raised: 1, concerns_forwarded: 1 });
    const fp = fingerprint({ category: "test_strategy", concern: "Missing test for the retry path." });
    const osc = ofType(events, "OscillationDetected");
    expect(osc).toEqual([{ type: "OscillationDetected", issue_id: "issue-1", stage: "plan_council", phase: "plan", round: 2, fingerprints: [fp] }]);
    expect(ofType(events, "AdversarialRetryExhausted")).toEqual([]);

    expect(r.unresolved.map((c) => c.fingerprint)).toEqual([fp]);
    expect(r.forwarded).toHaveLength(1);
    expect(r.forwarded[0]).toMatchObject({ id: "PLAN-RISK_SKEPTIC-001", severity: "CRITICAL", must_address_by: "spec", fingerprint: fp });
    const fw = ofType(events, "ConcernForwarded");
    expect(fw).toHaveLength(1);
    expect(fw[0]?.reason).toBe("oscillation");
    expect(fw[0]?.concern).toEqual(r.forwarded[0]);
    expect(types(events)).toEqual([
      "AdversarialStageStarted",
      "ConcernBlocked",
      "ConcernBlocked",
      "OscillationDetected",
      "ConcernForwarded",
      "AdversarialStageCompleted",
    ]);
  });

  it("compares only with the previous round: A, B, A, B is not oscillation (it exhausts)", async () => {
    const { producer } = scriptedProducer();
    const c = critic("spec.judge", (_a, round) => [f("HIGH", round % 2 ? "AC 3 contradicts AC 1" : "AC 2 is untestable")]);
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [c]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, ctx);
    expect(r.stageRun.outcome).toBe("exhausted");
    expect(r.stageRun.rounds).toBe(4);
    expect(ofType(events, "OscillationDetected")).toEqual([]);
  });

  it("a shrinking blocking set is progress, not oscillation", async () => {
    const { producer } = scriptedProducer();
    const script: string[][] = [["A is missing", "B is missing"], ["A is missing"], []];
    const c = critic("spec.judge", (_a, round) => (script[round - 1] ?? []).map((x) => f("HIGH", x)));
    const r = await new AdversarialRetryLoop(producer, [c]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, context().ctx);
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 3, retries: 2, concerns_raised: 2 });
  });
});

describe("AdversarialRetryLoop: exhaustion", () => {
  it("runs exactly 4 rounds (3 retries) when every round blocks on something new, then forwards what is unresolved", async () => {
    const { producer, inputs } = scriptedProducer();
    const text = (round: number) => `Round ${["one", "two", "three", "four", "five"][round - 1]} problem`;
    const risk = critic("plan.risk_skeptic", (_a, round) => [f("CRITICAL", text(round))]);
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [silent("plan.builder"), risk]).run(STAGE, ctx);

    expect(MAX_RETRIES).toBe(3);
    expect(inputs.map((i) => i.round)).toEqual([1, 2, 3, 4]);
    // Each retry is given the blocking concern of the round before it.
    expect(inputs.map((i) => i.blocking.map((c) => c.concern))).toEqual([[], [text(1)], [text(2)], [text(3)]]);
    expect(inputs.map((i) => i.previous)).toEqual([undefined, "v1", "v2", "v3"]);
    expect(risk.seen.map((s) => s.artifact)).toEqual(["v1", "v2", "v3", "v4"]);
    expect(r.artifact).toBe("v4");
    expect(r.stageRun).toMatchObject({ outcome: "exhausted", rounds: 4, retries: 3, concerns_raised: 4, concerns_forwarded: 1 });

    const last = r.unresolved[0] as Concern;
    expect(r.unresolved.map((c) => c.concern)).toEqual([text(4)]);
    expect(ofType(events, "AdversarialRetryExhausted")).toEqual([
      { type: "AdversarialRetryExhausted", issue_id: "issue-1", stage: "plan_council", phase: "plan", rounds: 4, unresolved: [last.id] },
    ]);
    expect(ofType(events, "OscillationDetected")).toEqual([]);
    expect(r.forwarded).toEqual([last]);
    expect(last.must_address_by).toBe("spec");
    expect(ofType(events, "ConcernForwarded").map((e) => [e.concern.id, e.reason])).toEqual([[last.id, "exhausted"]]);
    // Each round's concern blocked once; the three the council dropped against the final draft are resolved.
    expect(ofType(events, "ConcernBlocked").map((e) => [e.round, e.concern.concern])).toEqual([1, 2, 3, 4].map((n) => [n, text(n)]));
    expect(ofType(events, "ConcernAddressed").map((e) => e.resolution.concern_id)).toEqual(
      ofType(events, "ConcernBlocked")
        .slice(0, 3)
        .map((e) => e.concern.id),
    );
    expect(types(events)).toEqual([
      "AdversarialStageStarted",
      "ConcernBlocked",
      "ConcernBlocked",
      "ConcernBlocked",
      "ConcernBlocked",
      "AdversarialRetryExhausted",
      "ConcernAddressed",
      "ConcernAddressed",
      "ConcernAddressed",
      "ConcernForwarded",
      "AdversarialStageCompleted",
    ]);
  });
});

describe("AdversarialRetryLoop: the council tally inside the loop", () => {
  it("without a verifier, keeps a lone HIGH as MEDIUM (not corroborated, counted as skipped) and forwards it as advisory on convergence", async () => {
    const { producer, inputs } = scriptedProducer();
    const builder = critic("plan.builder", () => [f("HIGH", "Step 4 may race with the cron job", { category: "correctness" })]);
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [builder, silent("plan.tester"), silent("plan.risk_skeptic")]).run(STAGE, ctx);

    expect(inputs).toHaveLength(1);
    expect(r.stageRun).toMatchObject({
      outcome: "converged",
      rounds: 1,
      concerns_raised: 1,
      concerns_forwarded: 1,
      second_opinions: 0,
      second_opinions_skipped: 1,
    });
    expect(r.unresolved).toEqual([]);
    expect(r.forwarded).toHaveLength(1);
    expect(r.forwarded[0]).toMatchObject({
      severity: "MEDIUM",
      raised_severity: "HIGH",
      severity_change: "not_corroborated",
      concern: "Step 4 may race with the cron job",
      raised_by: "plan.builder",
      must_address_by: "spec",
    });
    expect(ofType(events, "ConcernForwarded").map((e) => [e.concern.severity, e.reason])).toEqual([["MEDIUM", "advisory"]]);
  });

  it("forwards the advisories of the last voting round only: advice about a draft since rewritten is stale (docs/issue.md)", async () => {
    const { producer } = scriptedProducer();
    const tester = critic("plan.tester", (_a, round) =>
      round === 1
        ? [f("CRITICAL", "Missing test for the retry path."), f("LOW", "Typo in step 3")]
        : round === 2
          ? [f("CRITICAL", "Migration has no rollback"), f("MEDIUM", "Step 4 is vague"), f("LOW", "typo in step 3!")]
          : [f("MEDIUM", "Step 4 is vague"), f("LOW", "Typo in step 3")],
    );
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [silent("plan.builder"), tester]).run(STAGE, ctx);
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 3, concerns_raised: 4, concerns_forwarded: 2 });
    // The typo was raised in every round (reworded once): it is one concern, forwarded once, from round 3.
    const fp = (concern: string) => fingerprint({ concern });
    expect(r.forwarded.map((c) => [c.fingerprint, c.severity]).sort()).toEqual(
      [
        [fp("Step 4 is vague"), "MEDIUM"],
        [fp("Typo in step 3"), "LOW"],
      ].sort(),
    );
    expect(ofType(events, "ConcernForwarded").every((e) => e.reason === "advisory")).toBe(true);
  });

  it("blocks on two critics' matching HIGH and hands it to the producer as HIGH", async () => {
    const { producer, inputs } = scriptedProducer();
    const builder = critic("plan.builder", (_a, round) => (round === 1 ? [f("HIGH", "No timeout on outbound requests")] : []));
    const tester = critic("plan.tester", (_a, round) => (round === 1 ? [f("HIGH", "outbound requests have no timeouts")] : []));
    const r = await new AdversarialRetryLoop(producer, [builder, tester, silent("plan.risk_skeptic")]).run(STAGE, context().ctx);

    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 2, retries: 1 });
    expect(inputs[1]?.blocking).toHaveLength(1);
    expect(inputs[1]?.blocking[0]).toMatchObject({ severity: "HIGH", concern: "No timeout on outbound requests", raised_by: "plan.builder" });
    expect(r.forwarded).toEqual([]);
  });

  it("in a one-critic stage a HIGH blocks", async () => {
    const { producer, inputs } = scriptedProducer();
    const judge = critic("spec.judge", (_a, round) => (round === 1 ? [f("HIGH", "AC 3 contradicts AC 1")] : []));
    const r = await new AdversarialRetryLoop(producer, [judge]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, context().ctx);
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 2 });
    expect(inputs[1]?.blocking.map((c) => c.severity)).toEqual(["HIGH"]);
  });

  it("keeps the id of a concern stable across rounds of a stage", async () => {
    const { producer } = scriptedProducer();
    const c = critic("spec.judge", (_a, round) => [
      f("HIGH", round === 1 ? "AC 3 contradicts AC 1" : "ac 3 contradicts ac 1"),
      f("LOW", `nit ${["one", "two", "three", "four"][round - 1]}`),
    ]);
    const r = await new AdversarialRetryLoop(producer, [c]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, context().ctx);
    expect(r.stageRun.outcome).toBe("oscillation");
    const ids = r.forwarded.map((x) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(r.unresolved[0]?.id).toBe("SPEC-JUDGE-001");
  });
});

describe("AdversarialRetryLoop: critic failures", () => {
  it("a crashing critic contributes nothing; the others still count", async () => {
    const { producer, inputs } = scriptedProducer();
    const broken = critic("plan.builder", () => new Error("model replied with garbage"));
    const risk = critic("plan.risk_skeptic", (_a, round) =>
      round === 1 ? [f("CRITICAL", "Migration has no rollback")] : [f("HIGH", "Step 4 may race with the cron job")],
    );
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [broken, risk]).run(STAGE, ctx);

    expect(broken.seen).toHaveLength(2);
    expect(inputs[1]?.blocking.map((c) => c.concern)).toEqual(["Migration has no rollback"]);
    // The crashed critic is still one of the stage's two critics: a lone HIGH is advisory MEDIUM.
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 2, critic_failures: 2 });
    // It failed in every round, so its lane went unreviewed: that is forwarded too (docs/issue.md).
    expect(r.forwarded.map((c) => [c.concern, c.severity])).toEqual([
      ["Critic plan.builder failed in every round of plan_council, so its lane was not reviewed", "MEDIUM"],
      ["Step 4 may race with the cron job", "MEDIUM"],
    ]);
    expect(types(events).at(-1)).toBe("AdversarialStageCompleted");
  });

  it("a critic that throws synchronously is a crash too, not an abort", async () => {
    const { producer } = scriptedProducer();
    const sync: Critic<string> = {
      role: "plan.builder",
      review: () => {
        throw new TypeError("cannot read properties of undefined");
      },
    };
    const r = await new AdversarialRetryLoop(producer, [sync, silent("plan.tester")]).run(STAGE, context().ctx);
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 1 });
  });

  it("ends as `crashed` after three rounds in a row in which every critic failed, with exactly one synthetic HIGH concern", async () => {
    const { producer, inputs } = scriptedProducer();
    const a = critic("plan.builder", () => new Error("connection reset"));
    const b = critic("plan.tester", () => new Error("503 from provider"));
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [a, b]).run(STAGE, ctx);

    expect(inputs).toHaveLength(3);
    expect(a.seen).toHaveLength(3);
    expect(r.stageRun).toMatchObject({ outcome: "crashed", rounds: 3, retries: 2, concerns_forwarded: 1 });
    expect(r.forwarded).toHaveLength(1);
    const synthetic = r.forwarded[0] as Concern;
    expect(Concern.parse(synthetic)).toEqual(synthetic);
    expect(synthetic).toMatchObject({ severity: "HIGH", phase: "plan", stage: "plan_council", must_address_by: "spec", human_required: false });
    const fw = ofType(events, "ConcernForwarded");
    expect(fw).toHaveLength(1);
    expect(fw[0]).toMatchObject({ reason: "crashed", concern: synthetic });
    expect(types(events)).toEqual(["AdversarialStageStarted", "ConcernForwarded", "AdversarialStageCompleted"]);
  });

  it("counts a round in which every critic failed as a round", async () => {
    const { producer, inputs } = scriptedProducer();
    const c = critic("spec.judge", (_a, round) => (round <= 2 ? new Error("timeout") : []));
    const r = await new AdversarialRetryLoop(producer, [c]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, context().ctx);
    expect(inputs).toHaveLength(3);
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 3, retries: 2, concerns_forwarded: 0 });
  });

  it("needs the three all-failed rounds to be consecutive", async () => {
    const { producer } = scriptedProducer();
    // fail, fail, blocking, fail: never three in a row, so the budget of rounds runs out instead.
    const c = critic("spec.judge", (_a, round) => (round === 3 ? [f("HIGH", "AC 3 contradicts AC 1")] : new Error("timeout")));
    const r = await new AdversarialRetryLoop(producer, [c]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, context().ctx);
    expect(r.stageRun).toMatchObject({ outcome: "exhausted", rounds: 4 });
    expect(r.forwarded.map((x) => x.concern)).toEqual(["AC 3 contradicts AC 1"]);
  });

  it("aborts the run on an auth error from a critic (the run rejects with the provider's message)", async () => {
    const { producer, inputs } = scriptedProducer();
    const auth = critic("plan.builder", () => new ProviderAuthError("provider 'anthropic' rejected the API key (401)"));
    const { ctx, events } = context();
    const run = new AdversarialRetryLoop(producer, [auth, critic("plan.tester", () => [f("LOW", "nit")])]).run(STAGE, ctx);
    await expect(run).rejects.toThrow("provider 'anthropic' rejected the API key (401)");
    await run.catch((e: unknown) => expect(ProviderAuthError.isInstance(e)).toBe(true));
    expect(inputs).toHaveLength(1);
    expect(ofType(events, "AdversarialStageCompleted")).toEqual([]);
  });

  it("aborts on a quota error on a later round too, even with other critics answering", async () => {
    const { producer, inputs } = scriptedProducer();
    const quota = critic("plan.builder", (_a, round) =>
      round === 2 ? new ProviderAuthError("provider 'openai': insufficient quota (429 insufficient_quota)") : [f("CRITICAL", `problem ${round}`)],
    );
    const run = new AdversarialRetryLoop(producer, [quota, silent("plan.tester")]).run(STAGE, context().ctx);
    await expect(run).rejects.toThrow(/insufficient quota/);
    expect(inputs).toHaveLength(2);
  });

  it("aborts on an auth error from the producer", async () => {
    const producer: Producer<string> = async () => {
      throw new ProviderAuthError("provider 'local' refused the credentials (403)");
    };
    const c = silent("spec.judge");
    await expect(new AdversarialRetryLoop(producer, [c]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, context().ctx)).rejects.toThrow(/403/);
    expect(c.seen).toEqual([]);
  });
});

describe("AdversarialRetryLoop: the call budget is a hard ceiling", () => {
  /** Critics that raise a new CRITICAL every round, so only the budget (or the round limit) stops the loop. */
  function budgeted(budget: IssueBudget, critics: number) {
    const { producer, inputs } = scriptedProducer(undefined, () => budget.take());
    const cs = Array.from({ length: critics }, (_, i) =>
      critic(
        `c${i}`,
        (_a, round) => [f("CRITICAL", `problem ${i} of round ${["one", "two", "three", "four", "five"][round - 1]}`)],
        () => budget.take(),
      ),
    );
    return { loop: new AdversarialRetryLoop(producer, cs), inputs };
  }

  it("never starts a round that could cross it: ends with outcome budget, used() never above max (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 24 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 5 }), async (max, critics, alreadyUsed) => {
        const spent = Math.min(alreadyUsed, max);
        const budget = callBudget(max, spent);
        const { loop, inputs } = budgeted(budget, critics);
        const { ctx, events } = context({
          budget,
          usage: () => ({ calls: budget.used() - spent, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, costUsd: null }),
        });
        const r = await loop.run(STAGE, ctx);

        const perRound = critics + 1;
        const fit = Math.floor((max - spent) / perRound);
        expect(budget.used()).toBeLessThanOrEqual(max);
        expect(r.stageRun.rounds).toBe(Math.min(fit, MAX_RETRIES + 1));
        expect(inputs).toHaveLength(r.stageRun.rounds);
        expect(budget.used()).toBe(spent + r.stageRun.rounds * perRound);
        expect(r.stageRun.calls).toBe(r.stageRun.rounds * perRound);
        expect(r.stageRun.outcome).toBe(fit < MAX_RETRIES + 1 ? "budget" : "exhausted");
        expect(types(events)[0]).toBe("AdversarialStageStarted");
        expect(types(events).at(-1)).toBe("AdversarialStageCompleted");
      }),
      { numRuns: 150 },
    );
  });

  it("with no room for even one round: rounds 0, no artifact, nothing called, and the missing review on the record", async () => {
    const budget = callBudget(2);
    const { loop, inputs } = budgeted(budget, 2);
    const r = await loop.run(STAGE, context({ budget }).ctx);
    expect(r.stageRun).toMatchObject({ outcome: "budget", rounds: 0, retries: 0, concerns_forwarded: 1 });
    expect(r.forwarded).toEqual([expect.objectContaining({ severity: "HIGH", category: "review_unavailable" })]);
    expect(r.artifact).toBeUndefined();
    expect(inputs).toEqual([]);
    expect(budget.used()).toBe(0);
  });

  it("forwards the unresolved blocking concerns when the budget stops the loop", async () => {
    const budget = callBudget(7); // two rounds of producer + 2 critics fit (6 calls), a third does not
    const { loop } = budgeted(budget, 2);
    const { ctx, events } = context({ budget });
    const r = await loop.run(STAGE, ctx);
    expect(r.stageRun).toMatchObject({ outcome: "budget", rounds: 2 });
    expect(budget.used()).toBe(6);
    // Both CRITICALs quote the whole draft: two CRITICALs are never merged by place alone (each blocks on its own).
    expect(r.unresolved.map((c) => c.concern).sort()).toEqual(["problem 0 of round two", "problem 1 of round two"]);
    expect(r.forwarded).toEqual(r.unresolved);
    expect(ofType(events, "ConcernForwarded").map((e) => e.reason)).toEqual(["budget", "budget"]);
    expect(r.forwarded.every((c) => c.must_address_by === "spec")).toBe(true);
  });

  it("is shared across stages: a later stage starts from what earlier ones spent", async () => {
    const budget = callBudget(10);
    const first = budgeted(budget, 1);
    const r1 = await first.loop.run({ stage: "discover", phase: "discover", mustAddressBy: "shape" }, context({ budget }).ctx);
    expect(r1.stageRun).toMatchObject({ outcome: "exhausted", rounds: 4 });
    expect(budget.used()).toBe(8);
    const second = budgeted(budget, 3);
    const r2 = await second.loop.run(STAGE, context({ budget }).ctx);
    expect(r2.stageRun).toMatchObject({ outcome: "budget", rounds: 0 });
    expect(budget.used()).toBe(8);
  });

  it("stops as budget, without crossing the ceiling, when a call inside a round finds the budget spent", async () => {
    // The critics here make two calls each, more than the loop can foresee: take() refuses the one that would cross.
    const budget = callBudget(4);
    const { producer } = scriptedProducer(undefined, () => budget.take());
    const greedy = (role: string) =>
      critic(
        role,
        () => [f("CRITICAL", `problem from ${role}`)],
        () => {
          budget.take();
          budget.take();
        },
      );
    const r = await new AdversarialRetryLoop(producer, [greedy("a"), greedy("b")]).run(STAGE, context({ budget }).ctx);
    expect(r.stageRun.outcome).toBe("budget");
    expect(budget.used()).toBeLessThanOrEqual(budget.max);
  });
});

describe("AdversarialRetryLoop: StageRun metrics are real", () => {
  it("reports calls, tokens and dollars from the usage port (this stage's share)", async () => {
    const usage = { calls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, costUsd: null as number | null };
    const spend = () => {
      usage.calls++;
      usage.inputTokens += 50;
      usage.outputTokens += 5;
    };
    const { producer } = scriptedProducer(undefined, spend);
    const c1 = critic("plan.builder", (_a, round) => (round === 1 ? [f("CRITICAL", "Migration has no rollback")] : []), spend);
    const c2 = critic("plan.tester", () => [f("LOW", "Typo in step 3")], spend);
    const r = await new AdversarialRetryLoop(producer, [c1, c2]).run(STAGE, context({ usage: () => ({ ...usage }) }).ctx);
    expect(r.stageRun).toMatchObject({ rounds: 2, retries: 1, calls: 6, input_tokens: 300, output_tokens: 30, concerns_raised: 2, concerns_forwarded: 1 });
  });

  it("reports zero calls without a usage port", async () => {
    const { producer } = scriptedProducer();
    const r = await new AdversarialRetryLoop(producer, [silent("spec.judge")]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, context().ctx);
    expect(r.stageRun).toMatchObject({ calls: 0, input_tokens: 0, output_tokens: 0 });
  });

  it("measures duration_ms with the clock (not a constant)", async () => {
    const ticks = [1_000, 1_000, 1_000, 1_000];
    let t = 10_000;
    vi.spyOn(performance, "now").mockImplementation(() => {
      t += ticks.shift() ?? 0;
      return t;
    });
    const { producer } = scriptedProducer();
    const r = await new AdversarialRetryLoop(producer, [silent("spec.judge")]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, context().ctx);
    // Whatever the loop reads between start and end, the clock advanced by 1..4 s in between.
    expect(r.stageRun.duration_ms).toBeGreaterThanOrEqual(1_000);
    expect(r.stageRun.duration_ms).toBeLessThanOrEqual(4_000);
    expect(Number.isInteger(r.stageRun.duration_ms)).toBe(true);
  });

  it("every outcome returns a StageRun that parses, equal to the one in AdversarialStageCompleted", async () => {
    const scenarios: [string, Critic<string>[]][] = [
      ["converged", [silent("a"), silent("b")]],
      ["oscillation", [critic("a", () => [f("CRITICAL", "same")]), silent("b")]],
      ["exhausted", [critic("a", (_x, r) => [f("CRITICAL", `new ${["one", "two", "three", "four"][r - 1]}`)]), silent("b")]],
      ["crashed", [critic("a", () => new Error("x")), critic("b", () => new Error("y"))]],
    ];
    for (const [outcome, critics] of scenarios) {
      const { producer } = scriptedProducer();
      const { ctx, events } = context();
      const r = await new AdversarialRetryLoop(producer, critics).run(STAGE, ctx);
      expect(r.stageRun.outcome).toBe(outcome);
      expect(StageRun.parse(r.stageRun)).toEqual(r.stageRun);
      expect(r.stageRun.duration_ms).toBeGreaterThanOrEqual(0);
      expect(r.stageRun.concerns_forwarded).toBe(r.forwarded.length);
      expect(ofType(events, "AdversarialStageCompleted").map((e) => e.stage_run)).toEqual([r.stageRun]);
    }
  });
});

describe("AdversarialRetryLoop: events", () => {
  it("emits Started first and Completed last, each a valid DissentEvent", async () => {
    const { producer } = scriptedProducer();
    const c = critic("spec.judge", (_a, r) => [f("HIGH", `new ${["one", "two", "three", "four"][r - 1]}`), f("LOW", "nit")]);
    const { ctx, events } = context({ issueId: "issue-9", cycle: 2 });
    await new AdversarialRetryLoop(producer, [c]).run({ stage: "spec", phase: "spec", mustAddressBy: "review" }, ctx);
    expect(events[0]).toEqual({ type: "AdversarialStageStarted", issue_id: "issue-9", stage: "spec", phase: "spec", cycle: 2 });
    expect(events.at(-1)?.type).toBe("AdversarialStageCompleted");
    expect(types(events).filter((t) => t === "AdversarialStageStarted" || t === "AdversarialStageCompleted")).toHaveLength(2);
    for (const e of events) {
      expect(e.issue_id).toBe("issue-9");
      expect(() => DissentEvent.parse({ ...e, at: NOW })).not.toThrow();
    }
  });

  it("through the event log, the folded state holds the forwarded concerns and the StageRun", async () => {
    const store = await memoryStore();
    const { producer } = scriptedProducer();
    const risk = critic("plan.risk_skeptic", () => [f("CRITICAL", "Migration has no rollback"), f("LOW", "Typo in step 3")]);
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [silent("plan.builder"), risk]).run(STAGE, ctx);
    await store.append(events);

    const state = await store.state("issue-1");
    expect(state).toEqual(foldState(await store.events({ issueId: "issue-1" })));
    expect(state.phase).toBe("plan");
    expect(state.current_stage).toBeNull();
    expect(state.stage_history).toEqual([r.stageRun]);
    expect(state.pending_concerns).toEqual(r.forwarded);
    expect(state.pending_concerns.map((c) => c.severity).sort()).toEqual(["CRITICAL", "LOW"]);
  });
});

describe("AdversarialRetryLoop: round memory and reservation (docs/issue.md)", () => {
  it("gives each critic its own findings of the previous round, from round 2 on", async () => {
    const { producer } = scriptedProducer();
    const tester = critic("plan.tester", (_a, round) => [f("CRITICAL", `objection ${round}`)]);
    const builder = critic("plan.builder", () => [f("LOW", "nit")]);
    await new AdversarialRetryLoop(producer, [builder, tester]).run(STAGE, context().ctx);
    expect(tester.seen[0]?.previous).toBeUndefined();
    expect(tester.seen[1]?.previous?.map((x) => x.concern)).toEqual(["objection 1"]);
    expect(builder.seen[1]?.previous?.map((x) => x.concern)).toEqual(["nit"]);
  });

  it("never spends the calls reserved for later stages: a round that would leave less is not started", async () => {
    const budget = callBudget(20);
    const { producer, inputs } = scriptedProducer(undefined, () => budget.take()(true));
    const cs = ["c0", "c1"].map((role) =>
      critic(
        role,
        (_a, round) => [f("CRITICAL", `${role} problem ${["one", "two", "three", "four"][round - 1]}`)],
        () => budget.take()(true),
      ),
    );
    const loop = new AdversarialRetryLoop(producer, cs);
    const r = await loop.run(STAGE, context({ budget, reserve: 12 }).ctx);
    // 3 calls a round: rounds 1 and 2 leave 17 and 14; a third would leave 11 < 12.
    expect(inputs).toHaveLength(2);
    expect(r.stageRun.outcome).toBe("budget");
    expect(budget.remaining()).toBe(14);
  });
});
