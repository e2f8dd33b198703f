/**
 * The smaller faults a real model's run showed (issue 18, item 6), each pinned by what a user sees:
 * the events of a concern that blocks, resolutions from accepted drafts only, the shipped gaps a
 * replan's planner is shown, the criteria writer given only what it can fix, and producer replies
 * that name strangers or skip their Decisions.
 */
import { describe, expect, it } from "vitest";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { agreeable, scriptedWorld, type SeenCall } from "../support/world.js";

const findings = (...f: object[]) => JSON.stringify({ findings: f });
const LOAD_BEARING = ["dissent-load-bearing"];
const block = (c: SeenCall | undefined, kind: string) => readDataBlocks(c?.prompt ?? "").find((b) => b.kind === kind)?.text;
const CRITERIA_1 = ["A user sees the retry succeed", "The import is fast"];
const CRITERIA_2 = ["A user sees the retry succeed", "An import of 10,000 rows finishes within 30 seconds"];

describe("every concern that blocks has its events", () => {
  it("a spec-judge HIGH that the criteria writer fixes in round 2: ConcernBlocked, then ConcernAddressed by the council — not only a count", async () => {
    const w = await scriptedWorld((c) => {
      if (c.role === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: c.n === 0 ? CRITERIA_1 : CRITERIA_2 });
      if (c.role === "spec.judge" && block(c, "under_review")?.includes("is fast"))
        return findings({ evidence: "The import is fast", severity: "HIGH", category: "unobservable", concern: "'Fast' names no number, so no test can fail" });
      return agreeable(c);
    });
    const id = await w.newIssue("Import contacts", "", LOAD_BEARING);
    const r = await w.plan(id);
    expect(r.stages.find((s) => s.phase === "spec")).toMatchObject({ rounds: 2, outcome: "converged", concerns_forwarded: 0 });
    const events = await w.eventsOf(id);
    const blocked = events.filter((e) => e.type === "ConcernBlocked");
    expect(blocked).toEqual([
      expect.objectContaining({ stage: "spec_judge", round: 1, concern: expect.objectContaining({ id: expect.stringMatching(/^SPEC-JUDGE-\d{3}$/) }) }),
    ]);
    const id0 = blocked[0]?.type === "ConcernBlocked" ? blocked[0].concern.id : "";
    const addressed = events.filter((e) => e.type === "ConcernAddressed");
    expect(addressed).toEqual([expect.objectContaining({ resolution: expect.objectContaining({ concern_id: id0, resolved_by: "council" }) })]);
    expect(r.pending_concerns).toEqual([]);
  });
});

describe("resolutions come only from accepted drafts", () => {
  it("a planner's claim in a draft the council rejected settles nothing; the concern goes on", async () => {
    const w = await scriptedWorld((c) => {
      if (c.role === "shape.user_advocate")
        return findings({ severity: "MEDIUM", category: "user_impact", concern: "Nobody is told when a retry finally fails" });
      if (c.role === "planner") {
        const id = JSON.parse(block(c, "pending_concerns") ?? "[]")[0]?.id as string;
        // Round 1 claims the MEDIUM (and is rejected); round 2 no longer mentions it.
        return c.n === 0
          ? `# Plan v1\n\nShip on Friday without tests.\n\n## Decisions\n- ${id}: users are emailed\n\n\`\`\`json\n${JSON.stringify({ addressed: [{ concern_id: id, resolution_kind: "addressed-in-code", note: "users are emailed" }] })}\n\`\`\``
          : "# Plan v2\n\nShip with tests.\n\n## Decisions\n- none";
      }
      if (c.role === "plan.tester" && block(c, "under_review")?.includes("Plan v1"))
        return findings({ evidence: "Ship on Friday without tests.", severity: "CRITICAL", category: "test_gap", concern: "Nothing tests the retry path" });
      return agreeable(c);
    });
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    const r = await w.plan(id);
    expect(r.stages.find((s) => s.phase === "plan")).toMatchObject({ rounds: 2, outcome: "converged" });
    const events = await w.eventsOf(id);
    const byPlanner = events.filter((e) => e.type === "ConcernAddressed" && e.resolution.resolved_by === "planner");
    expect(byPlanner).toEqual([]);
    expect(r.pending_concerns.map((c) => c.concern)).toContain("Nobody is told when a retry finally fails");
  });
});

describe("the planner of a replan sees the issue's own shipped gaps", () => {
  it("after issue merged and a new cycle, the planner's request lists the gap it shipped with", async () => {
    const GAP = "Retrying payment writes can charge a customer twice";
    const w = await scriptedWorld((c) => {
      if (c.role === "plan_reviewer" && w.callsOf("plan_reviewer").length === 1)
        return findings({ evidence: "Artifact written by planner", severity: "HIGH", dimension: "correctness", concern: GAP });
      return agreeable(c);
    });
    const id = await w.newIssue("Retry payment calls", "", LOAD_BEARING);
    expect((await w.plan(id)).status).toBe("needs_replan");
    const { mergeIssue } = await import("../../src/carryover/merge.js");
    await mergeIssue(id, 12, { store: w.store, tracker: w.tracker });
    await w.tracker.setLabels(id, { add: ["dissent-find"], remove: ["dissent-fixed"] });
    await w.plan(id);
    const planner = w.callsOf("planner").at(-1);
    expect(block(planner, "shipped_gaps")).toContain(GAP);
    expect(block(planner, "shipped_gaps")).toContain("PR #12");
    expect(block(w.callsOf("planner")[0], "shipped_gaps")).toBeUndefined();
  });
});

