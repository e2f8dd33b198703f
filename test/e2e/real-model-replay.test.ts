/**
 * next-auth #4625 planned again through the built CLI, every role answered with what a real frontier
 * model wrote for it (test/fixtures/real-model; matched by role and round: a role asked more often
 * than it was recorded gets its last reply again, as a model that stands by its answer). Only the
 * verifier is new: it confirms a finding whose quote it finds in the artifact. With r2's tally the
 * councils never blocked; now the two HIGHs that should have blocked do, at their stages.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import type { PlanJson } from "../support/pipeline-e2e.js";
import { pipelineWorld, type PipelineWorld } from "../support/pipeline-e2e.js";
import { recordedRun, repliesByRole } from "../support/real-model.js";

vi.setConfig({ testTimeout: 120_000 });

let w: PipelineWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

interface Concern {
  id: string;
  raised_by: string;
  severity: string;
  concern: string;
  second_opinion?: { verdict: string; by: string };
}
type Plan = Omit<PlanJson, "pending_concerns" | "stages"> & {
  pending_concerns: Concern[];
  stages: (PlanJson["stages"][number] & { second_opinions: number; producer_warnings: number })[];
};

describe("the real model's replies for next-auth #4625, replayed by role and round", () => {
  it("the shape and plan councils block on the lone HIGHs a verifier confirms; the plan goes on with both as must-address HIGHs", async () => {
    const run = recordedRun();
    const replies = repliesByRole(run);
    const issue = run[0]?.blocks.find((b) => b.kind === "issue")?.text ?? "";
    const [heading = "", ...body] = issue.split("\n");
    w = await pipelineWorld((model, n, req) => {
      if (model === "verifier") {
        const text = req.body.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
        const finding = JSON.parse(readDataBlocks(text).find((b) => b.kind === "finding")?.text ?? "{}") as { evidence?: string };
        return { content: JSON.stringify({ evidence: finding.evidence ?? "", reason: "The quoted line does what the finding says.", verdict: "confirm" }) };
      }
      const recorded = replies.get(model);
      if (!recorded?.length) return undefined;
      return { content: recorded[Math.min(n, recorded.length - 1)] as string };
    });
    const id = await w.newIssue(heading.replace(/^#\s*/, ""), body.join("\n").trim(), ["dissent-load-bearing"]);
    const { out, result } = await w.plan(id);
    const plan = out as unknown as Plan;

    const outcome = (phase: string) => plan.stages.find((s) => s.phase === phase);
    expect(outcome("discover")).toMatchObject({ outcome: "converged", rounds: 1, second_opinions: 0 });
    expect(outcome("shape")).toMatchObject({ outcome: "oscillation", rounds: 2, second_opinions: 2 });
    expect(outcome("plan")).toMatchObject({ outcome: "oscillation", rounds: 2, second_opinions: 2 });
    expect(outcome("spec")).toMatchObject({ outcome: "converged", rounds: 2 });
    expect(plan.status).toBe("needs_replan");

    const serious = plan.pending_concerns.filter((c) => c.severity === "HIGH" && c.second_opinion?.verdict === "confirm");
    expect(serious.map((c) => c.raised_by).sort()).toEqual(["assumption_surfacer", "shape.tech_lead"]);
    expect(serious.find((c) => c.raised_by === "shape.tech_lead")?.concern).toMatch(/^The guard only checks that the incoming provider verified the email/);
    // What the real model did that r2 let pass in silence: the shape writer answered a concern with no Decisions
    // section, and the criteria writer answered a plan-level concern it is no longer given (a stranger's id).
    expect(result.stderr).toContain('dissent: warning: shape.writer answered 1 concern in shape_council round 1 with no "## Decisions" section');
    expect(result.stderr).toMatch(
      /dissent: warning: spec\.ac_generator named concern ids it was not given in spec_judge round 1 \(PLAN-TESTER-\d{3}\): ignored/,
    );
    expect(outcome("shape")?.producer_warnings).toBe(2);
    expect(outcome("plan")?.producer_warnings).toBe(0); // the planner's ids are the ones it was given: stable, as in the recording
    // Four second opinions, two questions: round 2 asked the same of the same draft, answered from the cache.
    expect(w.requestsFor("verifier")).toBe(2);
  });
});
