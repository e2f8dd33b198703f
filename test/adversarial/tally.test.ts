import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fingerprint } from "../../src/adversarial/fingerprint.js";
import { groundingText } from "../../src/adversarial/grounding.js";
import { MAX_FINDINGS, tally, type TallyContext, type Vote } from "../../src/adversarial/tally.js";
import { Concern, type Finding, type Severity } from "../../src/contracts/concern.js";

const NOW = "2026-05-17T12:00:00.000Z";
/** The artifact under review: one line per concern the property test draws, and a first line every default finding quotes. */
const LINES = [
  "Step 1 writes the retry loop.",
  "Step 2 calls the payment API.",
  "Step 3 migrates the sessions table.",
  "Step 4 tidies the docs.",
  "Step 5 logs every request.",
  "Step 6 ships it.",
];
const ARTIFACT = LINES.join("\n");

function ctx(criticCount: number, over: Partial<TallyContext> = {}): TallyContext {
  return {
    stage: "plan_council",
    phase: "plan",
    mustAddressBy: "spec",
    criticCount,
    artifact: groundingText(ARTIFACT),
    idFor: (fp, role) => `PLAN-${role.toUpperCase()}-${fp}`,
    now: () => NOW,
    ...over,
  };
}

const f = (severity: Severity, concern: string, extra: Partial<Finding> = {}): Finding => ({
  severity,
  concern,
  category: "test_strategy",
  evidence: LINES[0],
  ...extra,
});
const vote = (role: string, ...findings: Finding[]): Vote => ({ role, findings });

