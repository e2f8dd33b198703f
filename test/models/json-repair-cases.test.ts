import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { jsonValues, stripThink } from "../../src/models/json.js";

// jsonrepair's own test suite (test/fixtures/jsonrepair: 417 malformed inputs as models write them,
// with jsonrepair's expected output) read by dissent's tolerant reader: for every case whose expected
// value is an object or an array, dissent reads that value or nothing — never a different value — and
// reads the same inside a fenced reply and a reply with prose around it (docs/run.md "Replies").

interface Case {
  test: string;
  input: string;
  expected?: string;
  throws?: true;
}

const CASES = JSON.parse(readFileSync(new URL("../fixtures/jsonrepair/cases.json", import.meta.url), "utf8")) as Case[];
const structured = CASES.flatMap((c) => {
  if (c.expected === undefined) return [];
  const value: unknown = JSON.parse(c.expected);
  return typeof value === "object" && value !== null ? [{ ...c, value }] : [];
});

/** What dissent reads: the one value, none (a clean failure), or several (a reply holding more than one). */
const read = (text: string) => jsonValues(stripThink(text), { arrays: true });

/** Read right: the expected value; or newline-delimited values read one by one (each an element of the expected array, in order). */
const right = (got: unknown[], value: object) =>
  (got.length === 1 && isDeepStrictEqual(got[0], value)) || (got.length > 1 && Array.isArray(value) && isDeepStrictEqual(got, value));

/** An array of bare words or numbers (`[a,b]`, `[e5]`): in prose, brackets like these are not read as JSON. */
const wordList = (value: object) => Array.isArray(value) && value.every((v) => typeof v !== "object" || v === null || (Array.isArray(v) && v.length === 0));

const wrappers: [string, (input: string) => string][] = [
  ["fenced", (input) => `\`\`\`json\n${input}\n\`\`\``],
  ["with prose around it", (input) => `Here is the JSON you asked for:\n\n${input}\n\nLet me know if you need anything else.`],
  ["fenced, after a think block and prose", (input) => `<think>The user wants JSON. {"draft": true}</think>Sure.\n\n\`\`\`json\n${input}\n\`\`\`\nDone.`],
];

describe("jsonrepair's cases, read by dissent", () => {
  it("the fixture holds jsonrepair's suite: hundreds of structured cases", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(400);
    expect(structured.length).toBeGreaterThanOrEqual(250);
  });

  it("every structured case: jsonrepair's expected value, or a clean failure — never a different value", () => {
    const wrong = structured.flatMap((c) => {
      const got = read(c.input);
      return got.length === 0 || right(got, c.value) ? [] : [{ test: c.test, input: c.input, expected: c.value, got }];
    });
    expect(wrong).toEqual([]);
  });

  it("nearly every structured case reads right, bare; those that fail are lists without brackets or bracketed bare words", () => {
    const failed = structured.filter((c) => !right(read(c.input), c.value));
    expect(failed.length).toBeLessThanOrEqual(structured.length * 0.05);
    for (const c of failed) expect(wordList(c.value), c.input).toBe(true);
  });

  for (const [name, wrap] of wrappers) {
    it(`every structured case reads right ${name} (or as bare; a bracketed word list in prose is no JSON)`, () => {
      const wrong = structured.flatMap((c) => {
        const got = read(wrap(c.input));
        if (right(got, c.value) || isDeepStrictEqual(got, read(c.input)) || (got.length === 0 && wordList(c.value))) return [];
        return [{ test: c.test, input: c.input, expected: c.value, got }];
      });
      expect(wrong).toEqual([]);
    });
  }

  it("every object case reads right in every wrapper", () => {
    const objects = structured.filter((c) => !wordList(c.value) && right(read(c.input), c.value));
    for (const [, wrap] of wrappers)
      for (const c of objects) expect(read(wrap(c.input)), c.input).toEqual(Array.isArray(c.value) && read(c.input).length > 1 ? c.value : [c.value]);
  });

  it("inputs jsonrepair refuses never crash the reader", () => {
    for (const c of CASES.filter((x) => x.throws)) expect(() => read(c.input)).not.toThrow();
  });
});
