import { describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/contracts/audit.js";
import { Interrupted, ProviderAuthError, ReplayMiss } from "../../src/errors.js";
import { auditGate, type GateDeps } from "../../src/gate/audit-gate.js";
import { answerOf, type CallMeta, type ModelReply } from "../../src/models/call.js";
import type { Parsed } from "../../src/models/json.js";
import type { ModelRequest } from "../../src/models/types.js";
import { auditReply } from "../support/mock-model.js";

const DRAFT = "Water boils at 100 °C at sea level.";

/** A gate port answering per role from a script; records what each role was asked. */
function fakeCall(answers: Partial<Record<"executor" | "challenger" | "revision", string | Error>>) {
  const seen: { meta: CallMeta; request: ModelRequest }[] = [];
  const call: GateDeps["call"] = async <T>(meta: CallMeta, request: ModelRequest, parse?: (answer: string) => Parsed<T>): Promise<ModelReply<T>> => {
    seen.push({ meta, request });
    const a = answers[meta.role as keyof typeof answers];
    if (a === undefined) throw new Error(`unexpected call for ${meta.role}`);
    if (a instanceof Error) throw a;
    const record: CallRecord = {
      role: meta.role,
      provider: "fake",
      model: "m",
      route: "primary",
      cached: false,
      latency_ms: 1,
      input_tokens: 1,
      output_tokens: 1,
    };
    const answer = answerOf(a);
    return { text: a, answer, record, requestHash: "h", ...(parse ? { parsed: parse(answer) } : {}) };
  };
  return { call, seen };
}

const input = { prompt: "At what temperature does water boil?", constraints: [], policies: [], audit: true };
const boils = { category: "factual_risk", severity: "low", evidence: "100 °C at sea level", concern: "Depends on pressure." };

describe("auditGate", () => {
  it("routes the revision through the executor's route", async () => {
    const { call, seen } = fakeCall({ executor: DRAFT, challenger: auditReply("needs_work", [boils]), revision: "revised" });
    await auditGate(input, { call });
    expect(seen.map((s) => [s.meta.role, s.meta.routeAs ?? s.meta.role])).toEqual([
      ["executor", "executor"],
      ["challenger", "challenger"],
      ["revision", "executor"],
    ]);
  });

  it("reports progress in order", async () => {
    const steps: string[] = [];
    const { call } = fakeCall({ executor: DRAFT, challenger: auditReply("needs_work", [boils]), revision: "revised" });
    await auditGate(input, { call, progress: (s) => void steps.push(s) });
    expect(steps).toEqual(["executor", "challenger", "revising"]);
  });

  it("strips a reasoning model's leading <think> block from the draft", async () => {
    const { call, seen } = fakeCall({ executor: `<think>let me think</think>\n\n${DRAFT}`, challenger: auditReply("pass") });
    const r = await auditGate(input, { call });
    expect(r.final_output).toBe(DRAFT);
    expect(JSON.parse(seen[1]?.request.messages[0]?.content ?? "")).toMatchObject({ executor_output: DRAFT });
  });

  it("an empty revision keeps the draft, with a warning", async () => {
    const warnings: string[] = [];
    const { call } = fakeCall({ executor: DRAFT, challenger: auditReply("needs_work", [boils]), revision: "   " });
    const r = await auditGate(input, { call, warn: (m) => void warnings.push(m) });
    expect(r.final_output).toBe(DRAFT);
    expect(r.audit_meta.revised).toBe(false);
    expect(warnings).toHaveLength(1);
  });

  it("a challenger that cannot authenticate fails open like any other challenger failure", async () => {
    const warnings: string[] = [];
    const { call } = fakeCall({
      executor: DRAFT,
      challenger: new ProviderAuthError("provider 'x' refused the request (401)", { provider: "x", model: "m", kind: "auth", status: 401, attempts: 1 }),
    });
    const r = await auditGate(input, { call, warn: (m) => void warnings.push(m) });
    expect(r.final_output).toBe(DRAFT);
    expect(r.audit_meta).toMatchObject({ challenger_status: "failed", challenger_error: expect.stringContaining("401") });
    expect(warnings).toHaveLength(1);
  });

  it("a replay miss at the challenger is not a challenger failure: it propagates", async () => {
    const { call } = fakeCall({ executor: DRAFT, challenger: new ReplayMiss("no cached reply") });
    await expect(auditGate(input, { call })).rejects.toSatisfy((e) => ReplayMiss.isInstance(e));
  });

  it("an interruption at the challenger propagates", async () => {
    const { call } = fakeCall({ executor: DRAFT, challenger: new Interrupted("interrupted") });
    await expect(auditGate(input, { call })).rejects.toSatisfy((e) => Interrupted.isInstance(e));
  });

  it("an executor failure propagates (there is no draft to fall back to)", async () => {
    const { call } = fakeCall({ executor: new Error("executor down") });
    await expect(auditGate(input, { call })).rejects.toThrow("executor down");
  });
});

describe("auditGate: what models really write", () => {
  it("forgives upper-case enums, a null suggested_fix and null concerns: the audit still counts", async () => {
    const sloppy = JSON.stringify({
      verdict: "Needs Work",
      concerns: [{ category: "Factual Risk", severity: "High", evidence: "boils at 100 °C", concern: "Depends on pressure.", suggested_fix: null }],
    });
    const { call } = fakeCall({ executor: DRAFT, challenger: sloppy, revision: "revised" });
    const r = await auditGate(input, { call });
    expect(r.audit_meta).toMatchObject({ challenger_status: "ok", audit_verdict: "needs_work", concerns: 1, revised: true });
    const { call: call2 } = fakeCall({ executor: DRAFT, challenger: JSON.stringify({ verdict: "pass", concerns: null }) });
    expect((await auditGate(input, { call: call2 })).audit_meta).toMatchObject({ challenger_status: "ok", audit_verdict: "pass" });
  });

  it("a configuration error at the challenger is the user's to fix (it propagates), not a challenger failure", async () => {
    const { ConfigError } = await import("../../src/errors.js");
    const { call } = fakeCall({ executor: DRAFT, challenger: new ConfigError("provider 'openai' needs an API key: set OPENAI_API_KEY") });
    await expect(auditGate(input, { call })).rejects.toSatisfy((e) => ConfigError.isInstance(e));
  });
});

describe("auditGate: the revision (docs/run.md)", () => {
  it("carries the grounded concerns as data, never suggested_fix, and tells the executor not to swap in new facts", async () => {
    const withFix = { ...boils, suggested_fix: "Say 99.97 °C per NIST 2019" };
    const { call, seen } = fakeCall({ executor: DRAFT, challenger: auditReply("needs_work", [withFix]), revision: "revised" });
    await auditGate(input, { call });
    const last = seen[2]?.request.messages.at(-1)?.content ?? "";
    expect(last).toContain("Depends on pressure.");
    expect(last).not.toContain("NIST");
    expect(last).toMatch(/never replace it with another number/i);
  });

  it("drops the preamble 8B models put before a revision", async () => {
    const { call } = fakeCall({
      executor: DRAFT,
      challenger: auditReply("needs_work", [boils]),
      revision: "Here is the revised answer:\n\nWater boils at about 100 °C at sea level; less at altitude.",
    });
    expect((await auditGate(input, { call })).final_output).toBe("Water boils at about 100 °C at sea level; less at altitude.");
  });

  it("lists the grounded concerns (without suggested_fix) for --json", async () => {
    const { call } = fakeCall({ executor: DRAFT, challenger: auditReply("needs_work", [{ ...boils, suggested_fix: "x" }]), revision: "revised" });
    expect((await auditGate(input, { call })).concerns).toEqual([
      { category: "factual_risk", severity: "low", evidence: "100 °C at sea level", concern: "Depends on pressure." },
    ]);
  });
});

describe("auditGate: revision drift (docs/run.md)", () => {
  const CHICKEN = "Chicken breast is safe once it reaches 145 °F (63 °C), the same as a pork chop.";
  const unsafe = { category: "factual_risk", severity: "critical", evidence: "reaches 145 °F (63 °C)", concern: "Poultry needs 165 °F (74 °C), per the USDA." };
  const chickenInput = { ...input, prompt: "How hot must chicken breast get to be safe?" };
  const gate = async (revision: string, over: { constraints?: string[]; policies?: string[] } = {}) => {
    const warnings: [string, string][] = [];
    const { call } = fakeCall({ executor: CHICKEN, challenger: auditReply("needs_work", [unsafe]), revision });
    const r = await auditGate({ ...chickenInput, ...over }, { call, warn: (m, code) => void warnings.push([m, code]) });
    return { r, warnings };
  };

  it("a revision that swaps in the concern's numbers and source lists them, with one warning line; the revision is still the answer", async () => {
    const revised = "Chicken breast is safe once it reaches 165 °F (74 °C), as the USDA advises.";
    const { r, warnings } = await gate(revised);
    expect(r.final_output).toBe(revised);
    expect(r.audit_meta.revision_drift).toEqual([
      { kind: "number", text: "165" },
      { kind: "number", text: "74" },
      { kind: "name", text: "USDA" },
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.[1]).toBe("DISSENT_REVISION_DRIFT");
    expect(warnings[0]?.[0]).toMatch(/^the revision added facts .*: 165, 74, USDA \(/);
    expect(warnings[0]?.[0]).not.toContain("\n");
  });

  it("a revision that removes the value or marks it for checking drifts nowhere: an empty list, no warning", async () => {
    const { r, warnings } = await gate(
      "Chicken breast must be cooked through; check the safe internal temperature against official guidance (145 °F is not it).",
    );
    expect(r.audit_meta.revision_drift).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("what the constraints and policies hold is given, not drift", async () => {
    const { r } = await gate("Cook chicken breast to 74 °C.", { constraints: ["Use °C only; the safe figure for poultry is 74 °C."] });
    expect(r.audit_meta.revision_drift).toEqual([]);
    const { r: r2 } = await gate("Cook chicken breast to 74 °C, as the FSA says.", { policies: ["Cite the FSA where you can."] });
    expect(r2.audit_meta.revision_drift).toEqual([{ kind: "number", text: "74" }]);
  });

  it("no revision, no revision_drift: a pass, a failed challenger, an empty revision, no audit", async () => {
    const pass = fakeCall({ executor: CHICKEN, challenger: auditReply("pass") });
    expect((await auditGate(chickenInput, { call: pass.call })).audit_meta).not.toHaveProperty("revision_drift");
    const failed = fakeCall({ executor: CHICKEN, challenger: "no JSON at all" });
    expect((await auditGate(chickenInput, { call: failed.call })).audit_meta).not.toHaveProperty("revision_drift");
    const { r: empty, warnings } = await gate("  ");
    expect(empty.audit_meta).not.toHaveProperty("revision_drift");
    expect(warnings.map((w) => w[1])).toEqual(["DISSENT_REVISION_EMPTY"]);
    const off = fakeCall({ executor: CHICKEN });
    expect((await auditGate({ ...chickenInput, audit: false }, { call: off.call })).audit_meta).not.toHaveProperty("revision_drift");
  });

  it("the revision request says a wrong value is removed or marked, never replaced", async () => {
    const { call, seen } = fakeCall({ executor: CHICKEN, challenger: auditReply("needs_work", [unsafe]), revision: "Cook it through." });
    await auditGate(chickenInput, { call });
    const ask = seen[2]?.request.messages.at(-1)?.content ?? "";
    expect(ask).toMatch(/wrong value[^\n]*removed or marked as needing a check, never replaced/i);
  });
});
