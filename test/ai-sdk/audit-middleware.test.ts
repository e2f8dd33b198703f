import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateObject, generateText, jsonSchema, simulateReadableStream, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { auditMiddleware, auditOf, type AuditReport } from "../../src/ai-sdk/index.js";
import { AuditMeta, CallRecord } from "../../src/contracts/audit.js";
import { auditReply, messageText } from "../../src/testing/index.js";

const PROMPT = "How tall is the Eiffel Tower?";
const DRAFT = "The Eiffel Tower is 330 m tall.\n\nIt was  built in 1889 and is made of cheese.  ";
const REVISED = "The Eiffel Tower is 330 m tall. It was built in 1889 of wrought iron.";
const cheese = {
  category: "factual_risk",
  severity: "high",
  evidence: "is made of cheese",
  concern: "The tower is iron, not cheese.",
  suggested_fix: "Say it is made of puddled iron from Lorraine.",
};

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});

/** A generate result as a provider returns it: reasoning, then text in two parts, provider metadata of its own. */
function draftResult(text: string, extra: Partial<LanguageModelV3GenerateResult> = {}): LanguageModelV3GenerateResult {
  return {
    content: [
      { type: "reasoning", text: "thinking it over" },
      { type: "text", text: text.slice(0, 10) },
      { type: "text", text: text.slice(10) },
    ],
    finishReason: { unified: "stop", raw: "stop" },
    usage: usage(100, 40),
    providerMetadata: { acme: { requestId: "r-1" } },
    response: { id: "resp-1", modelId: "acme-1", timestamp: new Date(0) },
    warnings: [],
    ...extra,
  };
}

/** The wrapped model: answers each generate call from `answers` in turn (the last one repeated). */
function executorModel(answers: LanguageModelV3GenerateResult[]) {
  let n = 0;
  return new MockLanguageModelV3({
    provider: "acme",
    modelId: "acme-1",
    doGenerate: async () => {
      const a = answers[Math.min(n++, answers.length - 1)];
      if (!a) throw new Error("no answer");
      return a;
    },
  });
}

/** The challenger: a mock answering with one JSON text (or failing). */
function challengerModel(answer: string | Error) {
  return new MockLanguageModelV3({
    provider: "rival",
    modelId: "rival-1",
    doGenerate: async () => {
      if (answer instanceof Error) throw answer;
      return { content: [{ type: "text", text: answer }], finishReason: { unified: "stop", raw: "stop" }, usage: usage(7, 3), warnings: [] };
    },
  });
}

/** A stream of one reply, as a provider streams it: stream-start, response-metadata, text deltas, finish. */
function replyStream(text: string, chunk = 9, u = usage(100, 40)): LanguageModelV3StreamPart[] {
  const deltas = text.match(new RegExp(`[\\s\\S]{1,${chunk}}`, "g")) ?? [];
  return [
    { type: "stream-start", warnings: [{ type: "other", message: "draft warning" }] },
    { type: "response-metadata", id: "resp-s", modelId: "acme-1", timestamp: new Date(0) },
    { type: "text-start", id: "t0" },
    ...deltas.map((delta): LanguageModelV3StreamPart => ({ type: "text-delta", id: "t0", delta })),
    { type: "text-end", id: "t0" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: u, providerMetadata: { acme: { requestId: "s-1" } } },
  ];
}

function streamingModel(replies: LanguageModelV3StreamPart[][]) {
  let n = 0;
  return new MockLanguageModelV3({
    provider: "acme",
    modelId: "acme-1",
    doStream: async () => {
      const chunks = replies[Math.min(n++, replies.length - 1)] ?? [];
      return { stream: simulateReadableStream({ chunks, chunkDelayInMs: 0 }), response: { headers: { "x-acme": "1" } } };
    },
  });
}

const lastUser = (call: LanguageModelV3CallOptions | undefined) =>
  (call?.prompt ?? [])
    .filter((m) => m.role === "user")
    .map(messageText)
    .at(-1) ?? "";

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const warnings: Error[] = [];
const onWarning = (w: Error) => void warnings.push(w);
process.on("warning", onWarning);
afterEach(() => {
  warnings.length = 0;
});

/** Process warnings are emitted on the next tick. */
const settle = () => new Promise((r) => setImmediate(r));

