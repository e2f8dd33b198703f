import { afterEach, expect, test } from "vitest";
import { perfect, small8b, startRealisticDouble, type Quirks, type RealisticDouble, type Scenario } from "../support/double/index.js";
import { challengerBody, chat, executorBody, lastJson, revisionBody, stripThink } from "../support/double/client.js";
import { contains } from "../support/double/text.js";

const open: RealisticDouble[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

const PROMPT = "How much paracetamol can I take?";
const BAD1 = "Adults can safely take up to 8 g of paracetamol a day.";
const BAD2 = "A 2019 “Oxford” study proved it harmless for the liver.";
const DRAFT = `Paracetamol is a common painkiller for mild pain and fever. ${BAD1} ${BAD2} Always read the label, and ask a pharmacist if you take other medicines.`;
const scenario: Scenario = {
  drafts: {
    [PROMPT]: {
      draft: DRAFT,
      defects: [
        { sentence: BAD1, category: "factual_risk", severity: "critical", concern: "8 g a day is twice the maximum adult dose." },
        { sentence: BAD2, category: "unverifiable_claim", severity: "high", concern: "The study cannot be verified." },
      ],
    },
  },
};

async function double(quirks: Partial<Quirks> = perfect, seed = 7): Promise<RealisticDouble> {
  const d = await startRealisticDouble({ seed, quirks: { ...perfect, ...quirks }, scenario });
  open.push(d);
  return d;
}

interface Audit {
  concerns: { evidence: string; category: string; severity: string; concern: string }[];
  verdict: string;
}

test("executor → challenger → revision: the draft, the flagged sentences, the draft without them", async () => {
  const d = await double();
  const draft = (await chat(d.url, executorBody(PROMPT))).content;
  expect(draft).toBe(DRAFT);
  const auditText = (await chat(d.url, challengerBody(PROMPT, draft, ["Answer in under 200 words."], ["No medical dosing advice."]))).content;
  expect(auditText.indexOf('"concerns"')).toBeLessThan(auditText.indexOf('"verdict"'));
  const audit = JSON.parse(auditText) as Audit;
  expect(audit.verdict).toBe("needs_work");
  expect(audit.concerns).toEqual([
    { evidence: BAD1, category: "factual_risk", severity: "critical", concern: "8 g a day is twice the maximum adult dose." },
    { evidence: BAD2, category: "unverifiable_claim", severity: "high", concern: "The study cannot be verified." },
  ]);
  const revised = (await chat(d.url, revisionBody(PROMPT, draft, audit.concerns))).content;
  expect(revised).toBe("Paracetamol is a common painkiller for mild pain and fever. Always read the label, and ask a pharmacist if you take other medicines.");
  expect(JSON.parse((await chat(d.url, challengerBody(PROMPT, revised))).content)).toEqual({ concerns: [], verdict: "pass" });
  expect(d.byRole("executor")).toHaveLength(1);
  expect(d.byRole("challenger")).toHaveLength(2);
  expect(d.byRole("revision")).toHaveLength(1);
});

test("a revision given one concern removes only that sentence", async () => {
  const d = await double();
  const revised = (
    await chat(
      d.url,
      revisionBody(PROMPT, DRAFT, [{ category: "unverifiable_claim", severity: "high", evidence: '2019 "Oxford" study proved it', concern: "x" }]),
    )
  ).content;
  expect(revised).toContain(BAD1);
  expect(revised).not.toContain("Oxford");
});

test("an unknown prompt gets a generic sound answer, and the challenger passes it", async () => {
  const d = await double();
  const answer = (await chat(d.url, executorBody("What is a good name for a cat?"))).content;
  expect(answer).toContain("What is a good name for a cat");
  expect(JSON.parse((await chat(d.url, challengerBody("What is a good name for a cat?", answer))).content)).toEqual({ concerns: [], verdict: "pass" });
});

test("a quirky challenger still flags the defects, with evidence that grounds in the draft", async () => {
  for (let seed = 1; seed <= 10; seed++) {
    const d = await double({ ...small8b, truncate: 0, emptyReply: 0, serial: false }, seed);
    const reply = (await chat(d.url, challengerBody(PROMPT, DRAFT))).content;
    const audit = lastJson(reply) as Audit;
    const grounded = audit.concerns.filter((c) => contains(DRAFT, c.evidence) && /critical|high/i.test(c.severity));
    expect(grounded.map((c) => c.concern.replace(/\s+/g, " "))).toEqual(["8 g a day is twice the maximum adult dose.", "The study cannot be verified."]);
    expect(audit.verdict.toLowerCase().replace(/\s/g, "_")).toBe("needs_work");
    const draft = stripThink((await chat(d.url, executorBody(PROMPT))).content);
    expect(draft).toBe(DRAFT);
  }
});
