/**
 * Issue 32, "the local engine on a weak model": `issue plan` marked `ready` a plan that was one `"`
 * with one criterion `w`. An artifact that says nothing — a markdown artifact of fewer than three
 * words, criteria of which one is shorter than three words — is a producer fault: warned, counted in
 * the stage's `producer_warnings`, never reviewed, never converged on; the stage raises a CRITICAL
 * concern for a person, so the plan ends `hitl`, not `ready`.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { emptyCriteria, emptyMarkdown } from "../../src/pipeline/artifact-codecs.js";
import { pipelineWorld, stageOf, type PipelineWorld } from "../support/pipeline-e2e.js";

vi.setConfig({ testTimeout: 120_000 });

let w: PipelineWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("what says nothing", () => {
  it("markdown of fewer than three words, or no letter; criteria none, or one shorter than three words", () => {
    expect(emptyMarkdown('"')).toBe('0 words: `"`');
    expect(emptyMarkdown("")).toBe("0 words");
    expect(emptyMarkdown("Add the guard")).toBeUndefined();
    expect(emptyMarkdown("# Plan\n\n1. Add sum(a, b) in src/sum.js.\n2. Test it.")).toBeUndefined();
    expect(emptyCriteria(["w"])).toBe("criterion 1 is shorter than 3 words: `w`");
    expect(emptyCriteria([])).toBe("no criterion");
    expect(emptyCriteria(["sum(2, 3) returns 5", "Tests pass"])).toBe("criterion 2 is shorter than 3 words: `Tests pass`");
    expect(emptyCriteria(["sum(2, 3) returns 5", "A user sees the retry succeed"])).toBeUndefined();
  });
});

describe("issue plan on a model too weak to write", () => {
  it('a plan that is one `"` and a criterion `w`: producer faults, warned and counted, no critic asked, hitl', async () => {
    w = await pipelineWorld((model) => {
      if (model === "planner") return { content: '"' };
      if (model === "spec.ac_generator") return { content: JSON.stringify({ acceptance_criteria: ["w"] }) };
      return undefined;
    });
    const id = await w.newIssue("Retry failed uploads", "Uploads that fail should be retried.");
    const { out, result } = await w.plan(id);
    expect(out.status).toBe("hitl");
    expect(out.labels).toContain("dissent-hitl");
    const plan = stageOf(out, "plan");
    const spec = stageOf(out, "spec");
    expect(plan).toMatchObject({ outcome: "exhausted", rounds: 1, producer_warnings: 1 });
    expect(spec).toMatchObject({ outcome: "exhausted", rounds: 1, producer_warnings: 1 });
    // Nothing to review: the plan council and the spec judge were never asked.
    for (const critic of ["plan.builder", "plan.tester", "plan.risk_skeptic", "spec.judge"]) expect(w.requestsFor(critic), critic).toBe(0);
    const faults = out.pending_concerns.filter((c) => c.category === "producer_fault");
    expect(faults.map((c) => [c.stage, c.severity])).toEqual([
      ["plan_council", "CRITICAL"],
      ["spec_judge", "CRITICAL"],
    ]);
    const warnings = result.stderr.split("\n").filter((l) => /says? nothing/.test(l));
    expect(warnings).toEqual([
      'dissent: warning: planner wrote a plan that says nothing in plan_council round 1 (0 words: `"`): a producer fault, not reviewed and never accepted — is the model too weak for this role?',
      "dissent: warning: spec.ac_generator wrote acceptance criteria that say nothing in spec_judge round 1 (criterion 1 is shorter than 3 words: `w`): a producer fault, not reviewed and never accepted — is the model too weak for this role?",
    ]);
  });

  it("a trivial issue's plan that says nothing: the same warning and a CRITICAL for a person, hitl", async () => {
    w = await pipelineWorld((model) => (model === "planner" ? { content: '"' } : undefined));
    const id = await w.newIssue("Fix a typo", "teh → the", ["dissent-typo"]);
    const { out, result } = await w.plan(id);
    expect(out.route).toBe("trivial");
    expect(out.status).toBe("hitl");
    expect(out.pending_concerns.filter((c) => c.category === "producer_fault").map((c) => c.severity)).toEqual(["CRITICAL"]);
    expect(result.stderr).toContain("dissent: warning: planner wrote a plan that says nothing in issue 1's plan (0 words: `\"`)");
  });
});