describe("the criteria writer is given only what it can fix", () => {
  it("plan-level pending concerns go on to the reviewer with their text; the writer is never asked to answer them", async () => {
    const PLAN_LEVEL = "The plan never says how a half-done import is rolled back";
    const w = await scriptedWorld((c) => {
      if (c.role === "plan.risk_skeptic") return findings({ severity: "MEDIUM", category: "rollback", concern: PLAN_LEVEL });
      return agreeable(c);
    });
    const id = await w.newIssue("Import contacts", "", LOAD_BEARING);
    const r = await w.plan(id);
    const writer = w.callsOf("spec.ac_generator");
    expect(writer.every((c) => block(c, "pending_concerns") === undefined)).toBe(true);
    expect(block(w.callsOf("plan_reviewer")[0], "pending_concerns")).toContain(PLAN_LEVEL);
    expect(r.pending_concerns.find((c) => c.concern === PLAN_LEVEL)?.must_address_by).toBe("implement");
  });

  it("a criteria-level MEDIUM goes back to the writer within the stage; the judge's plan_gap HIGH goes to the reviewer, not back to the writer", async () => {
    const GAP = "The plan never says what happens to contacts that already exist";
    const w = await scriptedWorld((c) => {
      if (c.role === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: c.n === 0 ? CRITERIA_1 : CRITERIA_2 });
      if (c.role === "spec.judge") {
        const first = block(c, "under_review")?.includes("is fast");
        return findings(
          ...(first ? [{ evidence: "The import is fast", severity: "MEDIUM", category: "unobservable", concern: "'Fast' names no number" }] : []),
          { evidence: "A user sees the retry succeed", severity: "HIGH", category: "plan_gap", concern: GAP },
        );
      }
      return agreeable(c);
    });
    const id = await w.newIssue("Import contacts", "", LOAD_BEARING);
    const r = await w.plan(id);
    const writer = w.callsOf("spec.ac_generator");
    expect(writer).toHaveLength(2);
    const returned = block(writer[1], "blocking_concerns") ?? "";
    expect(returned).toContain("'Fast' names no number");
    expect(returned).not.toContain(GAP);
    expect(r.stages.find((s) => s.phase === "spec")).toMatchObject({ rounds: 2, outcome: "converged" });
    expect(r.pending_concerns.find((c) => c.concern === GAP)).toMatchObject({ severity: "HIGH", category: "plan_gap", raised_by: "spec.judge" });
    expect(block(w.callsOf("plan_reviewer")[0], "pending_concerns")).toContain(GAP);
  });

  it("the writer's revision request asks for JSON with `addressed`, never for a markdown Decisions section", async () => {
    const w = await scriptedWorld((c) => {
      if (c.role === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: c.n === 0 ? CRITERIA_1 : CRITERIA_2 });
      if (c.role === "spec.judge" && block(c, "under_review")?.includes("is fast"))
        return findings({ evidence: "The import is fast", severity: "HIGH", category: "unobservable", concern: "'Fast' names no number" });
      return agreeable(c);
    });
    await w.plan(await w.newIssue("Import contacts", "", LOAD_BEARING));
    const retry = w.callsOf("spec.ac_generator")[1];
    const asked = `${retry?.system ?? ""}\n${retry?.messages.at(-1)?.text ?? ""}`;
    expect(asked).not.toMatch(/Decisions/);
    expect(retry?.messages.at(-1)?.text).toMatch(/"addressed"/);
  });
});

describe("a producer reply that names strangers or skips its Decisions is a warning line and a count", () => {
  it("unknown concern ids and a missing Decisions section: one warning each, counted in the StageRun", async () => {
    const w = await scriptedWorld((c) => {
      if (c.role === "planner")
        return c.n === 0
          ? "# Plan v1\n\nShip on Friday without tests."
          : `# Plan v2\n\nShip with tests.\n\n\`\`\`json\n${JSON.stringify({ addressed: [{ concern_id: "PLAN-MADE-UP-999", resolution_kind: "addressed-in-code", note: "x" }] })}\n\`\`\``;
      if (c.role === "plan.tester" && block(c, "under_review")?.includes("Plan v1"))
        return findings({ evidence: "Ship on Friday without tests.", severity: "CRITICAL", category: "test_gap", concern: "Nothing tests the retry path" });
      return agreeable(c);
    });
    const r = await w.plan(await w.newIssue("Add retries", "", LOAD_BEARING));
    expect(r.stages.find((s) => s.phase === "plan")).toMatchObject({ rounds: 2, producer_warnings: 2 });
    expect(w.warnings.filter((m) => m.startsWith("planner "))).toEqual([
      "planner named concern ids it was not given in plan_council round 2 (PLAN-MADE-UP-999): ignored",
      'planner answered 1 concern in plan_council round 2 with no "## Decisions" section',
    ]);
  });
});
