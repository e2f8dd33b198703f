import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AuditReply } from "../../src/contracts/audit.js";
import { jsonObjects, parseStructured, stripThink } from "../../src/models/json.js";

const PASS = { verdict: "pass", concerns: [] };
const NEEDS_WORK = {
  verdict: "needs_work",
  concerns: [{ category: "factual_risk", severity: "high", evidence: "The moon is cheese.", concern: "Wrong." }],
};

function parsed(text: string) {
  const r = parseStructured(text, AuditReply);
  if (!r.ok) throw new Error(`expected a parse, got ${r.reason}: ${r.error}`);
  return r.value;
}

describe("parseStructured (CONTRACT §2: tolerant, then validated)", () => {
  it("accepts a bare JSON object", () => {
    expect(parsed(JSON.stringify(NEEDS_WORK))).toEqual(NEEDS_WORK);
  });

  it("accepts a markdown-fenced object", () => {
    expect(parsed("```json\n" + JSON.stringify(NEEDS_WORK, null, 2) + "\n```")).toEqual(NEEDS_WORK);
    expect(parsed("```\n" + JSON.stringify(PASS) + "\n```\n")).toEqual(PASS);
  });

  it("ignores <think> blocks, even when they hold a JSON object of their own", () => {
    const text = `<think>\nFirst idea: ${JSON.stringify(NEEDS_WORK)}\nNo, it is fine.\n</think>\n${JSON.stringify(PASS)}`;
    expect(parsed(text)).toEqual(PASS);
  });

  it("accepts prose before and after the object", () => {
    const text = `Here is my audit of the draft:\n\n${JSON.stringify(NEEDS_WORK)}\n\nLet me know if you need more.`;
    expect(parsed(text)).toEqual(NEEDS_WORK);
  });

  it("accepts prose holding a stray, unbalanced brace before the object", () => {
    const text = `The draft opens a { and never closes it.\n${JSON.stringify(PASS)}`;
    expect(parsed(text)).toEqual(PASS);
  });

  it("is not confused by braces and quotes inside JSON strings", () => {
    const tricky = {
      verdict: "needs_work",
      concerns: [{ category: "factual_risk", severity: "low", evidence: 'use "x = {a: 1}" here }', concern: "brace } inside" }],
    };
    expect(parsed(`Audit: ${JSON.stringify(tricky)} done`)).toEqual(tricky);
  });

  it("when several objects appear, the last one that matches the schema wins", () => {
    const quotedDraft = { answer: "the draft quoted as JSON" };
    const text = `The draft was ${JSON.stringify(quotedDraft)}. Earlier I wrote ${JSON.stringify(PASS)} but on reflection:\n${JSON.stringify(NEEDS_WORK)}\nand the draft again: ${JSON.stringify(quotedDraft)}`;
    expect(parsed(text)).toEqual(NEEDS_WORK);
  });

  it("a later object that does not match the schema does not hide an earlier one that does", () => {
    expect(parsed(`${JSON.stringify(PASS)}\n{"verdict": "maybe"}`)).toEqual(PASS);
  });

  it("repairs a trailing comma", () => {
    expect(parsed('{"verdict": "pass", "concerns": [],}')).toEqual(PASS);
    expect(parsed('{"verdict":"needs_work","concerns":[{"category":"factual_risk","severity":"high","evidence":"The moon is cheese.","concern":"Wrong.",},],}')).toEqual(
      NEEDS_WORK,
    );
  });

  it("applies schema defaults (concerns may be omitted)", () => {
    expect(parsed('{"verdict": "pass"}')).toEqual(PASS);
  });

  it("a reply with no JSON object is unparseable", () => {
    const r = parseStructured("Looks good to me, ship it.", AuditReply);
    expect(r).toMatchObject({ ok: false, reason: "unparseable" });
  });

  it("a reply whose JSON is only inside a <think> block is unparseable", () => {
    const r = parseStructured(`<think>${JSON.stringify(PASS)}</think>The draft is fine.`, AuditReply);
    expect(r).toMatchObject({ ok: false, reason: "unparseable" });
  });

  it("JSON that never matches the schema is a schema failure, naming the field", () => {
    const r = parseStructured('{"verdict": "ok", "concerns": []}', AuditReply);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe("schema");
    expect(r.error).toContain("verdict");
  });

  it("a concern with an unknown category is a schema failure", () => {
    const bad = { verdict: "needs_work", concerns: [{ category: "style", severity: "low", evidence: "", concern: "meh" }] };
    expect(parseStructured(JSON.stringify(bad), AuditReply)).toMatchObject({ ok: false, reason: "schema" });
  });

  it("works with any zod schema", () => {
    const Schema = z.object({ acceptance_criteria: z.array(z.string()) });
    const r = parseStructured('```json\n{"acceptance_criteria": ["a", "b"]}\n```', Schema);
    expect(r).toEqual({ ok: true, value: { acceptance_criteria: ["a", "b"] } });
  });
});

describe("jsonObjects", () => {
  it("lists top-level objects in order, not the objects nested inside them", () => {
    expect(jsonObjects('a {"x": {"y": 1}} b {"z": 2} c')).toEqual([{ x: { y: 1 } }, { z: 2 }]);
  });

  it("finds nothing in plain text", () => {
    expect(jsonObjects("no json here")).toEqual([]);
  });
});

describe("stripThink", () => {
  it("removes think, thinking and reasoning blocks, case-insensitively", () => {
    expect(stripThink("<think>a</think>B<THINKING>c</THINKING>D<reasoning>\ne\n</reasoning>E")).toBe("BDE");
  });

  it("leaves text without blocks unchanged", () => {
    const text = "a < b and c > d";
    expect(stripThink(text)).toBe(text);
  });
});
