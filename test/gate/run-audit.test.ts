import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { describe, expect, it, vi } from "vitest";
import { AuditMeta, CallRecord } from "../../src/contracts/audit.js";
import { memoryCache } from "../../src/models/cache.js";
import { runAudit } from "../../src/index.js";
import { auditReply, messageText, scriptedModel } from "../support/mock-model.js";

const PROMPT = "How tall is the Eiffel Tower?";
const DRAFT = "The Eiffel Tower is 330 m tall.\n\nIt was  built in 1889 and is made of cheese.  ";
const REVISED = "The Eiffel Tower is 330 m tall. It was built in 1889 of wrought iron.";

const cheese = { category: "factual_risk", severity: "high", evidence: "is made of cheese", concern: "The tower is iron, not cheese." };
const invented = { category: "unverifiable_claim", severity: "medium", evidence: "painted gold every year", concern: "Not in the draft." };

function userTexts(call: LanguageModelV3CallOptions | undefined): string[] {
  return (call?.prompt ?? []).filter((m) => m.role === "user").map(messageText);
}

describe("runAudit: pass", () => {
  it("returns the draft byte-for-byte after 2 model calls", async () => {
    const executor = scriptedModel("exec", [DRAFT]);
    const challenger = scriptedModel("chal", [auditReply("pass")]);
    const r = await runAudit({ executor, challenger, prompt: PROMPT });
    expect(r.final_output).toBe(DRAFT);
    expect(executor.doGenerateCalls).toHaveLength(1);
    expect(challenger.doGenerateCalls).toHaveLength(1);
    expect(r.audit_meta).toEqual({
      audit_used: true,
      audit_verdict: "pass",
      revised: false,
      audit_passes: 1,
      revision_passes: 0,
      challenger_status: "ok",
      concerns: 0,
      ungrounded_concerns: 0,
      invalid_concerns: 0,
    });
    expect(r.calls.map((c) => c.role)).toEqual(["executor", "challenger"]);
    for (const c of r.calls) expect(CallRecord.safeParse(c).success).toBe(true);
    expect(AuditMeta.safeParse(r.audit_meta).success).toBe(true);
  });

  it("a pass that lists (grounded) concerns still returns the draft unchanged, with no revision", async () => {
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const challenger = scriptedModel("chal", [auditReply("pass", [{ ...cheese, severity: "low" }])]);
    const r = await runAudit({ executor, challenger, prompt: PROMPT });
    expect(r.final_output).toBe(DRAFT);
    expect(executor.doGenerateCalls).toHaveLength(1);
    expect(r.audit_meta).toMatchObject({ audit_verdict: "pass", revised: false, revision_passes: 0, concerns: 1 });
  });

  it("without audit: one call, verdict null, challenger skipped", async () => {
    const executor = scriptedModel("exec", [DRAFT]);
    const challenger = scriptedModel("chal", [auditReply("pass")]);
    const r = await runAudit({ executor, challenger, prompt: PROMPT, audit: false });
    expect(r.final_output).toBe(DRAFT);
    expect(challenger.doGenerateCalls).toHaveLength(0);
    expect(r.audit_meta).toMatchObject({ audit_used: false, audit_verdict: null, audit_passes: 0, revision_passes: 0, challenger_status: "skipped" });
    expect(r.audit_meta.challenger_error).toBeUndefined();
  });
});