describe("auditMiddleware, generateText", () => {
  it("pass: the wrapped model's reply comes back byte-identical, after 2 calls, with audit_meta in providerMetadata.dissent", async () => {
    const draft = draftResult(DRAFT);
    const model = executorModel([draft]);
    const challenger = challengerModel(auditReply("pass"));
    const reports: AuditReport[] = [];
    const r = await generateText({
      model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger, onAudit: (a) => void reports.push(a) }) }),
      prompt: PROMPT,
    });
    expect(r.text).toBe(DRAFT);
    expect(r.content).toEqual(draft.content.map((p) => expect.objectContaining(p)));
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(challenger.doGenerateCalls).toHaveLength(1);
    expect(r.providerMetadata?.acme).toEqual({ requestId: "r-1" });
    const dissent = r.providerMetadata?.dissent as { audit_meta: unknown; concerns: unknown[]; calls: unknown[] };
    expect(AuditMeta.parse(dissent.audit_meta)).toEqual({
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
    expect(dissent.calls.map((c) => CallRecord.parse(c).role)).toEqual(["executor", "challenger"]);
    // usage counts every call the audit made: the draft's and the challenger's
    expect(r.usage.inputTokens).toBe(107);
    expect(r.usage.outputTokens).toBe(43);
    expect(reports).toHaveLength(1);
    expect(reports[0]?.operation).toBe("generate");
  });

  it("pass returns the very content parts the wrapped model gave (byte-identical, at the model level)", async () => {
    const draft = draftResult(DRAFT);
    const wrapped = wrapLanguageModel({ model: executorModel([draft]), middleware: auditMiddleware({ challenger: challengerModel(auditReply("pass")) }) });
    const out = await wrapped.doGenerate({ prompt: [{ role: "user", content: [{ type: "text", text: PROMPT }] }] });
    expect(out.content).toBe(draft.content);
    expect(JSON.stringify(out.content)).toBe(JSON.stringify(draft.content));
    expect(out.response).toBe(draft.response);
  });

  it("needs_work: one revision through the wrapped model, 3 calls; the revision carries grounded concerns, never suggested_fix", async () => {
    const model = executorModel([draftResult(DRAFT), draftResult(`Here is the revised answer:\n\n${REVISED}`, { usage: usage(150, 30) })]);
    const invented = { category: "unverifiable_claim", severity: "medium", evidence: "painted gold every year", concern: "Not in the draft." };
    const challenger = challengerModel(auditReply("needs_work", [cheese, invented]));
    const r = await generateText({
      model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger, constraints: ["Be brief."], policies: ["Cite nothing."] }) }),
      system: "You answer questions about Paris.",
      prompt: PROMPT,
    });
    expect(r.text).toBe(REVISED); // the preamble is stripped, as the CLI strips it
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(challenger.doGenerateCalls).toHaveLength(1);
    const audit = auditOf(r.providerMetadata);
    expect(audit?.audit_meta).toMatchObject({
      audit_verdict: "needs_work",
      revised: true,
      audit_passes: 1,
      revision_passes: 1,
      concerns: 1,
      ungrounded_concerns: 1,
    });
    expect(audit?.concerns).toEqual([{ category: cheese.category, severity: cheese.severity, evidence: cheese.evidence, concern: cheese.concern }]);
    expect(audit?.calls.map((c) => c.role)).toEqual(["executor", "challenger", "revision"]);
    expect(r.usage.inputTokens).toBe(100 + 7 + 150);

    // the challenger got exactly {prompt, executor_output, constraints, policies}, the app's system message in the prompt
    const audited = JSON.parse(lastUser(challenger.doGenerateCalls[0])) as Record<string, unknown>;
    expect(Object.keys(audited).sort()).toEqual(["constraints", "executor_output", "policies", "prompt"]);
    expect(audited).toMatchObject({ executor_output: DRAFT, constraints: ["Be brief."], policies: ["Cite nothing."] });
    expect(audited.prompt).toContain("You answer questions about Paris.");
    expect(audited.prompt).toContain(PROMPT);
    expect(challenger.doGenerateCalls[0]?.tools).toBeUndefined();

    // the revision: the app's own conversation, then the draft, then the grounded concerns
    const revision = model.doGenerateCalls[1];
    const roles = revision?.prompt.map((m) => m.role);
    expect(roles).toEqual(["system", "user", "assistant", "user"]);
    expect(revision?.prompt[2] && messageText(revision.prompt[2])).toBe(DRAFT);
    const ask = lastUser(revision);
    expect(ask).toContain(cheese.evidence);
    expect(ask).toContain(cheese.concern);
    expect(ask).not.toContain(cheese.suggested_fix);
    expect(ask).not.toContain(invented.evidence);
  });

  it("ungrounded concerns only: treated as pass, no revision (the CLI's grounding)", async () => {
    const model = executorModel([draftResult(DRAFT)]);
    const challenger = challengerModel(auditReply("needs_work", [{ ...cheese, evidence: "made of solid gold bars" }]));
    const r = await generateText({ model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger }) }), prompt: PROMPT });
    expect(r.text).toBe(DRAFT);
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(auditOf(r.providerMetadata)?.concerns).toEqual([]);
    expect((r.providerMetadata?.dissent as { audit_meta: AuditMeta }).audit_meta).toMatchObject({
      audit_verdict: "pass",
      ungrounded_concerns: 1,
      revised: false,
    });
  });

  it("challenger down: the reply unchanged, a process warning, challenger_status failed", async () => {
    const draft = draftResult(DRAFT);
    const model = executorModel([draft]);
    const challenger = challengerModel(new Error("connection refused"));
    const r = await generateText({ model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger }) }), prompt: PROMPT });
    await settle();
    expect(r.text).toBe(DRAFT);
    expect(model.doGenerateCalls).toHaveLength(1);
    const meta = (r.providerMetadata?.dissent as { audit_meta: AuditMeta }).audit_meta;
    expect(meta).toMatchObject({ audit_used: true, audit_verdict: null, challenger_status: "failed", audit_passes: 1, revision_passes: 0 });
    expect(meta.challenger_error).toContain("connection refused");
    expect(warnings.map((w) => w.message)).toEqual([expect.stringContaining("challenger failed, returning the draft unaudited")]);
  });

  it("challenger down with onAudit: onAudit receives the meta, and no process warning", async () => {
    const reports: AuditReport[] = [];
    const model = executorModel([draftResult(DRAFT)]);
    const r = await generateText({
      model: wrapLanguageModel({
        model,
        middleware: auditMiddleware({ challenger: challengerModel("not json at all"), onAudit: (a) => void reports.push(a) }),
      }),
      prompt: PROMPT,
    });
    await settle();
    expect(r.text).toBe(DRAFT);
    expect(reports[0]?.audit_meta).toMatchObject({ challenger_status: "failed" });
    expect(reports[0]?.calls.map((c) => c.role)).toEqual(["executor", "challenger"]);
    expect(warnings).toEqual([]);
  });

  it("a prompt holding tool calls and results goes through unaudited", async () => {
    const model = executorModel([draftResult(DRAFT)]);
    const challenger = challengerModel(auditReply("needs_work", [cheese]));
    const reports: AuditReport[] = [];
    const r = await generateText({
      model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger, onAudit: (a) => void reports.push(a) }) }),
      messages: [
        { role: "user", content: PROMPT },
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup", input: { q: "Eiffel" } }] },
        { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "lookup", output: { type: "text", value: "330 m" } }] },
      ],
    });
    expect(r.text).toBe(DRAFT);
    expect(challenger.doGenerateCalls).toHaveLength(0);
    expect(r.providerMetadata?.dissent).toBeUndefined();
    expect(auditOf(r.providerMetadata)).toBeUndefined();
    expect(reports).toEqual([
      expect.objectContaining({ skipped: "tool_results", audit_meta: expect.objectContaining({ audit_used: false, challenger_status: "skipped" }) }),
    ]);
  });

  it("a reply that calls a tool goes through unaudited", async () => {
    const model = executorModel([
      {
        ...draftResult(""),
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup", input: '{"q":"Eiffel"}' }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
      },
    ]);
    const challenger = challengerModel(auditReply("pass"));
    const r = await generateText({
      model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger }) }),
      prompt: PROMPT,
      tools: { lookup: tool({ inputSchema: z.object({ q: z.string() }) }) },
    });
    expect(r.toolCalls).toHaveLength(1);
    expect(challenger.doGenerateCalls).toHaveLength(0);
  });
});

