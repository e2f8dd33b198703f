/**
 * The tally, grounding and parsing on what a real frontier model wrote for next-auth #4625
 * (test/fixtures/real-model): its replies parse, its serious findings ground against the artifacts
 * it reviewed, and the two HIGHs that should have blocked — 0107 (a pre-account-takeover hole) and
 * 0110 (the guard refuses every OAuth-to-OAuth link) — are lone grounded HIGHs that now go to a
 * second opinion, where the r2 tally had made them MEDIUM. Replies are matched by role and round.
 */
import { describe, expect, it } from "vitest";
import { ground, groundingText } from "../../src/adversarial/grounding.js";
import { settleLone } from "../../src/adversarial/second-opinion.js";
import { tally, type Vote } from "../../src/adversarial/tally.js";
import type { Finding } from "../../src/contracts/concern.js";
import { parseFindings } from "../../src/pipeline/roles.js";
import { STAGES } from "../../src/pipeline/stages.js";
import { recordedRun, type RecordedCall } from "../support/real-model.js";

const run = recordedRun();
const byN = (n: string) => run.find((c) => c.n === n) as RecordedCall;
const underReview = (c: RecordedCall) => c.blocks.find((b) => b.kind === "under_review")?.text ?? "";
const findingsOf = (c: RecordedCall): Finding[] => {
  const parsed = parseFindings(c.reply, [underReview(c)]);
  if (!parsed.ok) throw new Error(`${c.n} (${c.role}) did not parse: ${parsed.error}`);
  return parsed.value.findings;
};
/** A stage's round 1 as the model answered it: its critics' votes on the artifact they reviewed. */
function round1(phase: "discover" | "shape" | "plan") {
  const stage = STAGES.find((s) => s.phase === phase);
  if (!stage) throw new Error(phase);
  const calls = stage.critics.map(
    (role) => run.find((c) => c.role === role && c.blocks.some((b) => b.kind === "under_review" && b.name === stage.artifact)) as RecordedCall,
  );
  const artifact = underReview(calls[0] as RecordedCall);
  for (const c of calls) expect(underReview(c), c.n).toBe(artifact); // every critic reviewed the same draft
  const votes: Vote[] = calls.map((c) => ({ role: c.role, findings: findingsOf(c) }));
  const t = tally(votes, {
    stage: stage.stage,
    phase: stage.phase,
    mustAddressBy: stage.mustAddressBy,
    criticCount: stage.critics.length,
    artifact: groundingText(artifact),
    idFor: (fp, role) => `${phase.toUpperCase()}-${role}-${fp.slice(0, 6)}`,
    now: () => "2026-11-26T00:00:00.000Z",
  });
  return { t, artifact };
}

describe("the recorded run of next-auth #4625", () => {
  const PRODUCERS = new Set(["discover.brief", "shape.writer", "planner", "spec.ac_generator"]);

  it("is the first cycle: 20 calls, every pipeline role but the gate and the verifier (critics asked in parallel, in any order)", () => {
    expect(run).toHaveLength(20);
    const expected = [
      "discover.brief",
      ...(STAGES[0]?.critics ?? []),
      "shape.writer",
      ...(STAGES[1]?.critics ?? []),
      "planner",
      ...(STAGES[2]?.critics ?? []),
      "spec.ac_generator",
      "spec.judge",
      "spec.ac_generator",
      "spec.judge",
      "plan_reviewer",
    ];
    expect(run.map((c) => c.role).sort()).toEqual(expected.sort());
    expect(run.filter((c) => PRODUCERS.has(c.role)).map((c) => c.role)).toEqual([
      "discover.brief",
      "shape.writer",
      "planner",
      "spec.ac_generator",
      "spec.ac_generator",
    ]);
  });

  it("every critic, judge and reviewer reply parses as findings, and every CRITICAL or HIGH it raised quotes the artifact it reviewed", () => {
    const council = run.filter((c) => !PRODUCERS.has(c.role));
    expect(council).toHaveLength(15);
    for (const c of council) {
      const findings = findingsOf(c);
      const reviewed =
        c.role === "plan_reviewer" ? `${underReview(c)}\n\n${c.blocks.find((b) => b.name === "acceptance_criteria")?.text ?? ""}` : underReview(c);
      for (const f of findings.filter((x) => x.severity === "HIGH" || x.severity === "CRITICAL")) {
        expect(ground(groundingText(reviewed), f.evidence ?? "").grounded, `${c.n} ${c.role}: ${f.evidence}`).toBe(true);
      }
    }
  });

  it("shape (0107): the tech lead's pre-account-takeover HIGH is a lone grounded HIGH — sent to the verifier, where r2 made it MEDIUM", () => {
    const { t } = round1("shape");
    expect(t.ungrounded).toBe(0);
    expect(t.blocking).toEqual([]);
    expect(t.lone.map((c) => [c.raised_by, c.severity])).toEqual([["shape.tech_lead", "HIGH"]]);
    expect(t.lone[0]?.concern).toMatch(/^The guard only checks that the incoming provider verified the email/);
    // Confirmed by a second opinion that quotes the line, it blocks the shape stage.
    const settled = settleLone(t.lone, [
      { kind: "answered", answer: { verdict: "confirm", reason: "real", evidence: t.lone[0]?.evidence ?? "" }, grounded: true, by: "verifier" },
    ]);
    expect(settled.blocking.map((c) => c.raised_by)).toEqual(["shape.tech_lead"]);
  });

  it("plan (0110): the assumption surfacer's HIGH — the guard refuses every OAuth-to-OAuth link — is a lone grounded HIGH", () => {
    const { t } = round1("plan");
    expect(t.ungrounded).toBe(0);
    expect(t.blocking).toEqual([]);
    expect(t.lone.map((c) => [c.raised_by, c.severity])).toEqual([["assumption_surfacer", "HIGH"]]);
    expect(t.lone[0]?.evidence).toBe("the existing user's email is recorded as verified (the user record's email-verified field is set)");
  });

  it("discover: the only finding (a LOW of the problem sharpener) is advice, as the model meant it", () => {
    const { t } = round1("discover");
    expect(t.blocking).toEqual([]);
    expect(t.lone).toEqual([]);
    expect(t.advisory.map((c) => [c.raised_by, c.severity])).toEqual([["discovery.problem_sharpener", "LOW"]]);
  });

  it("spec (0115): the judge's contradiction blocks on its own (one critic), as it did", () => {
    const judge = byN("0115");
    const t = tally([{ role: "spec.judge", findings: findingsOf(judge) }], {
      stage: "spec_judge",
      phase: "spec",
      mustAddressBy: "review",
      criticCount: 1,
      artifact: groundingText(underReview(judge)),
      idFor: () => "SPEC-JUDGE-007",
      now: () => "",
    });
    expect(t.blocking.map((c) => [c.severity, c.category])).toEqual([["HIGH", "contradiction"]]);
  });
});
