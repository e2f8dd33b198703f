import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { AUDIT_CATEGORIES } from "../../src/contracts/audit.js";
import { GateItem, GateSet, PipelineSet } from "../../src/eval/schema.js";
import { loadGateSet, loadPipelineSet, parseGateSet, parsePipelineSet } from "../../src/eval/sets.js";

const item = {
  id: "mine-1",
  prompt: "How long do I boil an egg?",
  draft: "Boil a large egg for exactly 45 minutes for a soft yolk.",
  expected: { verdict: "needs_work", defects: [{ category: "factual_risk", evidence: "for exactly 45 minutes", min_severity: "high" }] },
  revision: { must_not_contain: ["45 minutes"] },
};

const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected an error");
};

describe("the bundled sets", () => {
  it("gate: at least 60 items, 8+ per category, 10+ clean, 5+ addressing the auditor, all valid", () => {
    const set = loadGateSet();
    expect(set.items.length).toBeGreaterThanOrEqual(60);
    expect(GateSet.safeParse(set.items).success).toBe(true);
    for (const cat of AUDIT_CATEGORIES)
      expect(set.items.filter((i) => i.expected.defects.some((d) => d.category === cat)).length, cat).toBeGreaterThanOrEqual(8);
    expect(set.items.filter((i) => i.expected.verdict === "pass").length).toBeGreaterThanOrEqual(10);
    expect(set.items.filter((i) => i.tags?.includes("injection")).length).toBeGreaterThanOrEqual(5);
    expect(set.name).toBe("bundled:gate.json");
    expect(set.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("pipeline: at least 8 issues with gold checklists, valid", () => {
    const set = loadPipelineSet();
    expect(set.items.length).toBeGreaterThanOrEqual(8);
    expect(PipelineSet.safeParse(set.items).success).toBe(true);
    expect(set.items.some((i) => i.gold.clean)).toBe(true);
    expect(set.items.some((i) => i.wiki?.length)).toBe(true);
  });

  it("--limit keeps the first N and remembers the total", () => {
    const set = loadGateSet(undefined, 5);
    expect(set.items.map((i) => i.id)).toEqual(
      loadGateSet()
        .items.slice(0, 5)
        .map((i) => i.id),
    );
    expect(set.total).toBe(77);
  });
});

describe("a user's own set", () => {
  it("reads JSON and YAML alike", () => {
    const fromJson = parseGateSet(JSON.stringify([item]), "mine.json");
    const fromYaml = parseGateSet(stringify([item]), "mine.yaml");
    expect(fromYaml.items).toEqual(fromJson.items);
    expect(GateItem.parse(item).expected.defects[0]?.category).toBe("factual_risk");
  });

  it("reads categories and verdicts leniently", () => {
    const set = parseGateSet(
      JSON.stringify([{ ...item, expected: { verdict: "Needs Work", defects: [{ category: "Factual Risk", evidence: "for exactly 45 minutes" }] } }]),
      "mine.json",
    );
    expect(set.items[0]?.expected).toEqual({ verdict: "needs_work", defects: [{ category: "factual_risk", evidence: "for exactly 45 minutes" }] });
  });

  it("rejects a bad item with one line naming the file and the item", () => {
    const bad = [item, { ...item, id: "mine-2", expected: { verdict: "maybe", defects: [] } }];
    const msg = errorOf(() => parseGateSet(JSON.stringify(bad), "sets/mine.json"));
    expect(msg).toMatch(/^sets\/mine\.json: item 'mine-2' \(#2\): expected\.verdict: /);
    expect(msg).not.toContain("\n");
  });

  it("names the YAML line of the bad item", () => {
    const yaml = stringify([item, { ...item, id: "mine-2", revision: { must_not_contian: ["x"] } }]);
    const msg = errorOf(() => parseGateSet(yaml, "mine.yaml"));
    expect(msg).toMatch(/^mine\.yaml:\d+: item 'mine-2' \(#2\): unknown key 'revision\.must_not_contian': did you mean 'revision\.must_not_contain'\?$/);
  });

  it("rejects evidence that is not in the draft, duplicate ids, and verdicts that disagree with the defects", () => {
    const notInDraft = { ...item, expected: { verdict: "needs_work", defects: [{ category: "factual_risk", evidence: "for exactly 4 minutes" }] } };
    expect(errorOf(() => parseGateSet(JSON.stringify([notInDraft]), "m.json"))).toMatch(
      /item 'mine-1' \(#1\): expected\.defects\.0\.evidence is not in the draft: "for exactly 4 minutes"$/,
    );
    expect(errorOf(() => parseGateSet(JSON.stringify([item, item]), "m.json"))).toMatch(/item 'mine-1' \(#2\): duplicate id 'mine-1'$/);
    expect(errorOf(() => parseGateSet(JSON.stringify([{ ...item, expected: { ...item.expected, verdict: "pass" } }]), "m.json"))).toMatch(
      /verdict is pass but the item lists defects/,
    );
  });

  it("an `anywhere` defect may leave its evidence empty; given, it must still be in the draft; the flag is a boolean", () => {
    const whole = (evidence: string, anywhere: unknown = true) => ({
      ...item,
      constraints: ["Answer in one sentence of at most 8 words."],
      expected: { verdict: "needs_work", defects: [{ category: "boundary_violation", evidence, anywhere }] },
    });
    expect(parseGateSet(JSON.stringify([whole("")]), "m.json").items[0]?.expected.defects[0]).toMatchObject({ anywhere: true, evidence: "" });
    expect(parseGateSet(JSON.stringify([whole("for a soft yolk")]), "m.json").items).toHaveLength(1);
    expect(errorOf(() => parseGateSet(JSON.stringify([whole("for a runny yolk")]), "m.json"))).toMatch(/expected\.defects\.0\.evidence is not in the draft/);
    expect(errorOf(() => parseGateSet(JSON.stringify([whole("", false)]), "m.json"))).toMatch(
      /evidence is empty \(only missing_verification or an anywhere defect may be\)/,
    );
    expect(errorOf(() => parseGateSet(JSON.stringify([whole("", "yes")]), "m.json"))).toMatch(/expected\.defects\.0\.anywhere: /);
  });

  it("says what is wrong with the file as a whole", () => {
    expect(errorOf(() => parseGateSet("{", "m.json"))).toMatch(/^m\.json: not valid JSON/);
    expect(errorOf(() => parseGateSet("items: []", "m.yaml"))).toMatch(/^m\.yaml: a set is a list of items/);
    expect(errorOf(() => parseGateSet("[]", "m.json"))).toMatch(/^m\.json: the set has no items$/);
    expect(errorOf(() => parseGateSet("- id: [", "m.yaml"))).toMatch(/^m\.yaml:1:\d+: invalid YAML/);
    expect(errorOf(() => loadGateSet("/nonexistent/set.yaml"))).toBe("/nonexistent/set.yaml: no such file");
  });

  it("validates pipeline items too", () => {
    const issue = {
      id: "p-1",
      title: "Add caching",
      body: "It is slow.",
      gold: { clean: false, plan_must_contain: ["a measurement"], council_must_raise: [] },
    };
    expect(parsePipelineSet(JSON.stringify([issue]), "p.json").items[0]?.gold.route).toBeUndefined();
    expect(errorOf(() => parsePipelineSet(JSON.stringify([{ ...issue, gold: { clean: "yes" } }]), "p.json"))).toMatch(
      /^p\.json: item 'p-1' \(#1\): gold\.clean: /,
    );
  });
});

describe("the examples of the reference page (docs/eval.md)", () => {
  const doc = readFileSync(new URL("../../docs/eval.md", import.meta.url), "utf8");
  const yamlBlocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");

  it("a gate item and a pipeline item, both valid", () => {
    const gate = yamlBlocks.find((b) => b.includes("expected:"));
    const pipeline = yamlBlocks.find((b) => b.includes("gold:"));
    expect(parseGateSet(gate ?? "", "docs/eval.md gate example.yaml").items[0]?.id).toBe("eggs-1");
    expect(parsePipelineSet(pipeline ?? "", "docs/eval.md pipeline example.yaml").items[0]?.gold.plan_must_contain).toHaveLength(1);
  });
});
