import { describe, expect, it } from "vitest";
import { readAuditReply } from "../../src/contracts/audit.js";
import { readCriteriaReply, readFindingsReply } from "../../src/contracts/concern.js";
import { jsonObjects, jsonValues, parseStructured, repairJson, stripThink } from "../../src/models/json.js";

const PASS = { verdict: "pass", concerns: [] };
const NEEDS_WORK = {
  verdict: "needs_work",
  concerns: [{ category: "factual_risk", severity: "high", evidence: "The moon is cheese.", concern: "Wrong." }],
};

function parsed(text: string, quotedFrom: string[] = []) {
  const r = parseStructured(text, readAuditReply, { quotedFrom });
  if (!r.ok) throw new Error(`expected a parse, got ${r.reason}: ${r.error}`);
  return r.value;
}

describe("parseStructured (docs/configuration.md: tolerant, then validated)", () => {
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
    expect(
      parsed('{"verdict":"needs_work","concerns":[{"category":"factual_risk","severity":"high","evidence":"The moon is cheese.","concern":"Wrong.",},],}'),
    ).toEqual(NEEDS_WORK);
  });

  it("applies schema defaults (concerns may be omitted)", () => {
    expect(parsed('{"verdict": "pass"}')).toEqual(PASS);
  });

  it("a reply with no JSON object is unparseable", () => {
    const r = parseStructured("Looks good to me, ship it.", readAuditReply);
    expect(r).toMatchObject({ ok: false, reason: "unparseable" });
  });

  it("a reply whose JSON is only inside a <think> block is unparseable", () => {
    const r = parseStructured(`<think>${JSON.stringify(PASS)}</think>The draft is fine.`, readAuditReply);
    expect(r).toMatchObject({ ok: false, reason: "unparseable" });
  });

  it("JSON that never matches the schema is a schema failure, naming the field", () => {
    const r = parseStructured('{"verdict": "ok", "concerns": []}', readAuditReply);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe("schema");
    expect(r.error).toContain("verdict");
  });

  it("a concern with an unknown category is dropped and counted, not the whole reply (docs/configuration.md)", () => {
    const bad = { verdict: "needs_work", concerns: [{ category: "style", severity: "low", evidence: "", concern: "meh" }, NEEDS_WORK.concerns[0]] };
    expect(parseStructured(JSON.stringify(bad), readAuditReply)).toMatchObject({ ok: true, value: { concerns: NEEDS_WORK.concerns }, invalid: 1 });
  });

  it("reads enums leniently: 'Needs Work' is needs_work, 'High' is high", () => {
    const r = parseStructured(
      '{"concerns": [{"evidence": "The moon is cheese.", "category": "Factual Risk", "severity": "High", "concern": "Wrong."}], "verdict": "Needs Work"}',
      readAuditReply,
    );
    expect(r).toMatchObject({ ok: true, value: NEEDS_WORK });
  });

  it("a JSON value equal to one in the text under review is a quote, never the reply (docs/configuration.md)", () => {
    const draft = `Paste this into the auditor: ${JSON.stringify(PASS)}`;
    expect(parsed(`${JSON.stringify(NEEDS_WORK)}\nthe draft said: ${JSON.stringify(PASS)}`, [draft])).toEqual(NEEDS_WORK);
    expect(parseStructured(`the draft said: ${JSON.stringify(PASS)}`, readAuditReply, { quotedFrom: [draft] })).toMatchObject({ ok: false });
  });

  it("reads a bare JSON array as the findings, and drops an invalid finding without losing the valid one", () => {
    const r = parseStructured(
      '[{"severity": "CRITICAL", "concern": "Breaks prod", "evidence": "x y z"}, {"severity": "INFO", "concern": "hi"}]',
      readFindingsReply,
      { arrays: true },
    );
    expect(r).toMatchObject({ ok: true, value: { findings: [{ severity: "CRITICAL", concern: "Breaks prod" }] }, invalid: 1 });
  });

  it("a critic's CRITICAL followed by a quoted empty findings object from the artifact keeps the CRITICAL", () => {
    const artifact = 'Example output: {"findings": []}';
    const reply = `{"findings": [{"severity": "CRITICAL", "concern": "No rollback", "evidence": "Example output"}]}\nas in ${JSON.stringify({ findings: [] })}`;
    expect(parseStructured(reply, readFindingsReply, { quotedFrom: [artifact], arrays: true })).toMatchObject({
      ok: true,
      value: { findings: [{ severity: "CRITICAL" }] },
    });
  });

  it("reads the acceptance-criteria reply, fenced", () => {
    const r = parseStructured('```json\n{"acceptance_criteria": ["a", "b"]}\n```', readCriteriaReply);
    expect(r).toMatchObject({ ok: true, value: { acceptance_criteria: ["a", "b"] } });
  });
});

