import { afterEach, describe, expect, test } from "vitest";
import { bench10, perfect, startRealisticDouble, type Quirks, type RealisticDouble } from "../support/double/index.js";
import { artifactOf, chat, complexityBody, criticBody, lastJson, producerBody, reviewerBody, stripThink, type Concern } from "../support/double/client.js";

const open: RealisticDouble[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

async function double(quirks: Partial<Quirks> = {}): Promise<RealisticDouble> {
  const d = await startRealisticDouble({ seed: 9, quirks: { ...perfect, ...quirks }, scenario: bench10 });
  open.push(d);
  return d;
}

const retry = bench10.list[0]!;
const [critical, medium] = [retry.defects[0]!, retry.defects[1]!];
const sessions = bench10.list[4]!; // a HIGH in the brief, two CRITICALs in the plan
const rateLimit = bench10.list[6]!; // a HIGH in the spec

const concernOf = (
  id: string,
  d: { severity: string; category: string; wordings: readonly string[]; line: string },
  wording = 0,
  raisedBy = "plan.risk_skeptic",
): Concern => ({
  id,
  severity: d.severity,
  raised_by: raisedBy,
  category: d.category,
  concern: d.wordings[wording]!,
  evidence: d.line,
});

interface Addressed {
  concern_id: string;
  resolution_kind: string;
  note: string;
}
const addressedOf = (content: string) => {
  const m = /```json\n([\s\S]*)\n```\s*$/.exec(stripThink(content));
  return m ? (JSON.parse(m[1]!) as { addressed: Addressed[] }).addressed : undefined;
};

describe("producers", () => {
  test("a first draft is a markdown artifact from the issue's words, with every defect line of its stage", async () => {
    const d = await double();
    const plan = (await chat(d.url, producerBody("planner", retry))).content;
    expect(plan.startsWith(`# Plan: ${retry.title}\n`)).toBe(true);
    expect(plan).toContain("## Steps");
    expect(plan).toContain("gives up on the first 503");
    expect(plan).toContain(`- ${critical.line}`);
    expect(plan).toContain(`- ${medium.line}`);
    expect(plan).not.toContain("## Decisions");
    const brief = (await chat(d.url, producerBody("discover.brief", retry))).content;
    expect(brief.startsWith(`# Brief: ${retry.title}\n`)).toBe(true);
    expect(brief).not.toContain(critical.line);
  });

  test("a fixing producer replaces the line by its fix, reports it, and the critics go quiet", async () => {
    const d = await double();
    const draft = (await chat(d.url, producerBody("planner", retry))).content;
    const blocking = [concernOf("PLAN-RISK_SKEPTIC-001", critical, 1)]; // a paraphrase from another lane is recognised too
    const reply = (await chat(d.url, producerBody("planner", retry, { retry: { draft, blocking } }))).content;
    const plan = artifactOf(reply);
    expect(plan).toContain(`- ${critical.fix}`);
    expect(plan).not.toContain(critical.line);
    expect(plan).toContain(`- ${medium.line}`); // not asked about it
    expect(plan).toMatch(/## Decisions\n- PLAN-RISK_SKEPTIC-001: /);
    expect(addressedOf(reply)).toEqual([{ concern_id: "PLAN-RISK_SKEPTIC-001", resolution_kind: "addressed-in-code", note: `Now: ${critical.fix}` }]);
    for (const role of critical.lanes) {
      const r = await chat(d.url, criticBody(role, retry, { name: "plan", text: plan }));
      expect(lastJson(r.content)).toEqual({ findings: [] });
    }
  });

  test("an ignoring producer writes the same artifact again, so the critics raise the same findings", async () => {
    const d = await double({ producerIgnores: true });
    const first = (await chat(d.url, producerBody("planner", retry))).content;
    const blocking = [concernOf("PLAN-RISK_SKEPTIC-001", critical)];
    const again = (await chat(d.url, producerBody("planner", retry, { retry: { draft: first, blocking } }))).content;
    expect(again).toBe(first);
    expect(addressedOf(again)).toBeUndefined();
    const [a, b] = [
      await chat(d.url, criticBody("plan.builder", retry, { name: "plan", text: artifactOf(first) })),
      await chat(d.url, criticBody("plan.builder", retry, { name: "plan", text: artifactOf(again) })),
    ];
    expect(b.content).toBe(a.content);
  });

  test("producerClaimsIgnored: a CRITICAL is reported ignored and left in; the rest are fixed", async () => {
    const d = await double({ producerClaimsIgnored: true });
    const draft = (await chat(d.url, producerBody("planner", retry))).content;
    const blocking = [concernOf("C1", critical), concernOf("M1", medium, 0, "plan.tester")];
    const reply = (await chat(d.url, producerBody("planner", retry, { retry: { draft, blocking } }))).content;
    const plan = artifactOf(reply);
    expect(plan).toContain(critical.line);
    expect(plan).toContain(medium.fix);
    expect(addressedOf(reply)?.map((a) => [a.concern_id, a.resolution_kind])).toEqual([
      ["C1", "ignored"],
      ["M1", "addressed-in-test"],
    ]);
  });

  test("pending concerns from an earlier stage are carried into the artifact; unknown ones are deferred", async () => {
    const d = await double();
    const disc = sessions.defects[0]!;
    const pending = [
      concernOf("DISCOVER-ASSUMPTION_SURFACER-001", disc, 0, "assumption_surfacer"),
      { id: "X-1", severity: "MEDIUM", raised_by: "shape.tech_lead", category: "other", concern: "Something the world knows nothing about." },
    ];
    const reply = (await chat(d.url, producerBody("shape.writer", sessions, { pending }))).content;
    const shape = artifactOf(reply);
    expect(shape).toContain(`## Constraints carried forward\n- ${disc.fix}`);
    expect(addressedOf(reply)?.map((a) => a.resolution_kind)).toEqual(["addressed-in-code", "deferred"]);
  });

  test("a retry keeps the fixes of the previous draft", async () => {
    const d = await double();
    const draft1 = (await chat(d.url, producerBody("planner", retry))).content;
    const draft2 = (await chat(d.url, producerBody("planner", retry, { retry: { draft: draft1, blocking: [concernOf("C1", critical)] } }))).content;
    const draft3 = (await chat(d.url, producerBody("planner", retry, { retry: { draft: draft2, blocking: [concernOf("M1", medium, 2, "plan.tester")] } })))
      .content;
    const plan = artifactOf(draft3);
    expect(plan).toContain(critical.fix);
    expect(plan).toContain(medium.fix);
  });

  test("spec.ac_generator answers {acceptance_criteria, addressed?} and fixes a criterion on request", async () => {
    const d = await double();
    const spec = rateLimit.defects[1]!;
    const first = (await chat(d.url, producerBody("spec.ac_generator", rateLimit, { artifacts: { plan: "# Plan" } }))).content;
    const v1 = JSON.parse(first) as { acceptance_criteria: string[]; addressed?: unknown };
    expect(v1.acceptance_criteria).toContain(spec.line);
    expect(v1.addressed).toBeUndefined();
    const second = (
      await chat(d.url, producerBody("spec.ac_generator", rateLimit, { retry: { draft: first, blocking: [concernOf("S1", spec, 0, "spec.judge")] } }))
    ).content;
    const v2 = JSON.parse(second) as { acceptance_criteria: string[]; addressed: Addressed[] };
    expect(v2.acceptance_criteria).toContain(spec.fix);
    expect(v2.acceptance_criteria).not.toContain(spec.line);
    expect(v2.addressed.map((a) => a.concern_id)).toEqual(["S1"]);
  });

  test("complexity_gate: TRIVIAL for the typo issue, LOAD-BEARING for the rest; unknown issues by their words", async () => {
    const d = await double();
    const words = await Promise.all(bench10.list.map(async (i) => (await chat(d.url, complexityBody(i))).content));
    expect(words).toEqual(bench10.list.map((i) => (i.kind === "trivial" ? "TRIVIAL" : "LOAD-BEARING")));
    expect((await chat(d.url, complexityBody({ title: "Fix a typo in the docs", body: "" }))).content).toBe("TRIVIAL");
    expect((await chat(d.url, complexityBody({ title: "Add SSO login", body: "" }))).content).toBe("LOAD-BEARING");
  });
});

describe("plan_reviewer", () => {
  test("confirms the pending concerns the plan answers, raises the CRITICAL/HIGH ones it leaves open, never trusts a claim", async () => {
    const d = await double();
    const [c1, c2] = [sessions.defects[1]!, sessions.defects[2]!];
    // The planner fixed c1 and only claimed c2.
    const plan = artifactOf((await chat(d.url, producerBody("planner", sessions, { retry: { draft: "", blocking: [concernOf("C1", c1)] } }))).content);
    expect(plan).toContain(c1.fix);
    expect(plan).toContain(c2.line);
    const pending = [concernOf("C1", c1), concernOf("C2", c2), concernOf("D1", sessions.defects[0]!, 0, "assumption_surfacer")];
    const claims = [
      { concern_id: "C1", resolution_kind: "addressed-in-code", note: "dual write" },
      { concern_id: "C2", resolution_kind: "addressed-in-code", note: "trust me" },
    ];
    const r = JSON.parse((await chat(d.url, reviewerBody(sessions, plan, ["It works."], pending, claims))).content) as {
      findings: { evidence: string; severity: string; dimension: string; concern: string }[];
      addressed: Addressed[];
    };
    expect(r.addressed.map((a) => a.concern_id)).toEqual(["C1"]);
    expect(r.findings).toEqual([
      expect.objectContaining({ evidence: c2.line, severity: "CRITICAL", dimension: "security", concern: c2.wordings[0] }),
      // An omission: the brief's HIGH was never carried into the plan; its evidence is the heading it belongs under.
      expect.objectContaining({ evidence: "## Steps", severity: "HIGH", concern: sessions.defects[0]!.wordings[0] }),
    ]);
  });

  test("raises a flaw of its own lane that the council let through", async () => {
    const d = await double();
    const webhooks = bench10.list[8]!;
    const plan = artifactOf((await chat(d.url, producerBody("planner", webhooks))).content);
    const r = lastJson((await chat(d.url, reviewerBody(webhooks, plan, [], []))).content) as { findings: { concern: string; dimension: string }[] };
    const missed = webhooks.defects.find((x) => x.id === "WH-PLAN-2");
    expect(r.findings.map((f) => [f.concern, f.dimension])).toEqual([[missed?.wordings[0], "reproduction"]]);
  });
});
