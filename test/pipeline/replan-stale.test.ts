/**
 * Replanning (issue 30, "Faults a real model met"): the replanning planner was shown only concerns
 * quoting its previous plan, never the plan; and the reviewer of the new plan was asked to judge a
 * concern whose quoted line exists only in the old one. Now the planner is shown its previous plan
 * (in its own part of the request, after the shared prefix), and such a concern reaches the reviewer
 * marked `evidence_stale` — grounded again when the reviewer quotes the new plan.
 */
import { describe, expect, it } from "vitest";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { agreeable, scriptedWorld, type SeenCall } from "../support/world.js";

const LOAD_BEARING = ["dissent-load-bearing"];
const findings = (...f: object[]) => JSON.stringify({ findings: f });
const blocks = (c: SeenCall | undefined) => readDataBlocks(c?.prompt ?? "");
const block = (c: SeenCall | undefined, kind: string) => blocks(c).find((b) => b.kind === kind)?.text;

const OLD_LINE = "Step 3 links an OAuth account to any user with the same email.";
const NEW_LINE = "Step 3 links an OAuth account only when both emails are verified.";
const HOLE = "Linking by email alone lets an attacker take over an account";

/** Cycle 1's planner writes the old line, every later one the new; the reviewer rejects the old line once. */
function world(reviewer: (c: SeenCall, plan: string) => string | undefined = () => undefined) {
  return scriptedWorld((c) => {
    if (c.role === "planner") {
      const replanning = block(c, "pending_concerns")?.includes(HOLE) ?? false;
      return `# Plan\n\n${replanning ? NEW_LINE : OLD_LINE}\n\nStep 4 ships it.${replanning ? "\n\n## Decisions\n- the hole: step 3 now checks both emails" : ""}`;
    }
    if (c.role === "plan_reviewer") {
      const plan = block(c, "under_review") ?? "";
      if (plan.includes(OLD_LINE)) return findings({ evidence: OLD_LINE, severity: "HIGH", dimension: "security", concern: HOLE });
      return reviewer(c, plan) ?? agreeable(c);
    }
    return agreeable(c);
  });
}

describe("the replanning planner is shown its previous plan", () => {
  it("after needs_replan the planner's request carries the previous plan as a data block, in its own part after the shared prefix", async () => {
    const w = await world();
    const id = await w.newIssue("Link OAuth accounts by email", "Users sign in with two providers.", LOAD_BEARING);
    expect((await w.plan(id)).status).toBe("needs_replan");
    await w.plan(id);
    const [first, second] = w.callsOf("planner").filter((c) => c.messages.length === 1);
    expect(block(first, "previous_plan")).toBeUndefined();
    expect(block(second, "previous_plan")).toBe(`# Plan\n\n${OLD_LINE}\n\nStep 4 ships it.`);
    expect(block(second, "pending_concerns")).toContain(OLD_LINE);
    // After the persona, never before it: every role's request still starts with the same project, issue and format.
    const text = second?.prompt ?? "";
    expect(text.indexOf("Role: planner")).toBeGreaterThan(-1);
    expect(text.indexOf('<data kind="previous_plan"')).toBeGreaterThan(text.indexOf("Role: planner"));
    expect(text.slice(0, text.indexOf("Role: planner"))).toBe((first?.prompt ?? "").slice(0, (first?.prompt ?? "").indexOf("Role: planner")));
  });
});

describe("a concern whose quote exists only in the old plan reaches the reviewer as stale", () => {
  it("the new plan's reviewer sees it marked evidence_stale, with a line saying what that means; it stays pending, marked", async () => {
    const w = await world();
    const id = await w.newIssue("Link OAuth accounts by email", "Users sign in with two providers.", LOAD_BEARING);
    const first = await w.plan(id);
    expect(first.pending_concerns.find((c) => c.concern === HOLE)).toMatchObject({ evidence: OLD_LINE, must_address_by: "plan" });
    expect(first.pending_concerns.find((c) => c.concern === HOLE)?.evidence_stale).toBeUndefined();
    const second = await w.plan(id);
    const review = w.callsOf("plan_reviewer").at(-1);
    expect(block(review, "under_review")).toContain(NEW_LINE);
    const shown = JSON.parse(block(review, "pending_concerns") ?? "[]") as { concern: string; evidence?: string; evidence_stale?: boolean }[];
    expect(shown.find((c) => c.concern === HOLE)).toMatchObject({ evidence: OLD_LINE, evidence_stale: true });
    expect(review?.prompt).toContain('A concern marked "evidence_stale" quotes an earlier plan');
    // The reviewer did not confirm it answered: it goes on to implementation, marked as it was shown.
    expect(second.status).toBe("ready");
    expect(second.pending_concerns.find((c) => c.concern === HOLE)).toMatchObject({ evidence_stale: true, must_address_by: "implement" });
    expect((await w.store.state(id)).pending_concerns.find((c) => c.concern === HOLE)?.evidence_stale).toBe(true);
  });

  it("the reviewer restating it with a quote of the new plan grounds it again: the new quote, no stale mark", async () => {
    const w = await world((_c, plan) =>
      plan.includes(NEW_LINE) ? findings({ evidence: NEW_LINE, severity: "MEDIUM", dimension: "security", concern: HOLE }) : undefined,
    );
    const id = await w.newIssue("Link OAuth accounts by email", "Users sign in with two providers.", LOAD_BEARING);
    await w.plan(id);
    const second = await w.plan(id);
    const hole = second.pending_concerns.find((c) => c.concern === HOLE);
    expect(hole).toMatchObject({ evidence: NEW_LINE });
    expect(hole?.evidence_stale).toBeUndefined();
  });

  it("a concern whose quote is still in the new plan is not marked", async () => {
    const w = await scriptedWorld((c) => {
      if (c.role === "plan_reviewer" && w.callsOf("plan_reviewer").length === 1)
        return findings({ evidence: "Artifact written by planner.", severity: "HIGH", dimension: "correctness", concern: "The plan says nothing" });
      return agreeable(c);
    });
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    await w.plan(id);
    await w.plan(id);
    const shown = JSON.parse(block(w.callsOf("plan_reviewer").at(-1), "pending_concerns") ?? "[]") as { evidence_stale?: boolean }[];
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((c) => c.evidence_stale === undefined)).toBe(true);
  });
});
