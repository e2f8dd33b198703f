/**
 * A deferral by a producer is a claim, not a resolution (issue 30, "Faults a real model met"): a
 * concern the planner marked `deferred` disappeared from the reviewer's input and from the pending
 * list. Now it stays pending — in the reviewer's input with the planner's claim beside it, in the
 * plan's result and in `issue show` — until the plan answers it or a person resolves it.
 */
import { describe, expect, it } from "vitest";
import type { DissentEvent } from "../../src/contracts/events.js";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { showIssue } from "../../src/read-models.js";
import { foldState } from "../../src/store/state.js";
import { agreeable, scriptedWorld, type SeenCall } from "../support/world.js";

const LOAD_BEARING = ["dissent-load-bearing"];
const findings = (...f: object[]) => JSON.stringify({ findings: f });
const block = (c: SeenCall | undefined, kind: string) => readDataBlocks(c?.prompt ?? "").find((b) => b.kind === kind)?.text;
const MEDIUM = "Nobody is told when the nightly export fails";

/** The shape council raises a MEDIUM; the planner defers every pending concern it is given. */
const world = () =>
  scriptedWorld((c) => {
    if (c.role === "shape.user_advocate") return findings({ severity: "MEDIUM", concern: MEDIUM, category: "user_impact" });
    if (c.role === "planner") {
      const pending = JSON.parse(block(c, "pending_concerns") ?? "[]") as { id: string }[];
      const addressed = pending.map((p) => ({ concern_id: p.id, resolution_kind: "deferred", note: "Out of scope for this change; a follow-up issue." }));
      return `# Plan\n\nExport at 02:00.\n\n## Decisions\n- deferred to a follow-up\n\n\`\`\`json\n${JSON.stringify({ addressed })}\n\`\`\``;
    }
    return agreeable(c);
  });

describe("a producer's deferral stays pending", () => {
  it("the planner defers a MEDIUM: it stays pending, the reviewer sees it with the claim beside it, and issue show lists it", async () => {
    const w = await world();
    const id = await w.newIssue("Nightly CSV export", "Finance wants the invoices every night.", LOAD_BEARING);
    const r = await w.plan(id);
    const pending = r.pending_concerns.find((c) => c.concern === MEDIUM);
    expect(pending).toMatchObject({ severity: "MEDIUM", must_address_by: "implement" });

    const deferral = (await w.eventsOf(id)).flatMap((e) => (e.type === "ConcernAddressed" ? [e.resolution] : []));
    expect(deferral).toEqual([expect.objectContaining({ concern_id: pending?.id, resolution_kind: "deferred", resolved_by: "planner", settled: false })]);

    const reviewer = w.callsOf("plan_reviewer")[0];
    expect(block(reviewer, "pending_concerns")).toContain(MEDIUM);
    expect(JSON.parse(block(reviewer, "claims") ?? "[]")).toEqual([
      { concern_id: pending?.id, resolution_kind: "deferred", note: "Out of scope for this change; a follow-up issue.", by: "planner" },
    ]);

    const shown = await showIssue(w.store, w.tracker, id);
    expect(shown.pending_concerns.map((c) => c.concern)).toContain(MEDIUM);
  });

  it("the fold keeps a model's deferral pending in a log written before deferrals were claims (no settled flag); a person's deferral settles", () => {
    const concern = {
      id: "SHAPE-USER_ADVOCATE-001",
      phase: "shape" as const,
      stage: "shape_council",
      raised_by: "shape.user_advocate",
      severity: "MEDIUM" as const,
      category: "user_impact",
      concern: MEDIUM,
      evidence: "",
      must_address_by: "plan" as const,
      human_required: false,
      fingerprint: "f1",
      raised_at: "2026-01-01T00:00:00.000Z",
    };
    const at = "2026-01-01T00:00:01.000Z";
    const forwarded: DissentEvent = { type: "ConcernForwarded", at, issue_id: "1", concern, reason: "advisory" };
    const addressed = (by: string): DissentEvent => ({
      type: "ConcernAddressed",
      at,
      issue_id: "1",
      resolution: { concern_id: concern.id, fingerprint: "f1", resolution_kind: "deferred", note: "later", resolved_by: by, resolved_at: at },
    });
    expect(foldState([forwarded, addressed("planner")]).pending_concerns.map((c) => c.id)).toEqual([concern.id]);
    expect(foldState([forwarded, addressed("human")]).pending_concerns).toEqual([]);
  });
});
