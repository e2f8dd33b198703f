import { describe, expect, it } from "vitest";
import { runGateEval } from "../../src/eval/run-gate.js";
import { scriptedModel } from "../support/mock-model.js";
import {
  alwaysPass,
  BUNDLED_GATE,
  curlyQuotes,
  flagsEverything,
  followsInjections,
  perfect,
  scriptedCalls,
  scriptedChallenger,
  scriptedReviser,
  typoQuotes,
  type ChallengerScript,
} from "./support.js";

const run = (script: ChallengerScript, reviser = scriptedReviser()) =>
  runGateEval(BUNDLED_GATE, { calls: scriptedCalls({ challenger: scriptedChallenger(script), executor: reviser }) });

describe("eval gate with scripted challengers of known behaviour (the bundled set)", () => {
  it("a perfect challenger scores recall = precision = verdict accuracy = 1 and false revisions 0", async () => {
    const r = await run(perfect);
    const m = r.metrics;
    expect(m.items).toBe(77);
    expect(m.recall.value).toBe(1);
    expect(m.precision.value).toBe(1);
    expect(m.verdict_accuracy.value).toBe(1);
    expect(m.verdict_accuracy.ci).toEqual([1, 1]);
    expect(m.false_revision_rate.value).toBe(0);
    expect(m.grounding_loss.value).toBe(0);
    expect(m.injection_success_rate.value).toBe(0);
    expect(m.severity_agreement.value).toBe(1);
    for (const [cat, c] of Object.entries(m.per_category)) {
      expect(c.recall.value, cat).toBe(1);
      expect(c.precision.value, cat).toBe(1);
      expect(c.defects, cat).toBeGreaterThanOrEqual(8);
    }
    expect(m.failed_call_rate.value).toBe(0);
    // One challenger call per item, one revision per defective item that has revision checks; never a draft.
    const revisable = BUNDLED_GATE.items.filter((i) => i.revision && i.expected.verdict === "needs_work").length;
    expect(m.usage.calls).toBe(77 + revisable);
    expect(r.items.flatMap((o) => o.calls.map((c) => c.role)).filter((x) => x === "executor")).toEqual([]);
    // Removing each defect's passage keeps everything else; some forbidden strings also occur elsewhere in their drafts.
    expect(m.must_not_contain_pass_rate.value).toBeGreaterThan(0.75);
    expect(m.must_keep_pass_rate.value).toBe(1);
    expect(m.verdict_confusion).toEqual({ pass: { pass: 18, needs_work: 0, failed: 0 }, needs_work: { pass: 0, needs_work: 59, failed: 0 } });
  });

  it("a challenger that always passes scores recall 0 and false revisions 0", async () => {
    const m = (await run(alwaysPass)).metrics;
    expect(m.recall.value).toBe(0);
    expect(m.recall.ci).toEqual([0, 0]);
    expect(m.false_revision_rate.value).toBe(0);
    expect(m.precision.value).toBeNull(); // it raised nothing: precision is undefined, not 0 or 1
    expect(m.injection_success_rate.value).toBe(1);
    // Clean drafts are judged right, defective ones wrong (or the reply was a quote of the draft: no verdict).
    expect(m.verdict_accuracy.value).toBeCloseTo(18 / 77, 9);
    expect(m.must_not_contain_pass_rate.value).toBeLessThan(0.1);
  });

  it("a challenger that flags everything scores false revisions 1", async () => {
    const m = (await run(flagsEverything)).metrics;
    expect(m.false_revision_rate.value).toBe(1);
    expect(m.false_revision_rate.ci).toEqual([1, 1]);
    expect(m.verdict_confusion.pass.needs_work).toBe(18);
    expect(m.precision.value).toBeLessThan(0.3);
  });

  it("a challenger quoting with curly quotes, dashes and changed case loses nothing to grounding", async () => {
    const r = await run(curlyQuotes);
    const m = r.metrics;
    expect(m.ungrounded_rate.value).toBe(0);
    expect(m.grounding_loss.value).toBe(0);
    expect(m.recall.value).toBe(1);
    expect(m.precision.value).toBe(1);
    // Its quotes really were changed.
    expect(r.items.flatMap((o) => o.concerns).some((c) => c.evidence.startsWith("\u201C") && c.evidence === c.evidence.toUpperCase())).toBe(true);
  });

  it("a challenger whose quotes are one character off loses them to grounding, and it is measured", async () => {
    const m = (await run(typoQuotes)).metrics;
    expect(m.recall.value).toBe(0);
    expect(m.grounding_loss.value).toBeGreaterThan(0.9);
    expect(m.ungrounded_rate.value).toBe(1);
  });

  it("an injection-following challenger is counted in injection success", async () => {
    const r = await run(followsInjections);
    const m = r.metrics;
    expect(m.injection_items).toBe(7);
    expect(m.injection_success_rate.value).toBe(1);
    expect(m.injection_success_rate.den).toBe(7);
    expect(
      r.items
        .filter((o) => o.injection_succeeded)
        .map((o) => o.id)
        .sort(),
    ).toEqual(
      BUNDLED_GATE.items
        .filter((i) => i.tags?.includes("injection"))
        .map((i) => i.id)
        .sort(),
    );
    // Everything else it does perfectly.
    expect(m.per_category.factual_risk?.precision.value).toBe(1);
    expect(m.verdict_accuracy.value).toBeCloseTo(70 / 77, 9);
  });

  it("a reviser that swaps in new facts shows up as revision drift", async () => {
    const drifting = scriptedReviser(
      (draft) => `${draft}\n\nAccording to the Food Standards Agency (https://example.org/guide), the figure is 74 as of 12 March 2021.`,
    );
    const m = (await run(perfect, drifting)).metrics;
    expect(m.revision_drift_rate.value).toBe(1);
    const honest = (await run(perfect)).metrics;
    expect(honest.revision_drift_rate.value).toBe(0);
  });

  it("a failing challenger is a failed call, never a verdict; a failing reviser keeps the draft", async () => {
    const down = scriptedModel("down", [new Error("connection refused")]);
    const r = await runGateEval(
      { ...BUNDLED_GATE, items: BUNDLED_GATE.items.slice(0, 5) },
      { calls: scriptedCalls({ challenger: down, executor: scriptedReviser() }) },
    );
    expect(r.metrics.failed_call_rate.value).toBe(1);
    expect(r.metrics.verdict_confusion.pass.failed + r.metrics.verdict_confusion.needs_work.failed).toBe(5);
    expect(r.items.every((o) => o.verdict === null && o.error)).toBe(true);

    const r2 = await runGateEval(
      { ...BUNDLED_GATE, items: BUNDLED_GATE.items.filter((i) => i.revision && i.expected.verdict === "needs_work").slice(0, 3) },
      { calls: scriptedCalls({ challenger: scriptedChallenger(perfect), executor: down }) },
    );
    expect(r2.items.map((o) => o.revision?.status)).toEqual(["failed", "failed", "failed"]);
    expect(r2.metrics.usage.failed_calls).toBe(3);
  });

  it("a rerun through the same cache makes no call and gives the same metrics", async () => {
    let calls = 0;
    const counting = scriptedChallenger((item, input) => {
      calls++;
      return perfect(item, input);
    });
    const ctx = scriptedCalls({ challenger: counting, executor: scriptedReviser() });
    const set = { ...BUNDLED_GATE, items: BUNDLED_GATE.items.slice(0, 12) };
    const first = await runGateEval(set, { calls: ctx });
    const made = calls;
    const second = await runGateEval(set, { calls: ctx });
    expect(made).toBe(12);
    expect(calls).toBe(made);
    expect(second.metrics.usage.network_calls).toBe(0);
    const { usage: u1, ...m1 } = first.metrics;
    const { usage: u2, ...m2 } = second.metrics;
    expect(m2).toEqual(m1);
    expect(u2.input_tokens).toBe(u1.input_tokens);
    expect(second.items.map((o) => o.concerns)).toEqual(first.items.map((o) => o.concerns));
  });
});
