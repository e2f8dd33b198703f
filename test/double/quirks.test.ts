import { afterEach, describe, expect, test } from "vitest";
import { bench10, perfect, startRealisticDouble, type Quirks, type RealisticDouble, type Scenario } from "../support/double/index.js";
import {
  artifactOf,
  challengerBody,
  chat,
  criticBody,
  lastJson,
  producerBody,
  repairJson,
  revisionBody,
  stripThink,
  type Body,
} from "../support/double/client.js";
import { contains } from "../support/double/text.js";

const open: RealisticDouble[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

async function double(quirks: Partial<Quirks>, seed = 7, scenario: Scenario = bench10): Promise<RealisticDouble> {
  const d = await startRealisticDouble({ seed, quirks: { ...perfect, ...quirks }, scenario });
  open.push(d);
  return d;
}

const retry = bench10.list[0]!; // "Retry 503s in the HTTP client": a CRITICAL (2 lanes) and a MEDIUM in the plan
const csv = bench10.list[2]!; // a HIGH in the shape that two lanes notice
const critical = retry.defects[0]!;

/** The plan the perfect planner writes for an issue. */
async function planOf(issue = retry): Promise<string> {
  const d = await double({});
  return artifactOf((await chat(d.url, producerBody("planner", issue))).content);
}

interface F {
  evidence: string;
  severity: string;
  category: string;
  concern: string;
  human_required: boolean;
}
const findingsOf = (content: string) => (lastJson(content) as { findings: F[] } | undefined)?.findings ?? [];

describe("quirks, each visible in the raw replies", () => {
  test("perfect: one bare JSON object, verbatim evidence", async () => {
    const plan = await planOf();
    const d = await double({});
    const r = await chat(d.url, criticBody("plan.risk_skeptic", retry, { name: "plan", text: plan }));
    const v = JSON.parse(r.content) as { findings: F[] };
    expect(v.findings).toEqual([
      { evidence: critical.line, severity: "CRITICAL", category: "correctness", concern: critical.wordings[0], human_required: false },
    ]);
    expect(r.finishReason).toBe("stop");
  });

  test("think: reasoning before the answer, as <think>…</think> or a lone </think>, sometimes holding a different JSON answer", async () => {
    const plan = await planOf();
    const shapes = new Set<string>();
    let differentJson = 0;
    for (let seed = 1; seed <= 24; seed++) {
      const d = await double({ think: true }, seed);
      const r = await chat(d.url, criticBody("plan.builder", retry, { name: "plan", text: plan }));
      expect(r.content).toContain("</think>");
      shapes.add(r.content.startsWith("<think>") ? "closed" : "lone");
      const reasoning = r.content.slice(0, r.content.indexOf("</think>"));
      const inThink = /\{"findings":.*\}/.exec(reasoning)?.[0];
      const answer = stripThink(r.content);
      if (inThink !== undefined && inThink !== answer) differentJson++;
      expect(findingsOf(r.content)).toHaveLength(1);
    }
    expect(shapes).toEqual(new Set(["closed", "lone"]));
    expect(differentJson).toBeGreaterThan(0);
  });

  test("fences: the JSON in a ```json fence", async () => {
    const d = await double({ fences: true });
    const r = await chat(d.url, criticBody("plan.builder", retry, { name: "plan", text: await planOf() }));
    expect(r.content).toMatch(/^```json\n\{[\s\S]*\}\n```$/);
  });

  test("prose: a sentence before and after the JSON", async () => {
    const d = await double({ prose: true });
    const r = await chat(d.url, challengerBody("Is the sky blue?", "Yes, on a clear day the sky looks blue."));
    expect(r.content).toMatch(/^[A-Z][^{]*\n\n\{[\s\S]*\}\n\n[A-Z][^}]*$/);
    expect(lastJson(r.content)).toEqual({ concerns: [], verdict: "pass" });
  });

  test("echo: previous_findings repeated first, then the real answer", async () => {
    const plan = await planOf();
    const d = await double({ echo: true });
    const previous = [
      {
        evidence: "Check the retry behaviour by hand against the staging API.",
        severity: "MEDIUM",
        category: "test_strategy",
        concern: "Old concern.",
        human_required: false,
      },
    ];
    const r = await chat(d.url, criticBody("plan.builder", retry, { name: "plan", text: plan }, { previous }));
    const echoed = JSON.stringify({ findings: previous });
    expect(r.content.startsWith(echoed)).toBe(true);
    expect(findingsOf(r.content).map((f) => f.concern)).toEqual([critical.wordings[0]]);
  });

  test("echo: a pass verdict quoted from the draft comes first", async () => {
    const scenario = {
      drafts: {
        "Summarise the audit.": {
          draft: 'The audit found nothing. It printed {"verdict":"pass","concerns":[]} at the end. The auditors were paid 2 million dollars.',
          defects: [
            {
              sentence: "The auditors were paid 2 million dollars.",
              category: "unverifiable_claim",
              severity: "high" as const,
              concern: "The fee is not supported.",
            },
          ],
        },
      },
    };
    const d = await double({ echo: true }, 7, scenario);
    const draft = scenario.drafts["Summarise the audit."].draft;
    const r = await chat(d.url, challengerBody("Summarise the audit.", draft));
    expect(r.content.startsWith('{"verdict":"pass","concerns":[]}')).toBe(true);
    expect(lastJson(r.content)).toMatchObject({ verdict: "needs_work", concerns: [{ evidence: "The auditors were paid 2 million dollars." }] });
  });

  test('echo: {"findings": []} quoted from the artifact comes first', async () => {
    const plan = `${await planOf()}\n\nThe linter printed {"findings": []} on the last run.`;
    const d = await double({ echo: true });
    const r = await chat(d.url, criticBody("plan.builder", retry, { name: "plan", text: plan }));
    expect(r.content.startsWith('{"findings": []}')).toBe(true);
    expect(findingsOf(r.content)).toHaveLength(1);
  });

  test("offListEnums: case variants and one invalid item", async () => {
    const d = await double({ offListEnums: true });
    const crit = await chat(d.url, criticBody("plan.builder", retry, { name: "plan", text: await planOf() }));
    const findings = findingsOf(crit.content);
    expect(findings[0]?.severity).toBe("Critical");
    expect(findings.at(-1)?.severity).toBe("INFO");
    const gate = await double({ offListEnums: true }, 7, gateScenario);
    const chal = await chat(gate.url, challengerBody(PROMPT, DRAFT));
    const audit = JSON.parse(chal.content) as { verdict: string; concerns: { category: string; severity: string }[] };
    expect(audit.verdict).toBe("Needs Work");
    expect(audit.concerns.map((c) => c.severity)).toEqual(["Critical", "High", "info"]);
    expect(audit.concerns.map((c) => c.category)).toContain("Factual Risk");
    expect(audit.concerns.at(-1)?.category).toBe("style");
  });

  test("rawNewlines: a raw newline inside a JSON string", async () => {
    const d = await double({ rawNewlines: true });
    const r = await chat(d.url, criticBody("plan.builder", retry, { name: "plan", text: await planOf() }));
    expect(() => JSON.parse(r.content) as unknown).toThrow();
    const fixed = JSON.parse(repairJson(r.content)) as { findings: F[] };
    expect(fixed.findings[0]?.concern).toContain("\n");
    expect(fixed.findings[0]?.concern.replace("\n", " ")).toBe(critical.wordings[0]);
  });

  test("trailingCommas: commas before closing brackets", async () => {
    const d = await double({ trailingCommas: true });
    const r = await chat(d.url, criticBody("plan.builder", retry, { name: "plan", text: await planOf() }));
    expect(r.content).toMatch(/,[}\]]/);
    expect(() => JSON.parse(r.content) as unknown).toThrow();
    expect(JSON.parse(repairJson(r.content))).toMatchObject({ findings: [{ concern: critical.wordings[0] }] });
  });

  test("nearQuotes: evidence that differs from the text but grounds after normalising", async () => {
    const kinds = new Set<string>();
    for (const issue of bench10.list) {
      for (const defect of issue.defects) {
        const stage =
          defect.stage === "spec"
            ? "spec.ac_generator"
            : defect.stage === "discover"
              ? "discover.brief"
              : defect.stage === "shape"
                ? "shape.writer"
                : "planner";
        const name = { discover: "brief", shape: "shape", plan: "plan", spec: "acceptance_criteria" }[defect.stage];
        const p = await double({});
        const reply = (await chat(p.url, producerBody(stage, issue))).content;
        const text =
          defect.stage === "spec"
            ? (JSON.parse(reply) as { acceptance_criteria: string[] }).acceptance_criteria.map((c) => `- ${c}`).join("\n")
            : artifactOf(reply);
        const role = defect.lanes[0]!;
        if (role === "plan_reviewer") continue;
        for (let seed = 1; seed <= 6; seed++) {
          const d = await double({ nearQuotes: true }, seed);
          const f = findingsOf((await chat(d.url, criticBody(role, issue, { name, text }))).content).find((x) => x.category === defect.category);
          expect(f).toBeDefined();
          const ev = f!.evidence;
          expect(contains(text, ev)).toBe(true);
          if (ev === defect.line) continue;
          if (ev.charAt(0) !== defect.line.charAt(0)) kinds.add("case");
          if (/[\u2018\u2019\u201c\u201d]/.test(ev) || (/[\u2019\u201c]/.test(defect.line) && !/[\u2019\u201c]/.test(ev))) kinds.add("quotes");
          if (/\u2013/.test(ev) !== /\u2013/.test(defect.line)) kinds.add("dash");
          if (defect.line.includes("**") && !ev.includes("**")) kinds.add("bold");
          if (ev.includes("\u2026")) kinds.add("ellipsis");
          if (ev.includes("\n- ")) kinds.add("bullet");
        }
      }
    }
    expect(kinds).toEqual(new Set(["case", "quotes", "dash", "bold", "ellipsis", "bullet"]));
  });

  test("paraphrase: lanes word the same flaw differently, and a lane rewords it each round", async () => {
    const plan = await planOf();
    const d = await double({ paraphrase: true });
    const skeptic = findingsOf((await chat(d.url, criticBody("plan.risk_skeptic", retry, { name: "plan", text: plan }))).content)[0];
    const builder = findingsOf((await chat(d.url, criticBody("plan.builder", retry, { name: "plan", text: plan }))).content)[0];
    expect(skeptic?.concern).toBe(critical.wordings[0]);
    expect(builder?.concern).toBe(critical.wordings[1]);
    // Round 2: a new draft (the MEDIUM fixed), no previous findings given: the lane rewords.
    const redraft = plan.replace(retry.defects[1]!.line, retry.defects[1]!.fix);
    const again = findingsOf((await chat(d.url, criticBody("plan.risk_skeptic", retry, { name: "plan", text: redraft }))).content)[0];
    expect(again?.concern).toBe(critical.wordings[1]);
    expect(again?.evidence).toBe(critical.line);
    // Without the quirk every lane, every round, says it the same way.
    const plain = await double({});
    for (const [role, text] of [
      ["plan.builder", plan],
      ["plan.risk_skeptic", redraft],
    ] as const) {
      expect(findingsOf((await chat(plain.url, criticBody(role, retry, { name: "plan", text }))).content)[0]?.concern).toBe(critical.wordings[0]);
    }
  });

  test("paraphrase: a tracked concern is not raised again by a disciplined critic, and is by a paraphrasing one", async () => {
    const plan = await planOf();
    const tracked = [
      { id: "PLAN-X-001", severity: "CRITICAL", raised_by: "plan.builder", category: "correctness", concern: critical.wordings[2]!, evidence: critical.line },
    ];
    const plain = await double({});
    expect(findingsOf((await chat(plain.url, criticBody("plan.risk_skeptic", retry, { name: "plan", text: plan }, { tracked }))).content)).toEqual([]);
    const loose = await double({ paraphrase: true });
    expect(findingsOf((await chat(loose.url, criticBody("plan.risk_skeptic", retry, { name: "plan", text: plan }, { tracked }))).content)).toHaveLength(1);
  });

  test("overflag: an ungrounded CRITICAL about the premise, and a human_required LOW from the product strategist", async () => {
    const p = await double({});
    const shape = artifactOf((await chat(p.url, producerBody("shape.writer", csv))).content);
    const d = await double({ overflag: true });
    const findings = findingsOf((await chat(d.url, criticBody("shape.product_strategist", csv, { name: "shape", text: shape }))).content);
    const premise = findings.find((f) => f.concern.includes("central premise is unvalidated"));
    expect(premise?.severity).toBe("CRITICAL");
    expect(contains(shape, premise!.evidence)).toBe(false);
    expect(findings.find((f) => f.severity === "LOW")?.human_required).toBe(true);
    expect(findings[0]?.severity).toBe("CRITICAL");
  });

  test("revisionPreamble: the revision starts with a preamble", async () => {
    const d = await double({ revisionPreamble: true }, 7, gateScenario);
    const r = await chat(d.url, revisionBody(PROMPT, DRAFT, [{ category: "factual_risk", severity: "critical", evidence: BAD1, concern: "x" }]));
    expect(r.content.startsWith("Here is the revised answer:\n\n")).toBe(true);
    expect(r.content).not.toContain(BAD1);
  });

  test("truncate: half the text with finish_reason length, or a stream that stops with no finish reason", async () => {
    const d = await double({ truncate: true });
    const full = await double({});
    const seen = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const body: Body = { ...challengerBody(`Question ${i}?`, `Answer ${i} is certainly right.`), stream: i % 2 === 0 };
      const [cut, whole] = [await chat(d.url, body), await chat(full.url, body)];
      expect(cut.content).toBe(whole.content.slice(0, Math.floor(whole.content.length / 2)));
      if (cut.finishReason === "length") seen.add("length");
      else {
        expect(cut.finishReason).toBeNull();
        expect(cut.raw).not.toContain("[DONE]");
        seen.add("cut");
      }
    }
    expect(seen).toEqual(new Set(["length", "cut"]));
  });

  test("truncate and emptyReply are drawn per attempt: an identical retry can go through", async () => {
    const d = await double({ truncate: 0.5, emptyReply: 0.3 });
    const body = criticBody("plan.builder", retry, { name: "plan", text: await planOf() });
    const outcomes: string[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await chat(d.url, body);
      outcomes.push(r.finishReason === "stop" && r.content.trim() !== "" ? "ok" : "fault");
    }
    expect(outcomes).toContain("ok");
    expect(outcomes).toContain("fault");
  });

  test("emptyReply: nothing, or reasoning only", async () => {
    const d = await double({ emptyReply: true });
    expect((await chat(d.url, challengerBody("Q?", "A."))).content.trim()).toBe("");
    const t = await double({ emptyReply: true, think: true });
    expect(stripThink((await chat(t.url, challengerBody("Q?", "A."))).content)).toBe("");
  });
});

const PROMPT = "How much paracetamol can I take?";
const BAD1 = "Adults can safely take up to 8 g of paracetamol a day.";
const BAD2 = "A 2019 Oxford study proved it harmless for the liver.";
const DRAFT = `Paracetamol is a common painkiller. ${BAD1} ${BAD2} Always read the label.`;
const gateScenario = {
  drafts: {
    [PROMPT]: {
      draft: DRAFT,
      defects: [
        { sentence: BAD1, category: "factual_risk", severity: "critical" as const, concern: "8 g a day is twice the maximum adult dose." },
        { sentence: BAD2, category: "unverifiable_claim", severity: "high" as const, concern: "The study cannot be verified." },
      ],
    },
  },
};
