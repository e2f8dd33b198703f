/**
 * Said where it applies (issue 30, "Faults a real model met"; issue 31 item 10): the "verifier uses
 * the same model" warning was printed for a trivial issue, where no critic runs; and `events` said
 * "addressed-in-code by council" of a plan the council simply stopped objecting to.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { findings, pipelineWorld, type PipelineWorld } from "../support/pipeline-e2e.js";

vi.setConfig({ testTimeout: 60_000 });

let w: PipelineWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const SAME = "the verifier uses the same model";

describe("warnings about the councils are said only when a council runs", () => {
  it("a verifier on a critic's model: no warning for a trivial issue, one line for a load-bearing one", async () => {
    w = await pipelineWorld(() => undefined);
    const path = join(w.dir, "dissent.config.yaml");
    writeFileSync(path, readFileSync(path, "utf8").replace('  verifier: { primary: "local:verifier" }', '  verifier: { primary: "local:shape.tech_lead" }'));
    const trivial = await w.newIssue("Fix a typo in the README", "", ["dissent-trivial"]);
    const quiet = await w.run(["issue", "plan", trivial]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(w.requestsFor("shape.tech_lead")).toBe(0); // no critic ran
    expect(quiet.stderr).not.toContain(SAME);
    const heavy = await w.newIssue("Encrypt cookies", "", ["dissent-load-bearing"]);
    const warned = await w.run(["issue", "plan", heavy]);
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr.split("\n").filter((l) => l.includes(SAME))).toHaveLength(1);
  });
});

describe("events say what a council did", () => {
  it("a blocking concern the council no longer raised: 'settled by council: no longer raised against the final draft'", async () => {
    w = await pipelineWorld((model, n, req) => {
      if (model === "planner") return { content: n === 0 ? "# Plan v1\n\nShip on Friday without tests." : "# Plan v2\n\nShip with a retry test." };
      if (model === "plan.tester") {
        const text = req.body.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
        if (
          readDataBlocks(text)
            .find((b) => b.kind === "under_review")
            ?.text.includes("without tests")
        )
          return {
            content: findings({
              evidence: "Ship on Friday without tests.",
              severity: "CRITICAL",
              category: "test_gap",
              concern: "Nothing tests the retry path",
            }),
          };
      }
      return undefined;
    });
    const id = await w.newIssue("Add retries", "", ["dissent-load-bearing"]);
    await w.plan(id);
    const lines = (await w.run(["events", "--issue", id])).stdout.split("\n").filter((l) => l.includes("ConcernAddressed"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ConcernAddressed\s+\S+\s+PLAN-TESTER-\d{3} settled by council: no longer raised against the final draft$/);
    expect(lines[0]).not.toContain("addressed-in-code");
  });
});
