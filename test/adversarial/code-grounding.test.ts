/**
 * Findings about the code (issue 30, docs/issue.md "Findings about the code"): a CRITICAL or HIGH
 * finding may quote the code block its critic was given instead of the artifact. The quote is
 * grounded with the draft's normalisation, the concern names the file and lines, a made-up quote of
 * code does not ground, and quotes of different texts are never taken for the same place.
 */
import { describe, expect, it } from "vitest";
import { groundingText } from "../../src/adversarial/grounding.js";
import { tally, type TallyContext, type Vote } from "../../src/adversarial/tally.js";
import { selectContext } from "../../src/code/select.js";
import { emptyMap } from "../../src/pipeline/code-context.js";
import { codeSourceOf } from "../../src/pipeline/code-context.js";
import type { Finding } from "../../src/contracts/concern.js";
import { verdictOf } from "../../src/pipeline/stage-runner.js";

const PLAN = ["## Steps", "1. Register a beforeRequest hook that sets a fresh x-request-id.", "2. Log the id on the server."].join("\n");
const RETRY = [
  "/**",
  " * Runs `attempt` up to `opts.attempts` times. Contract: `beforeRequest` hooks run again on every",
  " * attempt, so a hook that signs a request signs each retry anew.",
  " */",
  "export async function withRetry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {",
  "  for (let n = 1; n <= opts.attempts; n++) return await attempt(n);",
  "}",
].join("\n");

/** A code block as the pipeline builds one: here from a context file of the code (ranked and chunked the same way). */
function code() {
  const src = codeSourceOf(null, [{ path: "src/http/retry.ts", text: RETRY }], () => 6000);
  const sel = src?.forTexts("plan.risk_skeptic", ["hooks run again on every attempt withRetry retry beforeRequest"]);
  if (!sel) throw new Error("no code selected");
  return sel;
}

const ctx = (criticCount = 4): TallyContext => ({
  stage: "plan_council",
  phase: "plan",
  mustAddressBy: "spec",
  criticCount,
  artifact: groundingText(PLAN),
  idFor: (fp, role) => `PLAN-${role}-${fp.slice(0, 6)}`,
  now: () => "2026-12-02T00:00:00.000Z",
});
const high = (concern: string, evidence: string): Finding => ({ severity: "HIGH", category: "correctness", concern, evidence });

describe("a finding may quote the code its critic was given", () => {
  it("a near-verbatim quote of the code grounds: the HIGH stays HIGH (awaiting its second opinion) and the concern names the file and lines", () => {
    const sel = code();
    // Near-verbatim, as real models quote: case, emphasis and spacing changed, the code marks dropped, an ellipsis at the end.
    const quote = "CONTRACT: **beforeRequest**  hooks run again on every attempt, so a hook that signs a request…";
    const t = tally([{ role: "plan.risk_skeptic", findings: [high("A new id per retry.", quote)], code: sel.evidence }], ctx());
    expect(t.ungrounded).toBe(0);
    expect(t.lone).toHaveLength(1);
    expect(t.lone[0]).toMatchObject({ severity: "HIGH", evidence: quote, evidence_in_code: { path: "src/http/retry.ts", start_line: 2, end_line: 3 } });
  });

  it("a made-up quote of code does not ground: MEDIUM, counted as ungrounded, no file named", () => {
    const sel = code();
    const t = tally(
      [{ role: "plan.risk_skeptic", findings: [high("A new id per retry.", "hooks are run once per logical request, never per attempt")], code: sel.evidence }],
      ctx(),
    );
    expect(t.ungrounded).toBe(1);
    expect(t.advisory[0]).toMatchObject({ severity: "MEDIUM", raised_severity: "HIGH", severity_change: "ungrounded" });
    expect(t.advisory[0]?.evidence_in_code).toBeUndefined();
  });

  it("a critic given no code cannot ground a quote of code", () => {
    const t = tally([{ role: "plan.risk_skeptic", findings: [high("A new id per retry.", "`beforeRequest` hooks run again on every attempt")] }], ctx());
    expect(t.ungrounded).toBe(1);
    expect(t.lone).toHaveLength(0);
  });

  it("two critics quoting the same lines of code corroborate each other: the HIGH blocks without a second opinion", () => {
    const sel = code();
    const votes: Vote[] = [
      { role: "plan.risk_skeptic", findings: [high("Each retry gets a new id.", "hooks run again on every attempt")], code: sel.evidence },
      {
        role: "plan.tester",
        findings: [high("The retries cannot be joined by id.", "`beforeRequest` hooks run again on every attempt, so a hook")],
        code: sel.evidence,
      },
    ];
    const t = tally(votes, ctx());
    expect(t.blocking).toHaveLength(1);
    expect(t.blocking[0]?.also_raised_by).toEqual(["plan.tester"]);
  });

  it("a quote of the code and a quote of the plan are never the same place, whatever their offsets", () => {
    // The same text at the same offset of two different texts: only a shared source makes an overlap.
    const text = "the hook sets a fresh id for each request it is given and nothing else";
    const same = selectContext(emptyMap("x"), { texts: ["fresh id request hook"], extraSources: [{ path: "a.md", text }] }, { budgetTokens: 2000 });
    const sel = codeSourceOf(null, [{ path: "a.md", text }], () => 2000)?.forTexts("r", ["fresh id request hook"]);
    expect(same.text).toBe(sel?.text);
    const votes: Vote[] = [
      {
        role: "plan.risk_skeptic",
        findings: [high("Concern one about the hook.", "the hook sets a fresh id for each request")],
        ...(sel ? { code: sel.evidence } : {}),
      },
      { role: "plan.tester", findings: [high("Concern two about the step.", "Register a beforeRequest hook that sets a fresh x-request-id.")] },
    ];
    const t = tally(votes, ctx());
    expect(t.lone).toHaveLength(2); // two lone HIGHs, not one corroborated concern
  });

  it("the second opinion's quote of the code it was given counts as grounded; a made-up one, or one with no code given, does not", () => {
    const sel = code();
    const quoted = verdictOf(
      { verdict: "confirm", reason: "withRetry re-runs the hooks.", evidence: "so a hook that signs a request signs each retry anew" },
      sel,
    );
    expect(quoted).toMatchObject({ verdict: "confirm", quotesCode: true });
    expect(verdictOf({ verdict: "confirm", reason: "It does.", evidence: "hooks are never re-run" }, sel).quotesCode).toBeUndefined();
    expect(
      verdictOf({ verdict: "confirm", reason: "It does.", evidence: "so a hook that signs a request signs each retry anew" }, undefined).quotesCode,
    ).toBeUndefined();
  });
});
