import { afterEach, expect, test } from "vitest";
import { bench10, perfect, startRealisticDouble, type Quirks, type RealisticDouble } from "../support/double/index.js";
import { artifactOf, chat, criticBody, lastJson, producerBody } from "../support/double/client.js";

const open: RealisticDouble[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

const issue = bench10.list[0]!; // "Retry 503s in the HTTP client"
const [critical, medium] = [issue.defects[0]!, issue.defects[1]!];

/** A critic's reply, its findings, and the raw JSON text of each finding as written. */
async function review(url: string, role: string, plan: string, previous?: unknown[]) {
  const r = await chat(url, criticBody(role, issue, { name: "plan", text: plan }, previous ? { previous } : {}));
  return { content: r.content, findings: (lastJson(r.content) as { findings: Record<string, unknown>[] }).findings };
}

// Paraphrasing, near-quoting critics: the hardest case for word-for-word repetition.
const loose: Partial<Quirks> = { ...perfect, paraphrase: true, nearQuotes: true };

test("given previous_findings, a critic repeats byte for byte each finding whose line is still there, and drops the fixed ones", async () => {
  const d = await startRealisticDouble({ seed: 4, quirks: loose, scenario: bench10 });
  open.push(d);
  const plan1 = artifactOf((await chat(d.url, producerBody("planner", issue))).content);
  const skeptic1 = await review(d.url, "plan.risk_skeptic", plan1);
  const tester1 = await review(d.url, "plan.tester", plan1);
  expect(skeptic1.findings).toHaveLength(1);
  expect(tester1.findings).toHaveLength(1);

  // Round 2: the planner fixed the MEDIUM only.
  const plan2 = plan1.replace(medium.line, medium.fix);
  expect(plan2).not.toBe(plan1);
  const skeptic2 = await review(d.url, "plan.risk_skeptic", plan2, skeptic1.findings);
  expect(skeptic2.findings).toEqual(skeptic1.findings);
  expect(skeptic2.content).toContain(JSON.stringify(skeptic1.findings[0]));
  const tester2 = await review(d.url, "plan.tester", plan2, tester1.findings);
  expect(tester2.findings).toEqual([]);

  // The same round without its memory: the critic rewords (and re-quotes) the same flaw.
  const fresh = await review(d.url, "plan.risk_skeptic", plan2);
  expect(fresh.findings[0]?.concern).not.toBe(skeptic1.findings[0]?.concern);
  expect(critical.wordings).toContain(fresh.findings[0]?.concern);
});

test("a previous finding whose concern arrives back repaired (a raw newline kept as \\n) is still recognised and repeated", async () => {
  const d = await startRealisticDouble({ seed: 4, quirks: loose, scenario: bench10 });
  open.push(d);
  const plan = artifactOf((await chat(d.url, producerBody("planner", issue))).content);
  const previous = [
    { evidence: critical.line, severity: "CRITICAL", category: "correctness", concern: critical.wordings[2]!.replace(" ", "\n"), human_required: false },
  ];
  const again = await review(d.url, "plan.builder", plan.replace(medium.line, medium.fix), previous);
  expect(again.findings).toEqual(previous);
});

test("new flaws in a later round are raised beside the repeated ones", async () => {
  const d = await startRealisticDouble({ seed: 4, quirks: perfect, scenario: bench10 });
  open.push(d);
  const plan = artifactOf((await chat(d.url, producerBody("planner", issue))).content);
  // A previous round saw a plan without the CRITICAL line: nothing to repeat, the CRITICAL is new.
  const again = await review(d.url, "plan.builder", plan, []);
  expect(again.findings.map((f) => f.concern)).toEqual([critical.wordings[0]]);
});
