import { describe, expect, it } from "vitest";
import { groundingText } from "../../src/adversarial/grounding.js";
import { AUDIT_CATEGORIES } from "../../src/contracts/audit.js";
import { CATEGORY_MATCHES, categoryMatches } from "../../src/eval/categories.js";
import { revisionDrift } from "../../src/gate/drift.js";
import { gateMetrics } from "../../src/eval/gate-metrics.js";
import { readJudgeAnswer } from "../../src/eval/judge.js";
import { matchItem } from "../../src/eval/match.js";
import { nearness, substringDistance } from "../../src/eval/near-grounding.js";
import type { GateItem } from "../../src/eval/schema.js";
import { holds, scoreGateItem } from "../../src/eval/score-gate.js";
import type { ChallengeResult } from "../../src/gate/challenge.js";

const DRAFT =
  "Chicken breast is safe to eat once it reaches an internal temperature of 145 °F (63 °C), the same as a pork chop.\n\nUse an instant-read meat thermometer in the thickest part of the breast, and let the chicken rest for a few minutes before slicing.";

describe("the category table", () => {
  it("is symmetric and always accepts the category itself", () => {
    for (const a of AUDIT_CATEGORIES) {
      expect(categoryMatches(a, a)).toBe(true);
      for (const b of CATEGORY_MATCHES[a]) expect(categoryMatches(b, a), `${a} ~ ${b}`).toBe(true);
    }
    expect(categoryMatches("factual_risk", "unverifiable_claim")).toBe(true);
    expect(categoryMatches("policy_compliance", "factual_risk")).toBe(false);
    expect(categoryMatches("boundary_violation", "missing_verification")).toBe(false);
  });
});

describe("matching concerns to planted defects", () => {
  const text = groundingText(DRAFT);
  const defect = { category: "factual_risk" as const, evidence: "reaches an internal temperature of 145 °F (63 °C)" };

  it("matches on overlapping evidence (contained, or 12 shared characters) and a compatible category", () => {
    const m = matchItem(
      text,
      [defect],
      [
        { category: "factual_risk", evidence: "145 °F (63 °C), the same as a pork chop" }, // shares "145 °f (63 °c)"
        { category: "unverifiable_claim", evidence: "an internal temperature of 145" }, // contained, lenient category
        { category: "policy_compliance", evidence: "internal temperature of 145 °F" }, // right place, wrong category
        { category: "factual_risk", evidence: "let the chicken rest for a few minutes" }, // wrong place
      ],
    );
    expect(m.foundBy).toEqual([[0, 1]]);
    expect(m.matches).toEqual([[0], [0], [], []]);
    expect(m.located).toEqual([true]);
  });

  it("lets the category decide for a missing_verification with no evidence", () => {
    const m = matchItem(text, [{ category: "missing_verification", evidence: "" }], [{ category: "missing_verification", evidence: "" }]);
    expect(m.foundBy).toEqual([[0]]);
  });

  it("an `anywhere` defect (the whole draft: a count, a length, a missing check) is found by a compatible concern wherever it points", () => {
    const whole = { category: "missing_verification" as const, evidence: "let the chicken rest for a few minutes", anywhere: true };
    const m = matchItem(
      text,
      [whole],
      [
        { category: "missing_verification", evidence: "Chicken breast is safe to eat" }, // elsewhere, same category
        { category: "unverifiable_claim", evidence: "Use an instant-read meat thermometer" }, // elsewhere, lenient category
        { category: "policy_compliance", evidence: "let the chicken rest for a few minutes" }, // at the planted place, wrong category
      ],
    );
    expect(m.foundBy).toEqual([[0, 1]]);
    expect(m.matches).toEqual([[0], [0], []]);
    expect(m.located).toEqual([true]);
    // The same defect without `anywhere`: only its place counts, and neither concern there is compatible.
    expect(matchItem(text, [{ ...whole, anywhere: false }], [{ category: "missing_verification", evidence: "Chicken breast is safe to eat" }]).foundBy).toEqual(
      [[]],
    );
  });

  it("an `anywhere` defect may have no evidence at all, of any category", () => {
    const m = matchItem(
      text,
      [{ category: "boundary_violation", evidence: "", anywhere: true }],
      [{ category: "policy_compliance", evidence: "the same as a pork chop" }],
    );
    expect(m.foundBy).toEqual([[0]]);
  });

  it("counts curly quotes, dashes and case as the same text", () => {
    const m = matchItem(text, [defect], [{ category: "factual_risk", evidence: "\u201CREACHES AN INTERNAL TEMPERATURE OF 145 °F (63 °C)\u201D" }]);
    expect(m.foundBy).toEqual([[0]]);
  });
});