describe("auditMiddleware, generateObject", () => {
  const schema = z.object({ name: z.string(), born: z.number() });
  const JSON_DRAFT = '{"name":"Ada Lovelace","born":1816,"note":"she invented the first computer in 1816"}';
  const JSON_REVISED = '{"name":"Ada Lovelace","born":1815}';

  it("the JSON is the draft: audited, revised once to JSON with the same response format", async () => {
    const model = executorModel([draftResult(JSON_DRAFT), draftResult(JSON_REVISED)]);
    const challenger = challengerModel(
      auditReply("needs_work", [
        { category: "factual_risk", severity: "high", evidence: "invented the first computer in 1816", concern: "Unsupported claim and wrong year." },
      ]),
    );
    const r = await generateObject({
      model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger }) }),
      schema,
      prompt: "Who wrote the first program?",
    });
    expect(r.object).toEqual({ name: "Ada Lovelace", born: 1815 });
    expect(JSON.parse(lastUser(challenger.doGenerateCalls[0])).executor_output).toBe(JSON_DRAFT);
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(model.doGenerateCalls[1]?.responseFormat).toEqual(model.doGenerateCalls[0]?.responseFormat);
    expect(model.doGenerateCalls[1]?.responseFormat?.type).toBe("json");
    expect((r.providerMetadata?.dissent as { audit_meta: AuditMeta }).audit_meta).toMatchObject({ audit_verdict: "needs_work", revised: true });
  });

  it("pass returns the object as the model wrote it", async () => {
    const model = executorModel([draftResult(JSON_REVISED)]);
    const r = await generateObject({
      model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger: challengerModel(auditReply("pass")) }) }),
      schema: jsonSchema<{ name: string; born: number }>({ type: "object", properties: { name: { type: "string" }, born: { type: "number" } } }),
      prompt: "Who wrote the first program?",
    });
    expect(r.object).toEqual({ name: "Ada Lovelace", born: 1815 });
    expect(model.doGenerateCalls).toHaveLength(1);
  });
});