describe("runAudit: needs_work", () => {
  it("revises once: 3 calls, the revision is final, the critique is not in it", async () => {
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const challenger = scriptedModel("chal", [auditReply("needs_work", [cheese])]);
    const r = await runAudit({ executor, challenger, prompt: PROMPT });
    expect(r.final_output).toBe(REVISED);
    expect(executor.doGenerateCalls).toHaveLength(2);
    expect(challenger.doGenerateCalls).toHaveLength(1);
    expect(r.audit_meta).toMatchObject({
      audit_verdict: "needs_work",
      revised: true,
      audit_passes: 1,
      revision_passes: 1,
      challenger_status: "ok",
      concerns: 1,
      ungrounded_concerns: 0,
    });
    expect(r.calls.map((c) => c.role)).toEqual(["executor", "challenger", "revision"]);
    expect(r.final_output).not.toContain(cheese.concern);
  });

  it("the revision request keeps the executor's system+prompt prefix and appends the draft and the grounded concerns after it", async () => {
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const challenger = scriptedModel("chal", [auditReply("needs_work", [cheese, invented])]);
    const r = await runAudit({ executor, challenger, prompt: PROMPT, constraints: ["Be brief."], policies: ["Cite nothing."] });
    expect(r.audit_meta).toMatchObject({ concerns: 1, ungrounded_concerns: 1 });
    const [first, revision] = executor.doGenerateCalls;
    expect(first?.prompt).toHaveLength(2);
    expect(revision?.prompt.slice(0, first?.prompt.length)).toEqual(first?.prompt);
    const after = (revision?.prompt ?? []).slice(first?.prompt.length ?? 0);
    expect(after.map((m) => m.role)).toEqual(["assistant", "user"]);
    expect(messageText(after[0] as (typeof after)[number])).toBe(DRAFT);
    const critique = messageText(after[1] as (typeof after)[number]);
    expect(critique).toContain(cheese.evidence);
    expect(critique).toContain(cheese.concern);
    expect(critique).not.toContain(invented.evidence);
    expect(userTexts(revision)[0]).toBe(PROMPT);
  });

  it("needs_work whose concerns are all ungrounded is a pass: draft unchanged, 2 calls", async () => {
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const challenger = scriptedModel("chal", [auditReply("needs_work", [invented])]);
    const r = await runAudit({ executor, challenger, prompt: PROMPT });
    expect(r.final_output).toBe(DRAFT);
    expect(executor.doGenerateCalls).toHaveLength(1);
    expect(r.audit_meta).toMatchObject({ audit_verdict: "pass", revised: false, revision_passes: 0, concerns: 0, ungrounded_concerns: 1 });
  });

  it("needs_work with an empty-evidence missing_verification concern revises", async () => {
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const mv = { category: "missing_verification", severity: "low", evidence: "", concern: "Tell the reader to check the height." };
    const challenger = scriptedModel("chal", [auditReply("needs_work", [mv])]);
    const r = await runAudit({ executor, challenger, prompt: PROMPT });
    expect(r.final_output).toBe(REVISED);
    expect(r.audit_meta).toMatchObject({ audit_verdict: "needs_work", concerns: 1 });
  });

  it("accepts a fenced challenger reply wrapped in a <think> block and prose", async () => {
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const reply = `<think>${auditReply("pass")}</think>\nHere is the audit:\n\`\`\`json\n${auditReply("needs_work", [cheese])}\n\`\`\``;
    const challenger = scriptedModel("chal", [reply]);
    const r = await runAudit({ executor, challenger, prompt: PROMPT });
    expect(r.final_output).toBe(REVISED);
  });
});

describe("runAudit: the challenger's input (ADR-009 §2)", () => {
  it("is exactly {prompt, executor_output, constraints, policies}, with no tools", async () => {
    const executor = scriptedModel("exec", [DRAFT]);
    const challenger = scriptedModel("chal", [auditReply("pass")]);
    await runAudit({ executor, challenger, prompt: PROMPT, constraints: ["Be brief."], policies: ["Cite nothing."] });
    const call = challenger.doGenerateCalls[0];
    expect(call?.tools ?? []).toEqual([]);
    expect(call?.toolChoice).toBeUndefined();
    expect(call?.prompt.map((m) => m.role)).toEqual(["system", "user"]);
    const input: unknown = JSON.parse(userTexts(call)[0] ?? "");
    expect(input).toEqual({ prompt: PROMPT, executor_output: DRAFT, constraints: ["Be brief."], policies: ["Cite nothing."] });
    expect(call?.responseFormat).toMatchObject({ type: "json" });
  });

  it("constraints and policies reach the executor's system prompt", async () => {
    const executor = scriptedModel("exec", [DRAFT]);
    const challenger = scriptedModel("chal", [auditReply("pass")]);
    await runAudit({ executor, challenger, prompt: PROMPT, constraints: ["Answer in under 20 words."], policies: ["No medical dosing advice."] });
    const system = executor.doGenerateCalls[0]?.prompt.find((m) => m.role === "system");
    expect(system && messageText(system)).toContain("Answer in under 20 words.");
    expect(system && messageText(system)).toContain("No medical dosing advice.");
  });

  it("every call is sent with temperature 0 and the seed", async () => {
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const challenger = scriptedModel("chal", [auditReply("needs_work", [cheese])]);
    await runAudit({ executor, challenger, prompt: PROMPT, seed: 1234 });
    for (const c of [...executor.doGenerateCalls, ...challenger.doGenerateCalls]) {
      expect(c.temperature).toBe(0);
      expect(c.seed).toBe(1234);
    }
  });
});

