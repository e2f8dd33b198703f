import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fingerprint } from "../../src/adversarial/fingerprint.js";
import { tally, type TallyContext, type Vote } from "../../src/adversarial/tally.js";
import { Concern, type Finding, type Severity } from "../../src/contracts/concern.js";

const NOW = "2026-05-17T12:00:00.000Z";

function ctx(criticCount: number, over: Partial<TallyContext> = {}): TallyContext {
  return {
    stage: "plan_council",
    phase: "plan",
    mustAddressBy: "spec",
    criticCount,
    idFor: (fp, role) => `PLAN-${role.toUpperCase()}-${fp}`,
    now: () => NOW,
    ...over,
  };
}

const f = (severity: Severity, concern: string, extra: Partial<Finding> = {}): Finding => ({ severity, concern, category: "test_strategy", ...extra });
const vote = (role: string, ...findings: Finding[]): Vote => ({ role, findings });

describe("tally, a stage with two or more critics (CONTRACT §4)", () => {
  it("any CRITICAL blocks, even from one critic alone", () => {
    const t = tally([vote("plan.builder", f("CRITICAL", "The migration has no rollback")), vote("plan.tester")], ctx(3));
    expect(t.blocking).toHaveLength(1);
    expect(t.blocking[0]).toMatchObject({ severity: "CRITICAL", concern: "The migration has no rollback", raised_by: "plan.builder" });
    expect(t.advisory).toEqual([]);
  });

  it("a lone HIGH does not block: it is kept as advisory MEDIUM", () => {
    const t = tally([vote("plan.builder", f("HIGH", "Missing test for the retry path.")), vote("plan.tester", f("LOW", "Typo in step 3"))], ctx(3));
    expect(t.blocking).toEqual([]);
    const high = t.advisory.find((c) => c.concern === "Missing test for the retry path.");
    expect(high).toMatchObject({ severity: "MEDIUM", raised_by: "plan.builder" });
  });

  it("a lone HIGH stays advisory MEDIUM when the other critics failed (the rule counts the stage's critics, not the answers)", () => {
    const t = tally([vote("plan.builder", f("HIGH", "Missing test for the retry path."))], ctx(3));
    expect(t.blocking).toEqual([]);
    expect(t.advisory.map((c) => c.severity)).toEqual(["MEDIUM"]);
  });

  it("two critics' matching HIGH (same fingerprint after paraphrase) blocks, once, as HIGH", () => {
    const t = tally(
      [vote("plan.builder", f("HIGH", "Missing test for the retry path.")), vote("plan.tester", f("HIGH", "missing tests for retry path")), vote("plan.risk_skeptic")],
      ctx(3),
    );
    expect(t.blocking).toHaveLength(1);
    expect(t.blocking[0]).toMatchObject({ severity: "HIGH", raised_by: "plan.builder", concern: "Missing test for the retry path." });
    expect(t.blocking[0]?.fingerprint).toBe(fingerprint({ category: "test_strategy", concern: "missing tests for retry path" }));
    expect(t.advisory).toEqual([]);
  });

  it("two critics' HIGHs about different concerns each stay advisory MEDIUM", () => {
    const t = tally([vote("plan.builder", f("HIGH", "Missing test for the retry path.")), vote("plan.tester", f("HIGH", "Missing test for the timeout path."))], ctx(2));
    expect(t.blocking).toEqual([]);
    expect(t.advisory.map((c) => [c.concern, c.severity])).toEqual([
      ["Missing test for the retry path.", "MEDIUM"],
      ["Missing test for the timeout path.", "MEDIUM"],
    ]);
  });

  it("one critic repeating its own HIGH (paraphrased) is not two critics: advisory MEDIUM, one concern", () => {
    const t = tally([vote("plan.builder", f("HIGH", "Missing test for the retry path."), f("HIGH", "missing tests for retry path")), vote("plan.tester")], ctx(2));
    expect(t.blocking).toEqual([]);
    expect(t.advisory).toHaveLength(1);
    expect(t.advisory[0]?.severity).toBe("MEDIUM");
  });

  it("MEDIUM and LOW are advisory with their own severity", () => {
    const t = tally([vote("plan.builder", f("MEDIUM", "Step 4 is vague")), vote("plan.tester", f("LOW", "Typo in step 3"))], ctx(2));
    expect(t.blocking).toEqual([]);
    expect(t.advisory.map((c) => [c.concern, c.severity])).toEqual([
      ["Step 4 is vague", "MEDIUM"],
      ["Typo in step 3", "LOW"],
    ]);
  });

  it("two critics' matching MEDIUM stays advisory MEDIUM", () => {
    const t = tally([vote("a", f("MEDIUM", "Step 4 is vague")), vote("b", f("MEDIUM", "step 4 is VAGUE!"))], ctx(2));
    expect(t.blocking).toEqual([]);
    expect(t.advisory.map((c) => c.severity)).toEqual(["MEDIUM"]);
  });
});