describe("tally, a stage with two or more critics (docs/issue.md)", () => {
  it("any CRITICAL blocks, even from one critic alone", () => {
    const t = tally([vote("plan.builder", f("CRITICAL", "The migration has no rollback")), vote("plan.tester")], ctx(3));
    expect(t.blocking).toHaveLength(1);
    expect(t.blocking[0]).toMatchObject({ severity: "CRITICAL", concern: "The migration has no rollback", raised_by: "plan.builder" });
    expect(t.advisory).toEqual([]);
  });

  it("a lone grounded HIGH neither blocks nor becomes advice by itself: it awaits a second opinion, still HIGH", () => {
    const t = tally([vote("plan.builder", f("HIGH", "Missing test for the retry path.")), vote("plan.tester", f("LOW", "Typo in step 3"))], ctx(3));
    expect(t.blocking).toEqual([]);
    expect(t.lone).toEqual([expect.objectContaining({ severity: "HIGH", raised_by: "plan.builder", concern: "Missing test for the retry path." })]);
    expect(t.lone[0]?.raised_severity).toBeUndefined();
    expect(t.advisory.map((c) => c.concern)).toEqual(["Typo in step 3"]);
  });

  it("a HIGH is lone when the other critics failed (the rule counts the stage's critics, not the answers)", () => {
    const t = tally([vote("plan.builder", f("HIGH", "Missing test for the retry path."))], ctx(3));
    expect(t.blocking).toEqual([]);
    expect(t.lone.map((c) => c.severity)).toEqual(["HIGH"]);
  });

  it("two critics' matching HIGH (same fingerprint after paraphrase) blocks, once, as HIGH", () => {
    const t = tally(
      [
        vote("plan.builder", f("HIGH", "Missing test for the retry path.")),
        vote("plan.tester", f("HIGH", "missing tests for retry path")),
        vote("plan.risk_skeptic"),
      ],
      ctx(3),
    );
    expect(t.blocking).toHaveLength(1);
    expect(t.blocking[0]).toMatchObject({ severity: "HIGH", raised_by: "plan.builder", concern: "Missing test for the retry path." });
    expect(t.blocking[0]?.fingerprint).toBe(fingerprint({ concern: "missing tests for retry path" }));
    expect(t.advisory).toEqual([]);
  });

  it("two critics' HIGHs about different concerns on different lines are two lone HIGHs", () => {
    const t = tally(
      [
        vote("plan.builder", f("HIGH", "Missing test for the retry path.")),
        vote("plan.tester", f("HIGH", "Missing test for the timeout path.", { evidence: LINES[1] })),
      ],
      ctx(2),
    );
    expect(t.blocking).toEqual([]);
    expect(t.advisory).toEqual([]);
    expect(t.lone.map((c) => [c.concern, c.severity, c.raised_by])).toEqual([
      ["Missing test for the retry path.", "HIGH", "plan.builder"],
      ["Missing test for the timeout path.", "HIGH", "plan.tester"],
    ]);
  });

  it("one critic repeating its own HIGH (paraphrased) is not two critics: one lone concern", () => {
    const t = tally(
      [vote("plan.builder", f("HIGH", "Missing test for the retry path."), f("HIGH", "missing tests for retry path")), vote("plan.tester")],
      ctx(2),
    );
    expect(t.blocking).toEqual([]);
    expect(t.lone).toHaveLength(1);
    expect(t.lone[0]?.also_raised_by).toBeUndefined();
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
  const one = (severity: Severity) =>
    tally([vote("spec.judge", f(severity, "AC 3 contradicts AC 1"))], ctx(1, { stage: "spec", phase: "spec", mustAddressBy: "review" }));

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
      [
        vote("plan.builder", f("CRITICAL", "The migration has no rollback", { evidence: "Step 3 migrates the sessions table.", category: "correctness" })),
        vote("plan.tester"),
      ],
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
      evidence: "Step 3 migrates the sessions table.",
      must_address_by: "spec",
      human_required: false,
      fingerprint: fingerprint({ category: "correctness", concern: "The migration has no rollback" }),
      raised_at: NOW,
    });
  });

  it("asks idFor for the id with the concern's fingerprint and first raiser", () => {
    const asked: [string, string][] = [];
    const t = tally(
      [vote("a", f("HIGH", "x is missing")), vote("b", f("HIGH", "X missing"))],
      ctx(2, { idFor: (fp, role) => (asked.push([fp, role]), "ID-1") }),
    );
    expect(t.blocking.map((c) => c.id)).toEqual(["ID-1"]);
    expect(asked).toEqual([[fingerprint({ category: "test_strategy", concern: "x is missing" }), "a"]]);
  });

  it("carries human_required from any critic that set it on a grounded HIGH or CRITICAL, never from a LOW (docs/issue.md)", () => {
    const lone = tally([vote("a", f("LOW", "Needs a product decision on pricing", { human_required: true })), vote("b")], ctx(2));
    expect(lone.advisory[0]?.human_required).toBe(false);
    const merged = tally(
      [
        vote("a", f("CRITICAL", "Legal review of the data export is needed")),
        vote("b", f("CRITICAL", "legal review of data exports needed", { human_required: true })),
      ],
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

  it("stamps every concern with a fingerprint equal to fingerprint() of its own concern text", () => {
    // Downstream code (the plan reviewer, carryover) finds a pending concern by recomputing
    // fingerprint({concern}); a stored fingerprint that differs makes it a stranger.
    const t = tally(
      [
        vote(
          "a",
          f("LOW", "with category", { category: "security" }),
          { severity: "LOW", concern: "with a dimension only", dimension: "edge_cases" },
          { severity: "LOW", concern: "with neither" },
        ),
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
      fc.array(fc.array(arbFinding, { maxLength: MAX_FINDINGS }), { minLength: critics, maxLength: critics }),
      fc.subarray(ROLES.slice(0, critics)), // critics that answered; the others failed
    ),
  );

  it("applies the council rule to every distinct concern and drops none", () => {
    fc.assert(
      fc.property(arbVotes, ([critics, perCritic, answered]) => {
        const votes: Vote[] = [];
        const expected = new Map<number, { severity: Severity; critics: Set<string>; human: boolean }>();
        const serious = (x: Severity) => x === "CRITICAL" || x === "HIGH";
        perCritic.forEach((findings, i) => {
          const role = ROLES[i] as string;
          if (!answered.includes(role)) return;
          votes.push({
            role,
            findings: findings.map((x) => {
              const words = POOL[x.pick] as readonly string[];
              const e = expected.get(x.pick) ?? { severity: "LOW" as Severity, critics: new Set<string>(), human: false };
              if (RANK[x.severity] > RANK[e.severity]) e.severity = x.severity;
              if (serious(x.severity)) e.critics.add(role);
              e.human ||= x.human && serious(x.severity);
              expected.set(x.pick, e);
              // Each concern quotes its own line: corroboration here is by fingerprint only.
              return f(x.severity, words[x.wording % words.length] as string, { evidence: LINES[x.pick], ...(x.human ? { human_required: true } : {}) });
            }),
          });
        });
        const t = tally(votes, ctx(critics));
        const all = [...t.blocking, ...t.advisory, ...t.lone];
        expect(all).toHaveLength(expected.size);
        expect(new Set(all.map((c) => c.fingerprint)).size).toBe(all.length);
        for (const [pick, e] of expected) {
          const fp = fingerprint({ concern: (POOL[pick] as readonly string[])[0] as string });
          const got = all.find((c) => c.fingerprint === fp);
          expect(got).toBeDefined();
          const blocks =
            critics >= 2 ? e.severity === "CRITICAL" || (e.severity === "HIGH" && e.critics.size >= 2) : e.severity === "CRITICAL" || e.severity === "HIGH";
          // A lone HIGH of a council awaits its second opinion, still HIGH (second-opinion.ts settles it).
          const lone = critics >= 2 && e.severity === "HIGH" && e.critics.size < 2;
          expect(t.blocking.includes(got as Concern)).toBe(blocks);
          expect(t.lone.includes(got as Concern)).toBe(lone);
          expect(got?.severity).toBe(e.severity);
          expect(got?.human_required).toBe(e.human);
        }
      }),
    );
  });
});

describe("tally: grounded severity and corroboration (docs/issue.md)", () => {
  it("a CRITICAL or HIGH whose evidence is not in the artifact counts as MEDIUM, keeps raised_severity, and is counted", () => {
    const t = tally([vote("a", f("CRITICAL", "Central premise is unvalidated", { evidence: "a line nobody wrote here" })), vote("b")], ctx(2));
    expect(t.blocking).toEqual([]);
    expect(t.advisory[0]).toMatchObject({ severity: "MEDIUM", raised_severity: "CRITICAL" });
    expect(t.ungrounded).toBe(1);
  });

  it("a HIGH corroborated by another critic's HIGH quoting an overlapping excerpt, in other words, blocks as one concern naming both critics", () => {
    const t = tally(
      [
        vote("a", f("HIGH", "No rollback for the migration", { evidence: "Step 3 migrates the sessions table." })),
        vote("b", f("HIGH", "Sessions move without a backup", { evidence: "migrates the sessions table" })),
      ],
      ctx(2),
    );
    expect(t.blocking.map((c) => [c.severity, c.raised_by, c.also_raised_by, c.concern])).toEqual([["HIGH", "a", ["b"], "No rollback for the migration"]]);
    expect(t.lone).toEqual([]);
  });

  it("HIGHs quoting different lines corroborate nothing: both are lone", () => {
    const t = tally(
      [vote("a", f("HIGH", "No rollback for the migration", { evidence: LINES[2] })), vote("b", f("HIGH", "Every request is logged", { evidence: LINES[4] }))],
      ctx(2),
    );
    expect(t.blocking).toEqual([]);
    expect(t.lone.map((c) => [c.severity, c.raised_by])).toEqual([
      ["HIGH", "a"],
      ["HIGH", "b"],
    ]);
  });

  it("a critic's findings beyond 5 in one round are dropped and counted", () => {
    const many = Array.from({ length: 8 }, (_, i) => f("LOW", `remark number ${["one", "two", "three", "four", "five", "six", "seven", "eight"][i]}`));
    const t = tally([vote("a", ...many), vote("b")], ctx(2));
    expect(t.advisory).toHaveLength(5);
    expect(t.overCap).toBe(3);
  });
});