describe("runAudit: one invalid concern is dropped and counted, not the whole audit (docs/configuration.md)", () => {
  it("a concern with an unknown category is dropped: status ok, counted in invalid_concerns, the draft stands", async () => {
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const challenger = scriptedModel("chal", [
      '{"verdict": "needs_work", "concerns": [{"category": "vibes", "severity": "high", "evidence": "", "concern": "x"}]}',
    ]);
    const r = await runAudit({ executor, challenger, prompt: PROMPT, onWarning: () => undefined });
    expect(r.final_output).toBe(DRAFT);
    expect(r.audit_meta).toMatchObject({ challenger_status: "ok", audit_verdict: "pass", invalid_concerns: 1, concerns: 0 });
  });

  it("a concern that says nothing beside one that does is dropped and counted; the real one stands", async () => {
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const challenger = scriptedModel("chal", [
      auditReply("needs_work", [cheese, { category: "factual_risk", severity: "high", evidence: "is made of cheese", concern: '""""' }]),
      auditReply("pass"),
    ]);
    const r = await runAudit({ executor, challenger, prompt: PROMPT, onWarning: () => undefined });
    expect(r.audit_meta).toMatchObject({ challenger_status: "ok", audit_verdict: "needs_work", revised: true, invalid_concerns: 1, concerns: 1 });
  });
});

describe("runAudit: the challenger failing opens the gate, never silently", () => {
  const cases: [string, () => ReturnType<typeof scriptedModel>, RegExp][] = [
    ["throws", () => scriptedModel("chal", [new Error("model exploded")]), /model exploded/],
    ["replies with garbage", () => scriptedModel("chal", ["Looks fine to me!"]), /not JSON/],
    ["replies with the wrong schema", () => scriptedModel("chal", ['{"verdict": "approve", "notes": []}']), /verdict/],
    // A weak model under a grammar (issue 32): valid JSON whose only concern is 212 quote characters.
    [
      "replies with a concern of quote characters only",
      () => scriptedModel("chal", [auditReply("pass", [{ category: "factual_risk", severity: "high", evidence: '"'.repeat(60), concern: '"'.repeat(212) }])]),
      /not a valid audit: .*its concern says nothing \(212 characters: `""""""""""""…`\): a model too weak for the audit\?/,
    ],
    [
      "replies with concerns of one letter repeated",
      () =>
        scriptedModel("chal", [
          auditReply("needs_work", [
            { category: "factual_risk", severity: "high", evidence: "is made of cheese", concern: "w" },
            { category: "unverifiable_claim", severity: "low", evidence: "", concern: "wwww www" },
          ]),
        ]),
      /its 2 concerns say nothing/,
    ],
  ];

  it.each(cases)("challenger %s → draft unchanged, status failed, error set, warning given", async (_name, make, errorPattern) => {
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const challenger = make();
    const onWarning = vi.fn<(m: string) => void>();
    const r = await runAudit({ executor, challenger, prompt: PROMPT, onWarning });
    expect(r.final_output).toBe(DRAFT);
    expect(executor.doGenerateCalls).toHaveLength(1);
    expect(r.audit_meta).toMatchObject({
      audit_used: true,
      audit_verdict: null,
      revised: false,
      audit_passes: 1,
      revision_passes: 0,
      challenger_status: "failed",
    });
    expect(r.audit_meta.challenger_error).toMatch(errorPattern);
    expect(onWarning).toHaveBeenCalledTimes(1);
    expect(onWarning.mock.calls[0]?.[0]).not.toContain("\n");
  });
});

