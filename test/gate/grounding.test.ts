import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ground, groundingText, MIN_SHORT_QUOTE_CHARS } from "../../src/adversarial/grounding.js";
import type { AuditConcern } from "../../src/contracts/audit.js";
import { groundConcerns } from "../../src/gate/grounding.js";

const concern = (evidence: string, category: AuditConcern["category"] = "factual_risk"): AuditConcern => ({
  category,
  severity: "high",
  evidence,
  concern: `about: ${evidence}`,
});

const DRAFT = "Paris is the capital of France.\n\nIt has   about 2 million\tpeople, and the Eiffel Tower is 330 m tall.";

describe("groundConcerns (docs/run.md grounding)", () => {
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

  it("treats changed wording as ungrounded, but not changed case (docs/run.md: case folded)", () => {
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

describe("normalised grounding: the near-verbatim quotes real models write (docs/run.md)", () => {
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

  it("fewer than 3 words inside a line never ground, however exact: 'mg' is not a quote", () => {
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

describe("a one- or two-word quote grounds as a whole line or inline code span of 12+ characters (docs/run.md)", () => {
  // Real-model gate item code-003: the challenger quoted the faulty line itself, the only concern.
  const CODE =
    "Here's a small, robust helper:\n\n```python\nimport requests\n\ndef fetch_text(url: str, timeout: float = 10.0) -> str:\n    resp = requests.get(url, timeout=timeout)\n    resp.raise_for_status()\n    return resp.text\n```\n\n`raise_for_status()` turns HTTP errors (4xx/5xx) into exceptions.";
  const grounds = (draft: string, evidence: string) => groundConcerns(draft, [concern(evidence, "boundary_violation")]).grounded.length === 1;

  it("`import requests`, a whole line of the draft's code, grounds", () => {
    expect(grounds(CODE, "import requests")).toBe(true);
    expect(grounds(CODE, "`import requests`")).toBe(true);
  });

  it("12 characters ground, 11 do not: `import numpy` and `import json` on lines of their own", () => {
    const draft = "Two imports:\n\nimport numpy\nimport json\n\nThat is all.";
    expect(normalizedLength("import numpy")).toBe(12);
    expect(MIN_SHORT_QUOTE_CHARS).toBe(12);
    expect(grounds(draft, "import numpy")).toBe(true);
    expect(grounds(draft, "import json")).toBe(false);
    expect(ground(groundingText(draft), "import json")).toEqual({ grounded: false, reason: "too_short" });
  });

  it("part of a line does not ground, however long", () => {
    expect(grounds(CODE, "requests.get(url, timeout=timeout)")).toBe(false);
    expect(grounds(CODE, "robust helper:")).toBe(false);
  });

  it("a whole inline code span grounds, the same words in prose do not", () => {
    expect(grounds(CODE, "raise_for_status()")).toBe(true);
    const span = "Read the key with `os.environ.get` and fail loudly when it is missing.";
    const prose = "Read the key with os.environ.get and fail loudly when it is missing.";
    expect(grounds(span, "os.environ.get")).toBe(true);
    expect(grounds(prose, "os.environ.get")).toBe(false);
    expect(grounds("Call `os.path` here, then move on.", "os.path")).toBe(false); // a whole span, but 7 characters
  });

  it("a code fence is not a code span: two lines of a fenced block are not one unit", () => {
    const draft = "Run this:\n```\nfoo\nbarbazquxquux\n```\nDone.";
    expect(grounds(draft, "barbazquxquux")).toBe(true); // a whole line
    expect(grounds(draft, "foo barbazquxquux")).toBe(false);
  });

  it("a line with no word in it is no quote", () => {
    expect(grounds("Heading\n=============\nText follows here.", "=============")).toBe(false);
  });

  it("property: a one- or two-word excerpt grounds exactly when it is a whole line of 12+ characters", () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9_()]{0,13}$/);
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 2 }), fc.boolean(), (words, ownLine) => {
        const quote = words.join(" ");
        const line = ownLine ? quote : `${quote} trailing words here`;
        const draft = `An opening sentence of prose.\n${line}\nA closing sentence of prose.`;
        const expected = ownLine && normalizedLength(quote) >= 12;
        expect(grounds(draft, quote)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});

function normalizedLength(s: string): number {
  return groundingText(s).normalized.length;
}
