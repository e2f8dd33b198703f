/**
 * Issue 20 item 9: one rule for what is an answer, applied by `runAudit` and `auditMiddleware`
 * alike. A draft the provider cut off at its length limit is not an answer: `runAudit` fails the
 * call (truncated), and the middleware no longer audits it and reports `pass` on the cut text —
 * it passes the reply through unaudited, saying why.
 */
import type { LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { auditMiddleware, auditOf, type AuditReport } from "../../src/ai-sdk/index.js";
import { ProviderError } from "../../src/errors.js";
import { runAudit } from "../../src/index.js";
import { auditReply } from "../../src/testing/index.js";

const CUT = "The Eiffel Tower is 330 m tall and was built in";
const usage = { inputTokens: { total: 9, noCache: 9, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 12, text: 12, reasoning: 0 } };

/** A wrapped model whose every reply stops at its token limit. */
function cutOffModel() {
  const result: LanguageModelV3GenerateResult = {
    content: [{ type: "text", text: CUT }],
    finishReason: { unified: "length", raw: "length" },
    usage,
    warnings: [],
  };
  const parts: LanguageModelV3StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: CUT },
    { type: "text-end", id: "t" },
    { type: "finish", finishReason: { unified: "length", raw: "length" }, usage },
  ];
  return new MockLanguageModelV3({
    provider: "acme",
    modelId: "acme-1",
    doGenerate: async () => result,
    doStream: async () => ({ stream: simulateReadableStream({ chunks: parts }) }),
  });
}

/** A challenger that passes everything it is shown. */
const passing = () =>
  new MockLanguageModelV3({
    provider: "rival",
    modelId: "rival-1",
    doGenerate: async () => ({ content: [{ type: "text", text: auditReply("pass") }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] }),
  });

describe("a draft cut off at its length limit", () => {
  it("runAudit: a failed call (truncated), never an answer", async () => {
    const challenger = passing();
    const failure = await runAudit({ executor: cutOffModel(), challenger, prompt: "How tall is it?", maxRetries: 0 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ProviderError.isInstance(failure) && failure.kind).toBe("truncated");
    expect(challenger.doGenerateCalls).toHaveLength(0);
  });

  it("auditMiddleware, generateText: not audited (no pass on the cut text); onAudit says skipped: truncated", async () => {
    const challenger = passing();
    const reports: AuditReport[] = [];
    const model = wrapLanguageModel({ model: cutOffModel(), middleware: auditMiddleware({ challenger, onAudit: (r) => reports.push(r) }) });
    const result = await generateText({ model, prompt: "How tall is it?" });
    expect(result.text).toBe(CUT);
    expect(result.finishReason).toBe("length");
    expect(challenger.doGenerateCalls).toHaveLength(0);
    expect(auditOf(result.providerMetadata)).toBeUndefined();
    expect(reports.map((r) => [r.skipped, r.audit_meta.audit_verdict, r.audit_meta.challenger_status])).toEqual([["truncated", null, "skipped"]]);
  });

  it("auditMiddleware, streamText: the same rule", async () => {
    const challenger = passing();
    const reports: AuditReport[] = [];
    const model = wrapLanguageModel({ model: cutOffModel(), middleware: auditMiddleware({ challenger, onAudit: (r) => reports.push(r) }) });
    const stream = streamText({ model, prompt: "How tall is it?" });
    expect(await stream.text).toBe(CUT);
    expect(challenger.doGenerateCalls).toHaveLength(0);
    expect(reports.map((r) => r.skipped)).toEqual(["truncated"]);
  });
});