describe("tally, a one-critic stage (spec)", () => {
  const one = (severity: Severity) => tally([vote("spec.judge", f(severity, "AC 3 contradicts AC 1"))], ctx(1, { stage: "spec", phase: "spec", mustAddressBy: "review" }));

  it("a HIGH blocks, as HIGH", () => {
    const t = one("HIGH");
    expect(t.blocking.map((c) => c.severity)).toEqual(["HIGH"]);
    expect(t.advisory).toEqual([]);
  });

  it("a CRITICAL blocks", () => {
    expect(one("CRITICAL").blocking.map((c) => c.severity)).toEqual(["CRITICAL"]);
  });

  it.each(["MEDIUM", "LOW"] as const)("a %s is advisory with its severity", (severity) => {
    const t = one(severity);
    expect(t.blocking).toEqual([]);
    expect(t.advisory.map((c) => c.severity)).toEqual([severity]);
    expect(t.advisory[0]?.must_address_by).toBe("review");
  });
});

describe("tally: the concerns it makes", () => {
  it("fills every Concern field from the finding and the context, and parses as a Concern", () => {
    const t = tally(
      [vote("plan.builder", f("CRITICAL", "The migration has no rollback", { evidence: "step 5 drops a column", category: "correctness" })), vote("plan.tester")],
      ctx(2),
    );
    const c = t.blocking[0] as Concern;
    expect(Concern.parse(c)).toEqual(c);
    expect(c).toEqual({
      id: `PLAN-PLAN.BUILDER-${c.fingerprint}`,
      phase: "plan",
      stage: "plan_council",
      raised_by: "plan.builder",
      severity: "CRITICAL",
      category: "correctness",
      concern: "The migration has no rollback",
      evidence: "step 5 drops a column",
      must_address_by: "spec",
      human_required: false,
      fingerprint: fingerprint({ category: "correctness", concern: "The migration has no rollback" }),
      raised_at: NOW,
    });
  });

  it("asks idFor for the id with the concern's fingerprint and first raiser", () => {
    const asked: [string, string][] = [];
    const t = tally([vote("a", f("HIGH", "x is missing")), vote("b", f("HIGH", "X missing"))], ctx(2, { idFor: (fp, role) => (asked.push([fp, role]), "ID-1") }));
    expect(t.blocking.map((c) => c.id)).toEqual(["ID-1"]);
    expect(asked).toEqual([[fingerprint({ category: "test_strategy", concern: "x is missing" }), "a"]]);
  });

  it("carries human_required, from any critic that set it", () => {
    const lone = tally([vote("a", f("LOW", "Needs a product decision on pricing", { human_required: true })), vote("b")], ctx(2));
    expect(lone.advisory[0]?.human_required).toBe(true);
    const merged = tally(
      [vote("a", f("CRITICAL", "Legal review of the data export is needed")), vote("b", f("CRITICAL", "legal review of data exports needed", { human_required: true }))],
      ctx(2),
    );
    expect(merged.blocking).toHaveLength(1);
    expect(merged.blocking[0]?.human_required).toBe(true);
    const none = tally([vote("a", f("CRITICAL", "x"))], ctx(2));
    expect(none.blocking[0]?.human_required).toBe(false);
  });

  it("uses the finding's dimension as its category when it has none", () => {
    const t = tally([vote("a", { severity: "LOW", concern: "Step 4 is vague", dimension: "scope_creep" }), vote("b")], ctx(2));
    expect(t.advisory[0]?.category).toBe("scope_creep");
  });

  it("stamps every concern with a fingerprint equal to fingerprint() of its own category and concern", () => {
    // Downstream code (the plan reviewer, carryover) finds a pending concern by recomputing
    // fingerprint({category, concern}); a stored fingerprint that differs makes it a stranger.
    const t = tally(
      [
        vote("a", f("LOW", "with category", { category: "security" }), { severity: "LOW", concern: "with a dimension only", dimension: "edge_cases" }, { severity: "LOW", concern: "with neither" }),
        vote("b"),
      ],
      ctx(2),
    );
    expect(t.advisory).toHaveLength(3);
    for (const c of t.advisory) expect(c.fingerprint, c.concern).toBe(fingerprint({ category: c.category, concern: c.concern }));
  });
});

