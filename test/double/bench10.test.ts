import { afterEach, expect, test } from "vitest";
import { bench10, perfect, startRealisticDouble, type RealisticDouble } from "../support/double/index.js";
import { artifactOf, chat, criticBody, lastJson, producerBody } from "../support/double/client.js";

const ROLES = new Set([
  "assumption_surfacer",
  "discovery.problem_sharpener",
  "discovery.existing_solution_hunter",
  "discovery.cheapest_test_advocate",
  "shape.challenger",
  "shape.user_advocate",
  "shape.tech_lead",
  "shape.product_strategist",
  "plan.builder",
  "plan.tester",
  "plan.risk_skeptic",
  "spec.judge",
  "plan_reviewer",
]);
const COUNCIL: Record<string, readonly string[]> = {
  discover: ["assumption_surfacer", "discovery.problem_sharpener", "discovery.existing_solution_hunter", "discovery.cheapest_test_advocate", "plan_reviewer"],
  shape: ["shape.challenger", "shape.user_advocate", "shape.tech_lead", "shape.product_strategist", "plan_reviewer"],
  plan: ["assumption_surfacer", "plan.builder", "plan.tester", "plan.risk_skeptic", "plan_reviewer"],
  spec: ["spec.judge", "plan_reviewer"],
};
const PRODUCER = { discover: "discover.brief", shape: "shape.writer", plan: "planner", spec: "spec.ac_generator" } as const;
const ARTIFACT = { discover: "brief", shape: "shape", plan: "plan", spec: "acceptance_criteria" } as const;

const open: RealisticDouble[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

test("bench10: ten distinct issues with the promised mix, every defect well-formed", () => {
  expect(bench10.list).toHaveLength(10);
  expect(new Set(bench10.list.map((i) => i.title)).size).toBe(10);
  const kinds = bench10.list.map((i) => i.kind);
  for (const k of ["clean", "trivial", "critical-in-plan", "corroborated-high", "human-question"] as const) expect(kinds).toContain(k);
  const all = bench10.list.flatMap((i) => i.defects);
  expect(new Set(all.map((d) => d.id)).size).toBe(all.length);
  for (const d of all) {
    expect(d.wordings.length).toBeGreaterThanOrEqual(3);
    expect(new Set(d.wordings).size).toBe(d.wordings.length);
    expect(d.lanes.length).toBeGreaterThan(0);
    for (const lane of d.lanes) {
      expect(ROLES.has(lane)).toBe(true);
      expect(COUNCIL[d.stage]).toContain(lane);
    }
    expect(d.fix).not.toBe(d.line);
  }
  expect(all.some((d) => d.humanRequired)).toBe(true);
  expect(all.some((d) => d.severity === "HIGH" && d.lanes.filter((l) => l !== "plan_reviewer").length >= 2)).toBe(true);
  expect(all.some((d) => d.severity === "CRITICAL" && d.stage === "plan")).toBe(true);
  expect(bench10.issues).toEqual(Object.fromEntries(bench10.list.map((i) => [i.title, i.defects])));
});

test("bench10: each defect is written by its producer, noticed by each of its council lanes, and gone once fixed", async () => {
  const d = await startRealisticDouble({ seed: 1, quirks: perfect, scenario: bench10 });
  open.push(d);
  for (const issue of bench10.list) {
    for (const defect of issue.defects) {
      const producer = PRODUCER[defect.stage];
      const reply = (await chat(d.url, producerBody(producer, issue))).content;
      const text =
        defect.stage === "spec"
          ? (JSON.parse(reply) as { acceptance_criteria: string[] }).acceptance_criteria.map((c) => `- ${c}`).join("\n")
          : artifactOf(reply);
      expect(text).toContain(defect.line);
      const fixed = text.replace(defect.line, defect.fix);
      for (const lane of defect.lanes.filter((l) => l !== "plan_reviewer")) {
        const found = lastJson((await chat(d.url, criticBody(lane, issue, { name: ARTIFACT[defect.stage], text }))).content) as {
          findings: { concern: string; human_required: boolean }[];
        };
        const f = found.findings.find((x) => defect.wordings.includes(x.concern));
        expect(f, `${lane} on ${defect.id}`).toBeDefined();
        expect(f?.human_required).toBe(defect.humanRequired ?? false);
        const after = lastJson((await chat(d.url, criticBody(lane, issue, { name: ARTIFACT[defect.stage], text: fixed }))).content) as {
          findings: { concern: string }[];
        };
        expect(after.findings.some((x) => defect.wordings.includes(x.concern))).toBe(false);
      }
    }
  }
});
