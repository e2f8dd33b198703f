import { describe, expect, it } from "vitest";
import { executorRequest, revisionRequest } from "../../src/gate/audit-gate.js";
import { driftAgainst, revisionDrift } from "../../src/gate/drift.js";

/**
 * How revision drift decides (docs/run.md "Revision drift"; docs/adr/ADR-036), rule by rule, on
 * small texts. The real revisions these rules came from are measured in test/eval/drift-eval.test.ts.
 */
const texts = (revision: string, prompt: string, draft?: string) =>
  driftAgainst(revision, { user: [prompt], ...(draft !== undefined ? { draft } : {}) }).map((t) => t.text);

describe("derived values: plain arithmetic on given figures, its working beside it", () => {
  const prompt = "I save $400 a month. What will I have after 18 months, and what is 15% of that?";
  it("a product, a percentage and a sum of given figures pass when the figure in their unit stands beside them", () => {
    expect(texts("$400 × 18 months = $7,200. 15% of $7,200 is $1,080, so $7,200 + $1,080 = $8,280.", prompt)).toEqual([]);
  });
  it("the same figures wrong are drift", () => {
    expect(texts("$400 × 18 months = $7,300.", prompt)).toEqual(["7,300"]);
  });
  it("a figure that happens to be arithmetic on figures far from it is drift (no working beside it)", () => {
    // €220 − €120 = €100, but nothing in the sentence works it out: a new cap, not a result.
    expect(texts("Cap the hotel at about €100 a night.", "Hotels cost €220 a night; the train €120.")).toEqual(["100"]);
  });
  it("small counts and durations, years and temperatures are never derived: too easily reached by chance", () => {
    expect(texts("Allow 6 days, from 2021.", "Pack 2 bags of 3 kg each; the trip starts in 2019 and lasts 2 weeks.")).toEqual(["6", "2021"]);
    expect(texts("Bake at 200 °C.", "Bake at 180 °C for 20 minutes.")).toEqual(["200"]);
  });
  it("a percentage one given figure is of another passes beside them", () => {
    expect(texts("That is 70% hydration (350 g water to 500 g flour).", "500 g flour, 350 g water: what hydration?")).toEqual([]);
  });
});

describe("unit conversions of given quantities", () => {
  it("pass within the rounding conversions are written with", () => {
    expect(texts("Use about 60 ml of oil and roast at 220 °C; a 2.2 lb bag is fine.", "Use 1/4 cup of oil, roast at 425 °F, 1 kg of potatoes.")).toEqual([]);
    expect(texts("Use 2 tbsp (30 ml).", "Use ⅛ cup.")).toEqual([]);
  });
  it("a wrong conversion is a new figure", () => {
    expect(texts("Roast at 250 °C with 120 ml of oil.", "Roast at 425 °F with 1/4 cup of oil.")).toEqual(["250", "120"]);
  });
});

describe("code", () => {
  const draft = "```python\nimport requests\n\ndef get(url):\n    return requests.get(url).text\n```";
  it("digits in code strings and identifiers are no figures; keywords are no names, in code or prose", () => {
    const revision =
      '```python\nimport requests\n\ndef get(url, encoding="utf-8", retries=None):\n    return requests.get(url).text\n```\nIt returns `None` when nothing came back; True or False flags are not needed.';
    expect(texts(revision, "Fetch a URL.", draft)).toEqual([]);
  });
  it("an API the code calls, imports or reaches through a dot is new when a name of it is; the code's own names and file names are not", () => {
    const revision =
      "```python\nimport urllib.request\n\ndef get(url):\n    with urllib.request.urlopen(url) as resp:\n        charset = resp.headers.get_content_charset()\n        data = resp.read()\n        return data.decode(charset)\n```\nSave it as fetch.py and run `python fetch.py`.";
    expect(texts(revision, "Fetch a URL.", draft)).toEqual(["urllib.request.urlopen", "resp.headers.get_content_charset", "resp.read", "data.decode"]);
  });
  it("a numeric literal in code is a figure", () => {
    expect(texts("```js\nsetTimeout(run, 5000);\n```", "Run it later.", "```js\nsetTimeout(run, 1000);\n```")).toEqual(["5000"]);
  });
});

describe("number words", () => {
  it("a spelled number before a unit is a figure, equal to its digits", () => {
    expect(texts("Stay six nights.", "We have 7 nights.")).toEqual(["six nights"]);
    expect(texts("Stay seven nights.", "We have 7 nights.")).toEqual([]);
    expect(texts("Stay 7 nights.", "We have seven nights.")).toEqual([]);
  });
  it("a spelled number alone is a word (one of them, in two ways)", () => {
    expect(texts("One of them works in two ways.", "Which works?")).toEqual([]);
  });
});

describe("quantities and replacements", () => {
  it("a value the given text holds only in another unit is a new quantity", () => {
    expect(texts("Thaw it for 4–5 days.", "Allow 24 hours per 4–5 pounds.")).toEqual(["4–5 days"]);
    expect(texts("Allow 24 hours per 4–5 pounds.", "Allow 24 hours per 4–5 pounds.")).toEqual([]);
  });
  it("a value replaced in a rewritten sentence by one the draft gives elsewhere is drift; the user's own figure is not", () => {
    const draft = "The bird needs two days in the fridge. Cold water takes 10 hours.";
    expect(texts("The bird needs 10 hours in the fridge. Cold water takes 10 hours.", "How do I thaw it?", draft)).toEqual(["10 hours"]);
    expect(texts("The bird needs 3 days in the fridge. Cold water takes 10 hours.", "It has to thaw in 3 days: how?", draft)).toEqual([]);
  });
  it("a day and month is a date, not a figure: the day of `5–6 June` supports no count of six", () => {
    expect(texts("Six nights in all; leave on 6 June.", "Lisbon 3–5 June, Sintra 5–6 June, Porto 6–9 June.")).toEqual(["Six nights"]);
  });
  it("a step a revision points at is the given text's numbering, not a new figure", () => {
    const draft = "## 1. Back up\n\nTake a backup.\n\n## 2. Upgrade\n\nRun it.";
    expect(texts("Restore the backup from step 1 if steps 1–2 fail; see step 4.", "Plan it.", draft)).toEqual(["4"]);
  });
});

describe("revisionDrift (every given text the user's)", () => {
  it("keeps its contract: URLs, dates, numbers, names in that order", () => {
    expect(revisionDrift("See https://a.example on 12 March 2021: 165 °F, says the USDA.", ["Cook it."])).toEqual([
      { kind: "url", text: "https://a.example" },
      { kind: "date", text: "12 March 2021" },
      { kind: "number", text: "165" },
      { kind: "name", text: "USDA" },
    ]);
  });
});

describe("the revision prompt says what drift allows (ADR-036)", () => {
  it("amounts, totals and percentages recomputed from given figures with their working, conversions the constraints or policies ask for; every other wrong value removed or marked", () => {
    const request = revisionRequest(executorRequest("Q?", [], []), "A draft.", []);
    const text = request.messages.at(-1)?.content ?? "";
    expect(text).toContain("an amount of money, a total or a percentage that plain arithmetic on the given figures settles");
    expect(text).toContain("written with its working beside it");
    expect(text).toContain("a unit conversion of a given quantity that the constraints or policies ask for");
    expect(text).toMatch(
      /A wrong value — a temperature, a dose, a date, a duration, a count, a name — is removed or marked as needing a check, never replaced/,
    );
  });
});
