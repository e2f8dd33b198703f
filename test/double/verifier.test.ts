import { afterEach, expect, test } from "vitest";
import { ground, groundingText } from "../../src/adversarial/grounding.js";
import { artifactOf, chat, criticBody, lastJson, producerBody, verifierBody } from "../support/double/client.js";
import { bench10, frontier, perfect, startRealisticDouble, type RealisticDouble } from "../support/double/index.js";

const open: RealisticDouble[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

const byTitle = (title: string) => bench10.list.find((i) => i.title === title) as (typeof bench10.list)[number];

test("the verifier confirms a real defect the artifact still carries, quoting its line; refutes a nitpick with a reason", async () => {
  const d = await startRealisticDouble({ seed: 3, quirks: frontier, scenario: bench10 });
  open.push(d);
  // A real hole (the SSRF of the Sheets importer) and a nitpick (a label's wording), each raised by one persona.
  for (const [title, id, expected] of [
    ["Import contacts from a Google Sheets link", "GS-PLAN-1", "confirm"],
    ["Show the last login time on the profile page", "LL-PLAN-2", "refute"],
  ] as const) {
    const issue = byTitle(title);
    const defect = issue.defects.find((x) => x.id === id);
    if (!defect) throw new Error(id);
    const plan = artifactOf((await chat(d.url, producerBody("planner", issue))).content);
    const raised = lastJson((await chat(d.url, criticBody(defect.lanes[0] as string, issue, { name: "plan", text: plan }))).content) as {
      findings: { severity: string; concern: string; evidence: string }[];
    };
    const finding = raised.findings.find((f) => f.severity.toUpperCase() === "HIGH");
    expect(finding, id).toBeDefined();
    const answer = lastJson(
      (await chat(d.url, verifierBody(issue, { name: "plan", text: plan }, finding as { severity: string; concern: string }))).content,
    ) as {
      evidence: string;
      reason: string;
      verdict: string;
    };
    expect(Object.keys(answer)).toEqual(["evidence", "reason", "verdict"]);
    expect(answer.verdict).toBe(expected);
    expect(answer.reason.length).toBeGreaterThan(20);
    if (expected === "confirm") expect(ground(groundingText(plan), answer.evidence).grounded).toBe(true);
  }
});

test("once the line is fixed, the verifier refutes the same finding: it is about something the artifact no longer says", async () => {
  const d = await startRealisticDouble({ seed: 3, quirks: perfect, scenario: bench10 });
  open.push(d);
  const issue = byTitle("Import contacts from a Google Sheets link");
  const defect = issue.defects.find((x) => x.id === "GS-PLAN-1");
  if (!defect) throw new Error("GS-PLAN-1");
  const plan = artifactOf((await chat(d.url, producerBody("planner", issue))).content).replace(defect.line, defect.fix);
  const answer = lastJson(
    (await chat(d.url, verifierBody(issue, { name: "plan", text: plan }, { severity: "HIGH", concern: defect.wordings[0] as string, evidence: defect.line })))
      .content,
  ) as { verdict: string };
  expect(answer.verdict).toBe("refute");
});

test("a surfacer shown a known gap its artifact repeats ties the finding to that gap's id; without the block, no known_gap", async () => {
  const title = "Store API tokens in the Redis cache cluster";
  const scenario = {
    issues: {
      [title]: [
        {
          id: "TOK-1",
          stage: "plan" as const,
          line: "Keep the API tokens under the cache's default Redis user.",
          fix: "Keep the API tokens under a Redis user of their own.",
          lanes: ["assumption_surfacer"],
          severity: "HIGH" as const,
          category: "assumption",
          wordings: ["Assumes the shared cache Redis user is private.", "b", "c"],
          gap: "shared Redis user is readable by every service",
        },
      ],
    },
  };
  const d = await startRealisticDouble({ seed: 3, quirks: perfect, scenario });
  open.push(d);
  const issue = { title, body: "Keep tokens next to the sessions." };
  const plan = artifactOf((await chat(d.url, producerBody("planner", issue))).content);
  const gaps =
    "- [redis-shared-user-1a2b3c4d] HIGH Session data under the cache's shared Redis user is readable by every service that uses the cache. (shipped in PR #12)";
  const withGaps = lastJson((await chat(d.url, criticBody("assumption_surfacer", issue, { name: "plan", text: plan }, { knownGaps: gaps }))).content) as {
    findings: Record<string, unknown>[];
  };
  expect(withGaps.findings).toEqual([expect.objectContaining({ known_gap: "redis-shared-user-1a2b3c4d", severity: "HIGH" })]);
  const without = lastJson((await chat(d.url, criticBody("assumption_surfacer", issue, { name: "plan", text: plan }))).content) as {
    findings: Record<string, unknown>[];
  };
  expect(without.findings[0]?.known_gap).toBeUndefined();
});