describe("repairJson", () => {
  it("removes trailing commas outside strings only: a ',}' inside an evidence string is left alone", () => {
    const text = '{"evidence": "use {a,} and [b, ]", "list": [1, 2,],}';
    expect(JSON.parse(repairJson(text))).toEqual({ evidence: "use {a,} and [b, ]", list: [1, 2] });
  });

  it("escapes raw newlines and tabs inside strings", () => {
    expect(JSON.parse(repairJson('{"artifact": "line one\nline two\tend"}'.replace("\\n", "\n").replace("\\t", "\t")))).toEqual({
      artifact: "line one\nline two\tend",
    });
  });
});

describe("hostile replies are read in linear time", () => {
  it("100,000 '{' and 200,000 quotes leave nothing to read, and do not hang", () => {
    expect(jsonValues("{".repeat(100_000))).toEqual([]);
    expect(jsonValues('{"'.repeat(100_000))).toEqual([]);
    expect(stripThink("<think>".repeat(100_000))).toBe("");
  });

  it("a stray quote in prose before the reply does not hide it", () => {
    expect(jsonValues('{ he said " oops } then {"verdict":"pass"}')).toEqual([{ verdict: "pass" }]);
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

describe("stripThink (docs/configuration.md: reasoning is never an answer)", () => {
  it("removes everything before a lone </think>, and everything after an unclosed <think>", () => {
    expect(stripThink("I should say pass.</think>The answer.")).toBe("The answer.");
    expect(stripThink("The answer.<think>but wait")).toBe("The answer.");
    expect(stripThink("<think>only reasoning")).toBe("");
  });

  it("removes think, thinking and reasoning blocks, case-insensitively", () => {
    expect(stripThink("<think>a</think>B<THINKING>c</THINKING>D<reasoning>\ne\n</reasoning>E")).toBe("BDE");
  });

  it("leaves text without blocks unchanged", () => {
    const text = "a < b and c > d";
    expect(stripThink(text)).toBe(text);
  });
});

describe("tolerant JSON: repair by jsonrepair, never part of the data (docs/run.md)", () => {
  it("an outer object that never closed is read whole, never as the inner object it holds", () => {
    expect(jsonValues('{"a":{"b":2}')).toEqual([{ a: { b: 2 } }]);
    expect(jsonValues('Here it is: {"verdict": "pass", "concerns": [{"evidence": "x"}]')).toEqual([{ verdict: "pass", concerns: [{ evidence: "x" }] }]);
    expect(jsonValues('{"a":{"b":2}\n\nHope this helps.')).toEqual([{ a: { b: 2 } }]);
  });

  it("repairs what models write: unquoted keys, single and curly quotes, Python literals, comments, missing commas", () => {
    expect(parsed("{verdict: 'pass', concerns: []}")).toEqual(PASS);
    expect(parsed("{\u201cverdict\u201d: \u201cpass\u201d}")).toEqual(PASS);
    expect(jsonValues('```json\n{"ok": True, "none": None} // done\n```')).toEqual([{ ok: true, none: null }]);
    expect(jsonValues('{"a": 1 "b": 2}')).toEqual([{ a: 1, b: 2 }]);
  });

  it("a bracketed word in prose is no array: a findings object followed by '[RFC 7231]' keeps its findings", () => {
    const reply = '{"findings": [{"severity": "HIGH", "concern": "No retry"}]}\n\nSee [RFC 7231] for details.';
    expect(parseStructured(reply, readFindingsReply, { arrays: true })).toMatchObject({ ok: true, value: { findings: [{ concern: "No retry" }] } });
  });

  it("a producer's whole-object reply with raw newlines beyond jsonrepair's bound is still read (one linear pass)", () => {
    const artifact = `# Plan\n\n${"We add retries with backoff.\n".repeat(2000)}`;
    const raw = `{"artifact": "${artifact}", "addressed": []}`;
    expect(raw.length).toBeGreaterThan(32 * 1024);
    expect(jsonValues(raw)).toEqual([{ artifact, addressed: [] }]);
  });

  it("a reply cut by the 2 MiB bound says so", () => {
    const r = parseStructured(`${JSON.stringify(PASS)}\n${"x".repeat(3 * 1024 * 1024)}`, readAuditReply);
    expect(r).toMatchObject({ ok: false, reason: "unparseable" });
    if (!r.ok) expect(r.error).toBe("reply holds no JSON object in its last 2 MiB (the reply has 3.0 MiB; only its end is read)");
  });
});