describe("auditMiddleware, streamText", () => {
  /** The parts the wrapped model's doStream emits, read at the model level. */
  async function partsOf(model: ReturnType<typeof wrapLanguageModel>): Promise<LanguageModelV3StreamPart[]> {
    const { stream } = await model.doStream({ prompt: [{ role: "user", content: [{ type: "text", text: PROMPT }] }] });
    const out: LanguageModelV3StreamPart[] = [];
    for await (const p of stream) out.push(p);
    return out;
  }

  it("pass: the draft's own parts, in their order, with the finish carrying summed usage and dissent's metadata", async () => {
    const draft = replyStream(DRAFT);
    const challenger = challengerModel(auditReply("pass"));
    const parts = await partsOf(wrapLanguageModel({ model: streamingModel([draft]), middleware: auditMiddleware({ challenger }) }));
    expect(parts.map((p) => p.type)).toEqual(draft.map((p) => p.type));
    expect(parts.slice(0, -1)).toEqual(draft.slice(0, -1));
    const finish = parts.at(-1);
    expect(finish?.type === "finish" && finish.usage.inputTokens.total).toBe(107);
    expect(finish?.type === "finish" && finish.providerMetadata?.acme).toEqual({ requestId: "s-1" });
    expect(finish?.type === "finish" && (finish.providerMetadata?.dissent as { audit_meta: AuditMeta }).audit_meta.audit_verdict).toBe("pass");
  });

  it("needs_work: streams the revision's text as parts in order, usage summed over the 3 calls", async () => {
    const model = streamingModel([replyStream(DRAFT), replyStream(REVISED, 5, usage(150, 30))]);
    const challenger = challengerModel(auditReply("needs_work", [cheese]));
    const reports: AuditReport[] = [];
    const s = streamText({
      model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger, onAudit: (a) => void reports.push(a) }) }),
      prompt: PROMPT,
    });
    const types: string[] = [];
    let text = "";
    for await (const part of s.fullStream) {
      types.push(part.type);
      if (part.type === "text-delta") text += part.text;
    }
    expect(text).toBe(REVISED);
    const deltas = types.filter((t) => t === "text-delta").length;
    expect(types).toEqual(["start", "start-step", "text-start", ...Array<string>(deltas).fill("text-delta"), "text-end", "finish-step", "finish"]);
    expect(deltas).toBe(Math.ceil(REVISED.length / 5)); // the revision's own chunks
    expect(await s.text).toBe(REVISED);
    expect((await s.usage).inputTokens).toBe(100 + 7 + 150);
    expect((await s.usage).outputTokens).toBe(40 + 3 + 30);
    expect(((await s.providerMetadata)?.dissent as { audit_meta: AuditMeta }).audit_meta).toMatchObject({ revised: true, revision_passes: 1 });
    expect(model.doStreamCalls).toHaveLength(2);
    expect(reports[0]?.calls.map((c) => c.role)).toEqual(["executor", "challenger", "revision"]);
    expect(reports[0]?.operation).toBe("stream");
    expect((await s.warnings)?.map((w) => (w.type === "other" ? w.message : w.type))).toEqual(["draft warning", "draft warning"]);
  });

  it("a revision with a preamble: the preamble is stripped and the text streams as one block", async () => {
    const model = streamingModel([replyStream(DRAFT), replyStream(`Here is the revised answer:\n\n${REVISED}`)]);
    const parts = await partsOf(wrapLanguageModel({ model, middleware: auditMiddleware({ challenger: challengerModel(auditReply("needs_work", [cheese])) }) }));
    expect(parts.map((p) => p.type)).toEqual(["stream-start", "response-metadata", "text-start", "text-delta", "text-end", "finish"]);
    const delta = parts[3];
    expect(delta?.type === "text-delta" && delta.delta).toBe(REVISED);
  });

  it("challenger down: the draft streams unchanged, with a warning", async () => {
    const draft = replyStream(DRAFT);
    const s = streamText({
      model: wrapLanguageModel({ model: streamingModel([draft]), middleware: auditMiddleware({ challenger: challengerModel(new Error("503")) }) }),
      prompt: PROMPT,
    });
    expect(await s.text).toBe(DRAFT);
    await settle();
    expect(((await s.providerMetadata)?.dissent as { audit_meta: AuditMeta }).audit_meta.challenger_status).toBe("failed");
    expect(warnings).toHaveLength(1);
  });

  it("a prompt with tool results streams straight through, unaudited", async () => {
    const draft = replyStream(DRAFT);
    const challenger = challengerModel(auditReply("needs_work", [cheese]));
    const s = streamText({
      model: wrapLanguageModel({ model: streamingModel([draft]), middleware: auditMiddleware({ challenger }) }),
      messages: [
        { role: "user", content: PROMPT },
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup", input: {} }] },
        { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "lookup", output: { type: "text", value: "330 m" } }] },
      ],
    });
    expect(await s.text).toBe(DRAFT);
    expect(challenger.doGenerateCalls).toHaveLength(0);
  });
});