describe("tally: properties over random votes", () => {
  /** Concerns as several paraphrases each: critics may word the same concern differently. */
  const POOL: readonly (readonly string[])[] = [
    ["Missing test for the retry path.", "missing tests for retry path", "The retry path: tests missing"],
    ["No timeout on outbound requests", "outbound requests have no timeouts"],
    ["Migration has no rollback", "no rollback for the migration"],
    ["Step 4 is vague", "step 4 is VAGUE"],
    ["Session tokens are logged", "session token logged!"],
  ];
  const SEVERITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW"] as const;
  const RANK = { CRITICAL: 4, HIGH: 3, MEDIUM: 2, LOW: 1 } as const;
  const ROLES = ["c1", "c2", "c3", "c4"];

  const arbFinding = fc.record({ pick: fc.nat({ max: POOL.length - 1 }), wording: fc.nat(), severity: fc.constantFrom(...SEVERITIES), human: fc.boolean() });
  const arbVotes = fc.integer({ min: 1, max: 4 }).chain((critics) =>
    fc.tuple(
      fc.constant(critics),
      fc.array(fc.array(arbFinding, { maxLength: 4 }), { minLength: critics, maxLength: critics }),
      fc.subarray(ROLES.slice(0, critics)), // critics that answered; the others failed
    ),
  );

  it("applies the council rule to every distinct concern and drops none", () => {
    fc.assert(
      fc.property(arbVotes, ([critics, perCritic, answered]) => {
        const votes: Vote[] = [];
        const expected = new Map<number, { severity: Severity; critics: Set<string>; human: boolean }>();
        perCritic.forEach((findings, i) => {
          const role = ROLES[i] as string;
          if (!answered.includes(role)) return;
          votes.push({
            role,
            findings: findings.map((x) => {
              const words = POOL[x.pick] as readonly string[];
              const e = expected.get(x.pick) ?? { severity: "LOW" as Severity, critics: new Set<string>(), human: false };
              if (RANK[x.severity] > RANK[e.severity]) e.severity = x.severity;
              e.critics.add(role);
              e.human ||= x.human;
              expected.set(x.pick, e);
              return f(x.severity, words[x.wording % words.length] as string, x.human ? { human_required: true } : {});
            }),
          });
        });
        const t = tally(votes, ctx(critics));
        const all = [...t.blocking, ...t.advisory];
        expect(all).toHaveLength(expected.size);
        expect(new Set(all.map((c) => c.fingerprint)).size).toBe(all.length);
        for (const [pick, e] of expected) {
          const fp = fingerprint({ category: "test_strategy", concern: (POOL[pick] as readonly string[])[0] as string });
          const got = all.find((c) => c.fingerprint === fp);
          expect(got).toBeDefined();
          const blocks = critics >= 2 ? e.severity === "CRITICAL" || (e.severity === "HIGH" && e.critics.size >= 2) : e.severity === "CRITICAL" || e.severity === "HIGH";
          const severity = critics >= 2 && e.severity === "HIGH" && e.critics.size < 2 ? "MEDIUM" : e.severity;
          expect(t.blocking.includes(got as Concern)).toBe(blocks);
          expect(got?.severity).toBe(severity);
          expect(got?.human_required).toBe(e.human);
        }
      }),
    );
  });
});
