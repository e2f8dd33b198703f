/**
 * What the record says of a council (issue 30, "Faults a real model met"): a `ConcernAddressed` by
 * the council carried the writer's own note; a round-1 `ConcernBlocked` was stamped at the stage's
 * end; and "addressed-in-code by council" is no way to say what happened to a plan (issue 31 item 10).
 */
import { describe, expect, it } from "vitest";
import { resolutionText } from "../../src/contracts/resolution-text.js";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { agreeable, scriptedWorld, type SeenCall } from "../support/world.js";

const LOAD_BEARING = ["dissent-load-bearing"];
const findings = (...f: object[]) => JSON.stringify({ findings: f });
const block = (c: SeenCall | undefined, kind: string) => readDataBlocks(c?.prompt ?? "").find((b) => b.kind === kind)?.text;

/** The plan council blocks v1 on one CRITICAL and v2 on another; v3 passes. The planner answers each with a note of its own. */
const script = (c: SeenCall) => {
  if (c.role === "planner") {
    const blocking = JSON.parse(block(c, "blocking_concerns") ?? "[]") as { id: string }[];
    const addressed = blocking.map((b) => ({ concern_id: b.id, resolution_kind: "addressed-in-code", note: "the writer's own words" }));
    const tail = addressed.length ? `\n\n## Decisions\n- fixed\n\n\`\`\`json\n${JSON.stringify({ addressed })}\n\`\`\`` : "";
    return `# Plan v${c.n + 1}\n\n${["Ship on Friday without tests.", "Ship with tests, no rollback.", "Ship with tests and a rollback."][c.n] ?? ""}${tail}`;
  }
  if (c.role === "plan.tester") {
    const draft = block(c, "under_review") ?? "";
    if (draft.includes("without tests"))
      return findings({ evidence: "Ship on Friday without tests.", severity: "CRITICAL", category: "test_gap", concern: "Nothing tests the retry path" });
    if (draft.includes("no rollback"))
      return findings({ evidence: "Ship with tests, no rollback.", severity: "CRITICAL", category: "risk", concern: "A bad deploy cannot be undone" });
  }
  return agreeable(c);
};

/** A clock a second a tick: the times the pipeline stamps are then told apart without waiting. */
const ticking = () => {
  let t = 0;
  return () => new Date(Date.UTC(2030, 0, 1) + 1000 * t++).toISOString();
};

describe("a concern the council settled", () => {
  it("its ConcernAddressed says what the council did, not the writer's note; the events line and the dashboard say 'settled by council'", async () => {
    const w = await scriptedWorld(script);
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    const r = await w.plan(id);
    expect(r.stages.find((s) => s.phase === "plan")).toMatchObject({ rounds: 3, outcome: "converged" });
    const byCouncil = (await w.eventsOf(id)).flatMap((e) => (e.type === "ConcernAddressed" && e.resolution.resolved_by === "council" ? [e.resolution] : []));
    expect(byCouncil.map((x) => x.note)).toEqual([
      "settled by council: no longer raised against the final draft (round 3); it blocked round 1",
      "settled by council: no longer raised against the final draft (round 3); it blocked round 2",
    ]);
    for (const x of byCouncil) expect(resolutionText(x)).toBe("settled by council: no longer raised against the final draft");
    expect(resolutionText({ resolution_kind: "addressed-in-code", resolved_by: "planner", settled: false })).toBe("addressed-in-code by planner (claim)");
  });
});

describe("a ConcernBlocked is stamped when its round is tallied", () => {
  it("round 1's is stamped at round 1, round 2's at round 2, both before the stage's end — not all at the commit", async () => {
    const w = await scriptedWorld(script);
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    await w.plan(id, { now: ticking() });
    const events = await w.eventsOf(id);
    const blocked = events.flatMap((e) => (e.type === "ConcernBlocked" ? [e] : []));
    expect(blocked.map((e) => e.round)).toEqual([1, 2]);
    const [r1, r2] = blocked.map((e) => Date.parse(e.at));
    const completed = events.find((e) => e.type === "AdversarialStageCompleted" && e.stage === "plan_council");
    expect((r2 ?? 0) - (r1 ?? 0)).toBeGreaterThanOrEqual(1000); // at least one tick of the pipeline's clock between the two tallies
    expect(Date.parse(completed?.at ?? "")).toBeGreaterThan(r2 ?? 0);
    // Stamped by the pipeline's clock at the tally, right after the concern was raised.
    for (const e of blocked) expect(Date.parse(e.at)).toBeGreaterThanOrEqual(Date.parse(e.concern.raised_at));
  });
});