describe("auditMiddleware, reasoning in the text", () => {
  it("audits the answer without its <think> block, and returns the reply as given on pass", async () => {
    const text = `<think>the user wants a number</think>\n\n${DRAFT}`;
    const model = executorModel([{ ...draftResult(text), content: [{ type: "text", text }] }]);
    const challenger = challengerModel(auditReply("pass"));
    const r = await generateText({ model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger }) }), prompt: PROMPT });
    expect(r.text).toBe(text);
    expect(JSON.parse(lastUser(challenger.doGenerateCalls[0])).executor_output).toBe(DRAFT);
  });
});

describe("auditMiddleware: revision drift (docs/run.md)", () => {
  const GILDED = "The Eiffel Tower is 330 m tall. It was built in 1887–1889 by Gustave Eiffel's company of wrought iron.";
  const drifted = [
    { kind: "number", text: "1887" },
    { kind: "name", text: "Gustave Eiffel's" },
  ];

  it("generateText: the facts the revision added are in audit_meta.revision_drift, with one process warning", async () => {
    const model = executorModel([draftResult(DRAFT), draftResult(GILDED)]);
    const r = await generateText({
      model: wrapLanguageModel({ model, middleware: auditMiddleware({ challenger: challengerModel(auditReply("needs_work", [cheese])) }) }),
      prompt: PROMPT,
    });
    await settle();
    expect(r.text).toBe(GILDED);
    expect(auditOf(r.providerMetadata)?.audit_meta.revision_drift).toEqual(drifted);
    expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^the revision added facts .*: 1887, Gustave Eiffel's \(/)]);
  });

  it("streamText with onAudit: the report carries the drift, no process warning; a clean revision lists none", async () => {
    const reports: AuditReport[] = [];
    for (const revised of [GILDED, REVISED]) {
      const s = streamText({
        model: wrapLanguageModel({
          model: streamingModel([replyStream(DRAFT), replyStream(revised)]),
          middleware: auditMiddleware({ challenger: challengerModel(auditReply("needs_work", [cheese])), onAudit: (a) => void reports.push(a) }),
        }),
        prompt: PROMPT,
      });
      expect(await s.text).toBe(revised);
      expect(auditOf(await s.providerMetadata)?.audit_meta.revision_drift).toEqual(revised === GILDED ? drifted : []);
    }
    await settle();
    expect(reports.map((r) => r.audit_meta.revision_drift)).toEqual([drifted, []]);
    expect(warnings).toEqual([]);
  });
});