describe("near grounding", () => {
  it("measures the least edit distance to any passage", () => {
    expect(substringDistance("abc", "xxabcxx")).toBe(0);
    expect(substringDistance("abd", "xxabcxx")).toBe(1);
    expect(substringDistance("kitten", "sitting")).toBe(2); // "sittin" vs "kitten": 2 substitutions
    expect(substringDistance("", "abc")).toBe(0);
  });

  it("calls a one-character slip near and a paraphrase far", () => {
    const text = groundingText(DRAFT);
    expect(nearness(text, "reaches an internal temperatre of 145 °F")).toBeGreaterThanOrEqual(0.95);
    expect(nearness(text, "poultry must be cooked until it is hot all the way through")).toBeLessThan(0.8);
    expect(nearness(text, "Chicken breast is safe ... let the chiken rest")).toBeGreaterThan(0.9);
  });
});

describe("revision drift", () => {
  const given = [DRAFT, "What internal temperature should chicken breast reach to be safe?"];

  it("finds numbers, dates, URLs and capitalised names that nothing given supports", () => {
    const rev =
      "Chicken must reach 165 °F (74 °C) according to the USDA and Food Standards Agency guidance of 12 March 2021 (see https://www.fsis.usda.gov/safe). Use a thermometer.";
    const drift = revisionDrift(rev, given);
    expect(drift).toEqual([
      { kind: "url", text: "https://www.fsis.usda.gov/safe" },
      { kind: "date", text: "12 March 2021" },
      { kind: "number", text: "165" },
      { kind: "number", text: "74" },
      { kind: "name", text: "USDA" },
      { kind: "name", text: "Food Standards Agency" },
    ]);
  });

  it("ignores what the draft or prompt already holds, sentence-initial capitals and list numbering", () => {
    const rev =
      "Chicken breast needs checking: the 145 °F figure may be wrong.\n\n1. Use a thermometer.\n2. Rest the Chicken Breast before slicing.\nThe exact safe temperature needs checking against official guidance.";
    expect(revisionDrift(rev, given)).toEqual([]);
  });

  it("reads every date form as one date, never also as its numbers, with or without a four-digit year", () => {
    const rev = "Filed 2024-03-01, checked 1/3/24 and 01.03.24, due March 3rd, 2024, then 3 March 2024, reviewed Sept. 2025; see www.a.example/2024.";
    expect(revisionDrift(rev, ["Filed, checked, due, then reviewed; see."])).toEqual([
      { kind: "url", text: "www.a.example/2024" },
      { kind: "date", text: "2024-03-01" },
      { kind: "date", text: "1/3/24" },
      { kind: "date", text: "01.03.24" },
      { kind: "date", text: "March 3rd, 2024" },
      { kind: "date", text: "3 March 2024" },
      { kind: "date", text: "Sept. 2025" },
    ]);
    expect(revisionDrift("It boils at 100 degrees, not 90.", ["It boils."])).toEqual([
      { kind: "number", text: "100" },
      { kind: "number", text: "90" },
    ]);
  });

  it("reads thousands separators as the same number", () => {
    expect(revisionDrift("It costs 1500 euros.", ["It costs 1,500 euros."])).toEqual([]);
    expect(revisionDrift("It costs 1,600 euros.", ["It costs 1,500 euros."])).toEqual([{ kind: "number", text: "1,600" }]);
  });

  it("a name is mentioned only as whole words: a phrase with an apostrophe matches, a word inside another word does not", () => {
    const src = ["The tower near Eiffelstrasse was built by Gustave Eiffel's firm."];
    expect(revisionDrift("It was Gustave Eiffel's firm that built it, with Eiffelstrasse nearby.", src)).toEqual([]);
    expect(revisionDrift("It was built by Eiffel and Koechlin.", ["It was built near Eiffelstrasse and Koechlinweg."])).toEqual([
      { kind: "name", text: "Eiffel" },
      { kind: "name", text: "Koechlin" },
    ]);
  });
});

