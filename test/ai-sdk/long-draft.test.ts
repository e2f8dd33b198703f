/**
 * Issue 32: the middleware holds a draft to audit only up to `maxReplyBytes` (default 8 MiB, like
 * `max_reply_bytes`). A longer draft — streamed or generated — is passed through unaudited, visibly
 * (`skipped: "too_large"`, or a process warning without onAudit), and never sent to the challenger;
 * a stream that never ends streams through at the consumer's pace instead of being read whole.
 * A revision past the cap fails. With the AI SDK's own mock models.
 */
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { auditMiddleware, auditOf, type AuditReport } from "../../src/ai-sdk/index.js";
import { auditReply } from "../../src/testing/index.js";

const usage = { inputTokens: { total: 9, noCache: 9, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 12, text: 12, reasoning: 0 } };
const stop = { unified: "stop" as const, raw: "stop" };
const KIB = "The tower is made of wrought iron. ".repeat(30).slice(0, 1024);
const CAP = 64 * 1024;

/** A stream of `n` deltas of 1 KiB each, as a provider streams a long answer. */
function longParts(n: number): LanguageModelV3StreamPart[] {
  return [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    ...Array.from({ length: n }, (): LanguageModelV3StreamPart => ({ type: "text-delta", id: "t", delta: KIB })),
    { type: "text-end", id: "t" },
    { type: "finish", finishReason: stop, usage },
  ];
}

const model = (parts: () => ReadableStream<LanguageModelV3StreamPart>, text = KIB) =>
  new MockLanguageModelV3({
    provider: "acme",
    modelId: "acme-1",
    doGenerate: async () => ({ content: [{ type: "text", text }], finishReason: stop, usage, warnings: [] }),
    doStream: async () => ({ stream: parts() }),
  });

const challengerSaying = (reply: string) =>
  new MockLanguageModelV3({
    provider: "rival",
    modelId: "rival-1",
    doGenerate: async () => ({ content: [{ type: "text", text: reply }], finishReason: stop, usage, warnings: [] }),
  });

describe("a draft larger than maxReplyBytes", () => {
  it("streamText: a 256 KiB draft past a 64 KiB cap streams through whole, unaudited; onAudit says too_large; the challenger is never asked", async () => {
    const challenger = challengerSaying(auditReply("pass"));
    const reports: AuditReport[] = [];
    const wrapped = wrapLanguageModel({
      model: model(() => simulateReadableStream({ chunks: longParts(256) })),
      middleware: auditMiddleware({ challenger, maxReplyBytes: CAP, onAudit: (r) => reports.push(r) }),
    });
    const stream = streamText({ model: wrapped, prompt: "What is the tower made of?" });
    expect(await stream.text).toBe(KIB.repeat(256));
    expect(await stream.finishReason).toBe("stop");
    expect(challenger.doGenerateCalls).toHaveLength(0);
    expect(auditOf(await stream.providerMetadata)).toBeUndefined();
    expect(reports.map((r) => [r.operation, r.skipped, r.audit_meta.audit_used])).toEqual([["stream", "too_large", false]]);
  });

  it("streamText: a draft that never ends is read no further than the cap before it reaches the consumer; the call's abort stops it", async () => {
    const challenger = challengerSaying(auditReply("pass"));
    let produced = 0;
    let cancelled = false;
    const endless = () =>
      new ReadableStream<LanguageModelV3StreamPart>({
        start(c) {
          c.enqueue({ type: "stream-start", warnings: [] });
          c.enqueue({ type: "text-start", id: "t" });
        },
        async pull(c) {
          await new Promise((r) => setImmediate(r)); // a model streams as the network brings it
          produced++;
          c.enqueue({ type: "text-delta", id: "t", delta: KIB });
        },
        cancel() {
          cancelled = true;
        },
      });
    const reports: AuditReport[] = [];
    const wrapped = wrapLanguageModel({
      model: model(endless),
      middleware: auditMiddleware({ challenger, maxReplyBytes: CAP, onAudit: (r) => reports.push(r) }),
    });
    const abort = new AbortController();
    const stream = streamText({ model: wrapped, prompt: "Go on forever.", abortSignal: abort.signal });
    let got = 0;
    for await (const chunk of stream.textStream) {
      got += chunk.length;
      if (got >= 256 * 1024) break;
    }
    abort.abort();
    expect(got).toBeGreaterThanOrEqual(256 * 1024);
    expect(reports.map((r) => r.skipped)).toEqual(["too_large"]);
    expect(challenger.doGenerateCalls).toHaveLength(0);
    expect(produced).toBeLessThan(4096); // streamed through as it came, not drained first (it never ends)
    await expect.poll(() => cancelled).toBe(true); // the call's abort reached the model's stream
  });

  it("without onAudit, a too-large draft is a process warning (DISSENT_AUDIT): fail-open, never silent", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      const wrapped = wrapLanguageModel({
        model: model(() => simulateReadableStream({ chunks: longParts(128) })),
        middleware: auditMiddleware({ challenger: challengerSaying(auditReply("pass")), maxReplyBytes: CAP }),
      });
      expect(await streamText({ model: wrapped, prompt: "Long, please." }).text).toBe(KIB.repeat(128));
      await expect.poll(() => warnings.map((w) => (w as Error & { code?: string }).code)).toContain("DISSENT_AUDIT");
      expect(warnings.map((w) => w.message)).toContain("the draft is larger than 64 KiB (maxReplyBytes): passed through unaudited");
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("generateText: a draft past the cap is returned as the model gave it, unaudited, too_large; by default the cap is 8 MiB", async () => {
    const challenger = challengerSaying(auditReply("pass"));
    const reports: AuditReport[] = [];
    const big = KIB.repeat(9 * 1024); // 9 MiB
    const wrapped = wrapLanguageModel({
      model: model(() => simulateReadableStream({ chunks: longParts(1) }), big),
      middleware: auditMiddleware({ challenger, onAudit: (r) => reports.push(r) }),
    });
    const result = await generateText({ model: wrapped, prompt: "Long, please." });
    expect(result.text).toBe(big);
    expect(challenger.doGenerateCalls).toHaveLength(0);
    expect(reports.map((r) => [r.operation, r.skipped])).toEqual([["generate", "too_large"]]);

    // Under the default cap, the same middleware audits: the stream's one-KiB draft passes.
    const streamed = streamText({ model: wrapped, prompt: "Short, please." });
    expect(await streamed.text).toBe(KIB);
    expect(auditOf(await streamed.providerMetadata)?.audit_meta.audit_verdict).toBe("pass");
    expect(challenger.doGenerateCalls).toHaveLength(1);
  });

  it("a revision past the cap fails the stream with one clear error", async () => {
    const evidence = KIB.slice(0, 40);
    const challenger = challengerSaying(
      auditReply("needs_work", [{ category: "factual_risk", severity: "high", evidence, concern: "Name the iron's source." }]),
    );
    let calls = 0;
    const wrapped = wrapLanguageModel({
      model: model(() => simulateReadableStream({ chunks: longParts(calls++ === 0 ? 1 : 256) })),
      middleware: auditMiddleware({ challenger, maxReplyBytes: CAP, onAudit: () => undefined }),
    });
    const stream = streamText({ model: wrapped, prompt: "What is the tower made of?", onError: () => undefined });
    const failure = await stream.text.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String((failure as Error | undefined)?.message)).toBe("the revision is larger than 64 KiB (maxReplyBytes)");
  });
});