describe("runAudit: cache", () => {
  it("with a memoryCache, an identical second run makes no model call and gives the identical result", async () => {
    const cache = memoryCache();
    const executor = scriptedModel("exec", [DRAFT, REVISED, "SHOULD NOT BE CALLED"]);
    const challenger = scriptedModel("chal", [auditReply("needs_work", [cheese]), auditReply("pass")]);
    const first = await runAudit({ executor, challenger, prompt: PROMPT, cache });
    const second = await runAudit({ executor, challenger, prompt: PROMPT, cache });
    expect(executor.doGenerateCalls).toHaveLength(2);
    expect(challenger.doGenerateCalls).toHaveLength(1);
    expect(second.final_output).toBe(first.final_output);
    expect(second.audit_meta).toEqual(first.audit_meta);
    expect(second.calls.map((c) => c.cached)).toEqual([true, true, true]);
    expect(first.calls.map((c) => c.cached)).toEqual([false, false, false]);
  });

  it("an unparseable challenger reply is cached as received: the second run fails open the same way without a call", async () => {
    const cache = memoryCache();
    const executor = scriptedModel("exec", [DRAFT]);
    const challenger = scriptedModel("chal", ["not json", auditReply("pass")]);
    const first = await runAudit({ executor, challenger, prompt: PROMPT, cache });
    const second = await runAudit({ executor, challenger, prompt: PROMPT, cache });
    expect(challenger.doGenerateCalls).toHaveLength(1);
    expect(second.audit_meta).toEqual(first.audit_meta);
    expect(second.audit_meta.challenger_status).toBe("failed");
  });

  it("without a cache, nothing is reused", async () => {
    const executor = scriptedModel("exec", [DRAFT]);
    const challenger = scriptedModel("chal", [auditReply("pass")]);
    await runAudit({ executor, challenger, prompt: PROMPT });
    await runAudit({ executor, challenger, prompt: PROMPT });
    expect(executor.doGenerateCalls).toHaveLength(2);
  });

  it("a different policy is a different run", async () => {
    const cache = memoryCache();
    const executor = scriptedModel("exec", [DRAFT]);
    const challenger = scriptedModel("chal", [auditReply("pass")]);
    await runAudit({ executor, challenger, prompt: PROMPT, cache });
    await runAudit({ executor, challenger, prompt: PROMPT, cache, policies: ["New policy."] });
    expect(executor.doGenerateCalls).toHaveLength(2);
    expect(challenger.doGenerateCalls).toHaveLength(2);
  });
});

describe("runAudit: ModelCall events", () => {
  it("reports one event per call, with hashes and no content", async () => {
    const events: { type: string; role?: string }[] = [];
    const executor = scriptedModel("exec", [DRAFT, REVISED]);
    const challenger = scriptedModel("chal", [auditReply("needs_work", [cheese])]);
    await runAudit({ executor, challenger, prompt: PROMPT, onEvent: (e) => void events.push(e) });
    expect(events.map((e) => [e.type, e.role])).toEqual([
      ["ModelCall", "executor"],
      ["ModelCall", "challenger"],
      ["ModelCall", "revision"],
    ]);
    expect(JSON.stringify(events)).not.toContain(PROMPT);
  });
});

describe("runAudit: revision drift (docs/run.md)", () => {
  it("lists what the revision added in audit_meta.revision_drift; with no onWarning, one DISSENT_REVISION_DRIFT process warning", async () => {
    const gilded = "The Eiffel Tower is 330 m tall. It was built in 1889 of wrought iron from Pompey, https://example.org/eiffel.";
    await new Promise((resolve) => setImmediate(resolve)); // earlier tests' process warnings are delivered first
    const warned: Error[] = [];
    const listen = (w: Error) => void warned.push(w);
    process.on("warning", listen);
    try {
      const r = await runAudit({
        executor: scriptedModel("exec", [DRAFT, gilded]),
        challenger: scriptedModel("chal", [auditReply("needs_work", [cheese])]),
        prompt: PROMPT,
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(r.final_output).toBe(gilded);
      expect(r.audit_meta.revision_drift).toEqual([
        { kind: "url", text: "https://example.org/eiffel" },
        { kind: "name", text: "Pompey" },
      ]);
      expect(warned.map((w) => [(w as Error & { code?: string }).code, w.message.includes("https://example.org/eiffel, Pompey")])).toEqual([
        ["DISSENT_REVISION_DRIFT", true],
      ]);
    } finally {
      process.off("warning", listen);
    }
  });
});
