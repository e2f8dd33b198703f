import { describe, expect, it } from "vitest";
import type { AuditConcern } from "../../src/contracts/audit.js";
import { groundConcerns } from "../../src/gate/grounding.js";

const concern = (evidence: string, category: AuditConcern["category"] = "factual_risk"): AuditConcern => ({
  category,
  severity: "high",
  evidence,
  concern: `about: ${evidence}`,
});

const DRAFT = "Paris is the capital of France.\n\nIt has   about 2 million\tpeople, and the Eiffel Tower is 330 m tall.";

describe("groundConcerns (CONTRACT §3 grounding)", () => {
  it("keeps a concern whose evidence is a verbatim excerpt of the draft", () => {
    const c = concern("the Eiffel Tower is 330 m tall");
    expect(groundConcerns(DRAFT, [c])).toEqual({ grounded: [c], ungrounded: [] });
  });

  it("compares after collapsing whitespace on both sides", () => {
    const c1 = concern("France. It has about 2 million people");
    const c2 = concern("It  has\nabout 2\n million people");
    expect(groundConcerns(DRAFT, [c1, c2]).grounded).toEqual([c1, c2]);
  });

  it("tolerates evidence wrapped in quotes or ellipses", () => {
    const quoted = [
      concern('"Paris is the capital of France."'),
      concern("“has about 2 million”"),
      concern("...the Eiffel Tower is 330 m tall"),
      concern("'Paris is the'"),
    ];
    expect(groundConcerns(DRAFT, quoted).grounded).toHaveLength(quoted.length);
  });

  it("drops a concern whose evidence is not in the draft", () => {
    const invented = concern("Paris has 12 million people");
    const kept = concern("Paris is the capital");
    const r = groundConcerns(DRAFT, [invented, kept]);
    expect(r.grounded).toEqual([kept]);
    expect(r.ungrounded).toEqual([invented]);
  });

  it("treats changed wording as ungrounded, but not changed case (CONTRACT §3 r2: case folded)", () => {
    const r = groundConcerns(DRAFT, [concern("paris is the capital of france"), concern("Paris is the capital city of France")]);
    expect(r.grounded).toHaveLength(1);
    expect(r.ungrounded).toEqual([concern("Paris is the capital city of France")]);
  });

  it("lets missing_verification have empty (or blank) evidence", () => {
    const empty = concern("", "missing_verification");
    const blank = concern("  \n ", "missing_verification");
    expect(groundConcerns(DRAFT, [empty, blank]).grounded).toEqual([empty, blank]);
  });

  it("does not let any other category have empty evidence", () => {
    const r = groundConcerns(DRAFT, [concern("", "factual_risk"), concern("", "policy_compliance"), concern('""', "unverifiable_claim")]);
    expect(r.grounded).toEqual([]);
    expect(r.ungrounded).toHaveLength(3);
  });

  it("still checks missing_verification evidence when some is given", () => {
    const r = groundConcerns(DRAFT, [concern("not in the draft at all", "missing_verification")]);
    expect(r.ungrounded).toHaveLength(1);
  });
});

describe("normalised grounding: the near-verbatim quotes real models write (CONTRACT §3 r2)", () => {
  const MED = "- Take **400 mg** of ibuprofen every 4–6 hours.\n- Don’t exceed the dose… ever.\n- Ask your pharmacist first.";
  const grounds = (evidence: string) => groundConcerns(MED, [concern(evidence)]).grounded.length === 1;

  it.each([
    ["a changed first capital", "take 400 mg of ibuprofen"],
    ["emphasis dropped", "Take 400 mg of ibuprofen"],
    ["an en dash quoted as a hyphen", "every 4-6 hours"],
    ["a curly apostrophe quoted straight", "Don't exceed the dose"],
    ["an inner ellipsis (...) joining two parts in order", "Take **400 mg** ... every 4–6 hours"],
    ["an inner … joining two parts in order", "Take 400 mg … 4–6 hours"],
    ["a quote across a list bullet", "4–6 hours. Don’t exceed the dose"],
    ["the draft's own ellipsis quoted as three dots", "exceed the dose... ever"],
  ])("%s grounds", (_name, evidence) => {
    expect(grounds(evidence)).toBe(true);
  });

  it("fewer than 3 words never ground, however exact: 'mg' is not a quote", () => {
    expect(grounds("mg")).toBe(false);
    expect(grounds("400 mg")).toBe(false);
  });

  it("the whole draft may be shorter than 3 words", () => {
    expect(groundConcerns("Yes.", [concern("Yes.")]).grounded).toHaveLength(1);
  });

  it("parts joined by ... must appear in order", () => {
    expect(grounds("every 4–6 hours ... Take 400 mg")).toBe(false);
  });
});
