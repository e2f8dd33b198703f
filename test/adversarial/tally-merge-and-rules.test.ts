import { describe, expect, it } from "vitest";
import { groundingText } from "../../src/adversarial/grounding.js";
import { tally, type TallyContext, type Vote } from "../../src/adversarial/tally.js";
import type { Finding } from "../../src/contracts/concern.js";
import { STAGES } from "../../src/pipeline/stages.js";

const NOW = "2026-11-26T12:00:00.000Z";
const PLAN = [
  "1. Run the migration on the live table during peak hours.",
  "2. Store the session token in the shared cache user.",
  "3. Email the user when a sign-in method is added.",
].join("\n");
const ctx = (criticCount: number, over: Partial<TallyContext> = {}): TallyContext => ({
  stage: "plan_council",
  phase: "plan",
  mustAddressBy: "spec",
  criticCount,
  artifact: groundingText(PLAN),
  idFor: (fp, role) => `${role}:${fp.slice(0, 6)}`,
  now: () => NOW,
  ...over,
});
const f = (severity: Finding["severity"], concern: string, evidence: string, extra: Partial<Finding> = {}): Finding => ({
  severity,
  concern,
  evidence,
  category: "risk",
  ...extra,
});
const v = (role: string, ...findings: Finding[]): Vote => ({ role, findings });

describe("near-identical concerns of one round merge into one, listing every critic that raised it", () => {
  it("same fingerprint from three critics: one concern, the voice first, the others in council order", () => {
    const t = tally(
      [
        v("plan.builder", f("MEDIUM", "Missing test for the retry path.", "")),
        v("plan.tester", f("HIGH", "missing tests for retry path", "Run the migration on the live table")),
        v("plan.risk_skeptic", f("LOW", "The retry path: tests missing", "")),
      ],
      ctx(3),
    );
    const all = [...t.blocking, ...t.advisory, ...t.lone];
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ raised_by: "plan.tester", also_raised_by: ["plan.builder", "plan.risk_skeptic"], severity: "HIGH" });
    // Only one critic called it HIGH: still a lone HIGH, for the verifier.
    expect(t.lone).toHaveLength(1);
  });

  it("overlapping grounded evidence from two critics merges HIGHs worded differently: one blocking concern, no second opinion needed", () => {
    const t = tally(
      [
        v("plan.builder", f("HIGH", "No maintenance window is planned", "on the live table during peak hours")),
        v("plan.risk_skeptic", f("HIGH", "A live migration at peak can lock the table", "Run the migration on the live table")),
      ],
      ctx(2),
    );
    expect(t.blocking.map((c) => [c.raised_by, c.also_raised_by, c.concern])).toEqual([
      ["plan.builder", ["plan.risk_skeptic"], "No maintenance window is planned"],
    ]);
    expect(t.lone).toEqual([]);
  });

  it("two CRITICALs on the same line are never merged by place alone: each blocks, each keeps its own text", () => {
    const t = tally(
      [
        v("assumption_surfacer", f("CRITICAL", "Assumes the cache user is private", "Store the session token in the shared cache user.")),
        v("plan.risk_skeptic", f("CRITICAL", "Any service with cache access can hijack sessions", "session token in the shared cache user")),
      ],
      ctx(2),
    );
    expect(t.blocking.map((c) => [c.raised_by, c.concern, c.also_raised_by])).toEqual([
      ["assumption_surfacer", "Assumes the cache user is private", undefined],
      ["plan.risk_skeptic", "Any service with cache access can hijack sessions", undefined],
    ]);
  });

  it("one critic's own overlapping findings are not merged: a critic does not corroborate itself", () => {
    const t = tally(
      [v("plan.builder", f("HIGH", "No window", "Run the migration on the live table"), f("HIGH", "Peak hours", "live table during peak hours")), v("b")],
      ctx(2),
    );
    expect(t.lone).toHaveLength(2);
  });
});

