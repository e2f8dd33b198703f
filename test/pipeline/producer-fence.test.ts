/**
 * A producer reply whose ```json block is never closed (issue 30, "Faults a real model met"): its
 * `addressed` claims were lost with no warning (`producer_warnings: 0`), and the JSON was kept in
 * the plan and shown to critics as plan text. Now the block is read all the same, cut off the
 * artifact, and counted and warned as a producer fault.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { parseProducer } from "../../src/pipeline/roles.js";
import { dissent, scratch } from "../support/cli.js";
import { startRealisticDouble, type Defect } from "../support/double/index.js";
import { pipelineWorld, type PipelineWorld } from "../support/pipeline-e2e.js";
import { NEXT_AUTH, recordedRun, repliesByRole } from "../support/real-model.js";
import { rolesConfig } from "../support/roles-config.js";

vi.setConfig({ testTimeout: 120_000 });

/** The real planner's reply for next-auth #4625, as the model would have sent it had it stopped before its closing fence. */
const REAL = readFileSync(`${NEXT_AUTH}0109.reply.txt`, "utf8");
const UNCLOSED = REAL.replace(/\n```\s*$/, "\n");

describe("parseProducer on a reply that never closes its json block", () => {
  it("the real planner's reply without its closing fence: every claim is read, the block is cut off the plan, and the fault is flagged", () => {
    expect(UNCLOSED).not.toBe(REAL);
    const closed = parseProducer("planner", REAL);
    const open = parseProducer("planner", UNCLOSED);
    expect(open).toEqual({ ...closed, unclosedFence: true });
    expect(open.addressed.map((a) => a.concern_id)).toEqual([
      "SHAPE-TECH_LEAD-003",
      "SHAPE-USER_ADVOCATE-002",
      "SHAPE-TECH_LEAD-004",
      "DISCOVER-PROBLEM_SHARPENER-001",
    ]);
    expect(open.artifact).not.toContain('"addressed"');
    expect(open.artifact.endsWith("the safer docs/error-message path is taken.")).toBe(true);
  });

  it("a block cut off mid-item keeps the items that were whole", () => {
    const cut = UNCLOSED.slice(0, UNCLOSED.indexOf('{"concern_id": "SHAPE-TECH_LEAD-004"') + 30);
    const r = parseProducer("planner", cut);
    expect(r.unclosedFence).toBe(true);
    expect(r.addressed.map((a) => a.concern_id)).toEqual(["SHAPE-TECH_LEAD-003", "SHAPE-USER_ADVOCATE-002"]);
    expect(r.artifact).not.toContain("```");
  });

  it("an unclosed code block that is not an addressed object stays part of the artifact, and is no fault", () => {
    const plan = "# Plan\n\n1. Add the guard.\n\n```ts\nif (!user.emailVerified) throw new Error('no');";
    expect(parseProducer("planner", plan)).toEqual({ artifact: plan, addressed: [] });
    const sample = '# Plan\n\nThe config:\n\n```json\n{"retries": 3}\n```\n\nThen ship.';
    expect(parseProducer("planner", sample)).toEqual({ artifact: sample, addressed: [] });
  });
});

let w: PipelineWorld | undefined;
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await w?.close();
  w = undefined;
  for (const c of open.splice(0)) await c.close();
});

describe("through the pipeline", () => {
  it("next-auth #4625 replayed with the planner's fence left open: a warning line and a producer warning each round, and no JSON in the plan or the critics' draft", async () => {
    const run = recordedRun();
    const replies = repliesByRole(run);
    const issue = run[0]?.blocks.find((b) => b.kind === "issue")?.text ?? "";
    const [heading = "", ...body] = issue.split("\n");
    w = await pipelineWorld((model, n) => {
      if (model === "planner") return { content: UNCLOSED };
      const recorded = replies.get(model);
      if (!recorded?.length) return undefined;
      return { content: recorded[Math.min(n, recorded.length - 1)] as string };
    });
    const id = await w.newIssue(heading.replace(/^#\s*/, ""), body.join("\n").trim(), ["dissent-load-bearing"]);
    const { out, result } = await w.plan(id);
    const plan = out.stages.find((s) => s.phase === "plan") as unknown as { rounds: number; producer_warnings: number };
    expect(plan.producer_warnings).toBe(plan.rounds); // once per reply, each round
    expect(result.stderr).toContain(
      "dissent: warning: planner never closed its json block in plan_council round 1: read all the same (4 addressed items) and cut off the artifact",
    );
    expect(out.plan).not.toContain('"addressed"');
    const shown = w.server.requests
      .filter((r) => r.body.model === "plan.builder")
      .flatMap((r) => readDataBlocks(r.body.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n")))
      .filter((b) => b.kind === "under_review");
    expect(shown.length).toBeGreaterThan(0);
    for (const b of shown) expect(b.text).not.toContain('"addressed"');
  });

  it("through the realistic double: the shape writer's claim on a MEDIUM, in a block it never closed, settles it", async () => {
    const title = "Export invoices as CSV";
    const DEFECT: Defect = {
      id: "CSV-SCOPE",
      stage: "discover",
      line: "Every finance user wants every invoice field in the export.",
      fix: "Finance asked for the ten fields of the monthly close; the rest stay out.",
      lanes: ["discovery.problem_sharpener"],
      severity: "MEDIUM",
      category: "scope",
      wordings: ["Nobody asked for every field.", "The export's fields are not grounded in a request.", "Which fields finance needs is assumed."],
    };
    const double = await startRealisticDouble({ seed: 7, quirks: { unclosedFence: true }, scenario: { issues: { [title]: [DEFECT] } } });
    const s = scratch("dissent-fence-");
    open.push({ close: async () => (await double.close(), s.cleanup()) });
    s.write("dissent.config.yaml", rolesConfig(double.url, "call_timeout_ms: 20000"));
    const cli = (args: string[]) => dissent(args, { cwd: s.dir, env: { DISSENT_HOME: `${s.dir}/home` }, timeoutMs: 100_000 });
    const id = (
      await cli(["issue", "new", "--title", title, "--body", "Finance closes the month from a spreadsheet.", "--label", "dissent-load-bearing"])
    ).stdout.trim();
    const r = await cli(["issue", "plan", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const planned = JSON.parse(r.stdout) as { pending_concerns: { raised_by: string }[]; stages: { phase: string; producer_warnings: number }[] };
    expect(planned.stages.find((st) => st.phase === "shape")?.producer_warnings).toBe(1);
    expect(r.stderr).toMatch(/warning: shape\.writer never closed its json block in shape_council round 1: read all the same \(1 addressed item\)/);
    const events = (await cli(["events", "--issue", id, "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; resolution?: { resolved_by: string; concern_id: string } });
    expect(events.filter((e) => e.type === "ConcernAddressed").map((e) => e.resolution?.resolved_by)).toEqual(["shape.writer"]);
    expect(planned.pending_concerns.filter((c) => c.raised_by === "discovery.problem_sharpener")).toEqual([]);
    const shape = (await cli(["issue", "show", id, "--artifact", "shape"])).stdout;
    expect(shape).toContain("## Decisions");
    expect(shape).not.toContain('"addressed"');
  });
});
