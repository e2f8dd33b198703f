/**
 * Issue 31 item 7: `issue plan`'s text output said a stage oscillated but not what blocked it (only
 * `dissent events` did). Through the built CLI: per stage, each round's blocking concerns — id,
 * severity as shown everywhere, first line — and how each left the stage.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CRIT, HOLE, ISSUES, LINK, saidWorld, serveWorld, type SaidWorld } from "./world.js";

vi.setConfig({ testTimeout: 240_000, hookTimeout: 400_000 });

let w: SaidWorld;
let issue = "";

beforeAll(async () => {
  w = await saidWorld();
  const made = await w.run(["issue", "new", "--title", LINK.title, "--body", LINK.body, "--label", "dissent-load-bearing"]);
  expect(made.code, made.stderr).toBe(0);
  issue = made.stdout.trim();
});

afterAll(async () => {
  await w?.close();
});

describe("issue plan's text output says what blocked each stage and how it ended", () => {
  it("a HIGH that blocked shape round 1 and was settled in round 2, with its id, its severity and its line", async () => {
    const r = await w.run(["issue", "plan", issue]);
    expect(r.code, r.stderr).toBe(0);
    const block = r.stdout.slice(r.stdout.indexOf("what blocked:"));
    expect(block).toMatch(
      new RegExp(`^  shape_council\\s+r1  SHAPE-TECH_LEAD-\\d{3}  HIGH \\(confirmed by verifier\\)  ${escapeRe((HOLE.wordings[0] ?? "").slice(0, 60))}`, "m"),
    );
    expect(block).toMatch(/^\s+→ SHAPE-TECH_LEAD-\d{3} settled in round 2 \(settled by council: no longer raised against the final draft\)$/m);
  });

  it("a CRITICAL that blocked every round until the stage oscillated: each round's line, then where it was forwarded", async () => {
    const world = await serveWorld();
    try {
      const id = await world.newIssue(ISSUES.shipped.title, ISSUES.shipped.body); // its discovery council raises a CRITICAL every round
      const r = await world.run(["issue", "plan", id]);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.split("\n");
      const at = lines.indexOf("what blocked:");
      expect(at).toBeGreaterThan(0);
      const block = lines.slice(
        at + 1,
        lines.findIndex((l) => l.startsWith("status: ")),
      );
      const discovery = block.filter((l) => l.includes("DISCOVER-PROBLEM_SHARPENER-001"));
      expect(discovery[0]).toMatch(new RegExp(`^  discovery_council\\s+r1  DISCOVER-PROBLEM_SHARPENER-001  CRITICAL  ${escapeRe(CRIT.concern)}$`));
      expect(discovery[1]).toMatch(/^\s+r2 {2}DISCOVER-PROBLEM_SHARPENER-001 {2}CRITICAL {2}/);
      expect(discovery.at(-1)).toMatch(/^\s+→ DISCOVER-PROBLEM_SHARPENER-001 forwarded to shape \(oscillation\)$/);
    } finally {
      await world.close();
    }
  });
});

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