describe("known gaps (docs/issue.md)", () => {
  const shown = { knownGaps: ["shared-cache-user-9a8b7c6d"] };
  it("a grounded HIGH naming a known gap the critic was shown blocks, recording the gap; written in brackets, it still counts", () => {
    for (const id of ["shared-cache-user-9a8b7c6d", "[shared-cache-user-9a8b7c6d]"]) {
      const t = tally(
        [
          { role: "assumption_surfacer", findings: [f("HIGH", "Repeats the shared cache user gap", "Store the session token", { known_gap: id })], ...shown },
          v("b"),
        ],
        ctx(2),
      );
      expect(t.blocking.map((c) => c.known_gap)).toEqual(["shared-cache-user-9a8b7c6d"]);
      expect(t.lone).toEqual([]);
    }
  });

  it("an ungrounded HIGH naming a known gap is MEDIUM like any ungrounded finding, and does not block", () => {
    const t = tally(
      [
        {
          role: "assumption_surfacer",
          findings: [f("HIGH", "Repeats the gap", "a line not in the plan at all", { known_gap: "shared-cache-user-9a8b7c6d" })],
          ...shown,
        },
        v("b"),
      ],
      ctx(2),
    );
    expect(t.blocking).toEqual([]);
    expect(t.advisory[0]).toMatchObject({ severity: "MEDIUM", raised_severity: "HIGH", severity_change: "ungrounded" });
    expect(t.advisory[0]?.known_gap).toBeUndefined();
  });

  it("a MEDIUM naming a known gap stays MEDIUM advice", () => {
    const t = tally(
      [
        {
          role: "assumption_surfacer",
          findings: [f("MEDIUM", "Repeats the gap", "Store the session token", { known_gap: "shared-cache-user-9a8b7c6d" })],
          ...shown,
        },
        v("b"),
      ],
      ctx(2),
    );
    expect(t.advisory.map((c) => c.severity)).toEqual(["MEDIUM"]);
  });
});

describe("the spec stage's rules: criteria-level findings go back to the writer, plan-level ones go on to the reviewer", () => {
  const spec = STAGES.find((s) => s.phase === "spec");
  const CRITERIA = "- Uploading a 12 MB file shows 'File too large'.\n- The import is fast.";
  const judge = (...findings: Finding[]) =>
    tally([v("spec.judge", ...findings)], {
      ...ctx(1, { stage: "spec_judge", phase: "spec", mustAddressBy: "review", artifact: groundingText(CRITERIA) }),
      ...(spec?.rules ? { rules: spec.rules } : {}),
    });

  it("the stage table says so", () => {
    expect(spec?.rules).toEqual({ returnAtLeast: "MEDIUM", forwardCategories: ["plan_gap"] });
    expect(spec?.answersPending).toBe(false);
    expect(spec?.categories).toContain("plan_gap");
  });

  it("a MEDIUM criteria-level finding goes back to the criteria writer (it blocks, keeping its severity); a LOW is advice", () => {
    const t = judge(
      f("MEDIUM", "'Fast' is not measurable", "The import is fast.", { category: "unobservable" }),
      f("LOW", "Wording", "", { category: "unobservable" }),
    );
    expect(t.blocking.map((c) => [c.concern, c.severity])).toEqual([["'Fast' is not measurable", "MEDIUM"]]);
    expect(t.advisory.map((c) => c.severity)).toEqual(["LOW"]);
  });

  it("a finding discounted as ungrounded never goes back to the writer", () => {
    const t = judge(f("HIGH", "Criterion 9 contradicts criterion 2", "a criterion nobody wrote", { category: "contradiction" }));
    expect(t.blocking).toEqual([]);
    expect(t.advisory[0]).toMatchObject({ severity: "MEDIUM", severity_change: "ungrounded" });
  });

  it("a plan_gap finding never blocks the criteria loop: it goes on with its severity to the reviewer", () => {
    const t = judge(f("HIGH", "The plan never says what happens to shared documents", "Uploading a 12 MB file", { category: "plan_gap" }));
    expect(t.blocking).toEqual([]);
    expect(t.advisory).toEqual([expect.objectContaining({ severity: "HIGH", category: "plan_gap", must_address_by: "review" })]);
  });
});