describe("judge answers", () => {
  it("reads one word leniently and never guesses", () => {
    expect(readJudgeAnswer("YES")).toBe(true);
    expect(readJudgeAnswer("**No.**")).toBe(false);
    expect(readJudgeAnswer("yes — the plan adds the index")).toBe(true);
    expect(readJudgeAnswer("The answer is NO")).toBe(false);
    expect(readJudgeAnswer("I cannot say yes or no")).toBeNull();
    expect(readJudgeAnswer("Maybe")).toBeNull();
    expect(readJudgeAnswer("")).toBeNull();
  });
});

describe("scoring one item and the metrics of a run (hand-computed)", () => {
  const item: GateItem = {
    id: "t-1",
    prompt: "What internal temperature should chicken breast reach to be safe?",
    draft: DRAFT,
    expected: {
      verdict: "needs_work",
      defects: [{ category: "factual_risk", evidence: "reaches an internal temperature of 145 °F (63 °C)", min_severity: "high" }],
    },
    revision: { must_not_contain: ["145 °F"], must_keep: ["thermometer"] },
  };
  const clean: GateItem = {
    id: "t-2",
    prompt: "Boil?",
    draft: "Water boils at 100 °C at sea level, a little lower at altitude.",
    expected: { verdict: "pass", defects: [] },
  };
  const ok = (over: Partial<ChallengeResult>): ChallengeResult => ({
    status: "ok",
    verdict: "pass",
    concerns: [],
    ungrounded: [],
    invalid: [],
    call: null,
    ...over,
  });
  const usage = { calls: [], model_cost_usd: 0, wall_ms: 1 };

  it("scores found defects, false positives, near misses and the final output", () => {
    const o = scoreGateItem(
      item,
      ok({
        verdict: "needs_work",
        concerns: [
          { category: "factual_risk", severity: "medium", evidence: "145 °F (63 °C)", concern: "too low" },
          { category: "boundary_violation", severity: "low", evidence: "let the chicken rest for a few minutes", concern: "off topic" },
        ],
        ungrounded: [
          { category: "factual_risk", severity: "high", evidence: "the same as a porc chop", concern: "x" },
          { category: "factual_risk", severity: "high", evidence: "pork", concern: "y" },
        ],
      }),
      { status: "revised", text: "Cook chicken breast until a thermometer shows it is done; check the safe temperature with the FSA." },
      usage,
    );
    expect(o.defects[0]).toMatchObject({ found: true, located: true, severity_ok: false, found_by: [0] });
    expect(o.concerns.map((c) => c.matches)).toEqual([[0], []]);
    expect(o.ungrounded.map((u) => [u.reason, u.near])).toEqual([
      ["not_found", true],
      ["too_short", false],
    ]);
    expect(o.revision).toMatchObject({ status: "revised", still_contains: [], lost: [], drift: [{ kind: "name", text: "FSA" }] });
    expect(holds("It reaches 145 \u00B0F.", "145 °f")).toBe(true);
  });

  it("computes the run's rates as ratios of sums", () => {
    const a = scoreGateItem(
      item,
      ok({ verdict: "needs_work", concerns: [{ category: "factual_risk", severity: "high", evidence: "145 °F (63 °C)", concern: "too low" }] }),
      { status: "revised", text: "Use a thermometer; the safe figure needs checking." },
      usage,
    );
    const b = scoreGateItem(
      clean,
      ok({ verdict: "needs_work", concerns: [{ category: "factual_risk", severity: "low", evidence: "a little lower at altitude", concern: "vague" }] }),
      null,
      usage,
    );
    const m = gateMetrics([a, b]);
    expect(m.verdict_accuracy.value).toBe(0.5);
    expect(m.recall).toMatchObject({ value: 1, num: 1, den: 1 });
    expect(m.precision).toMatchObject({ value: 0.5, num: 1, den: 2 });
    expect(m.false_revision_rate).toMatchObject({ value: 1, num: 1, den: 1 });
    expect(m.must_not_contain_pass_rate.value).toBe(1);
    expect(m.revision_drift_rate.value).toBe(0);
    expect(m.per_category.factual_risk?.precision.value).toBe(0.5);
    expect(m.per_category.policy_compliance?.recall.value).toBeNull();
    expect(m.verdict_confusion).toEqual({ pass: { pass: 0, needs_work: 1, failed: 0 }, needs_work: { pass: 0, needs_work: 1, failed: 0 } });
  });
});
