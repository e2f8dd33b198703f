import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult, LanguageModelV3StreamPart, LanguageModelV3Usage } from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV3 } from "ai/test";

/** Token counts a scripted reply reports (default: 10 in, 5 out). */
export interface ScriptedUsage {
  input?: number;
  output?: number;
}

/** How a scripted model answers besides its script: token counts, and a delay before each reply (or its first chunk). */
export interface ScriptedOptions extends ScriptedUsage {
  delayMs?: number;
  /** Streamed replies only: characters per text delta (default 8). */
  chunkChars?: number;
}

const usageOf = (u: ScriptedUsage = {}): LanguageModelV3Usage => {
  const input = u.input ?? 10;
  const output = u.output ?? 5;
  return { inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: output, text: output, reasoning: 0 } };
};

/** A provider-spec v3 generate result holding one text part. */
export function textResult(text: string, usage: ScriptedUsage = {}): LanguageModelV3GenerateResult {
  return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage: usageOf(usage), warnings: [] };
}

/** The v3 stream parts of one text reply, as a provider streams it: stream-start, response-metadata, text in chunks, finish. */
export function textStreamParts(text: string, options: ScriptedOptions = {}): LanguageModelV3StreamPart[] {
  const size = Math.max(1, options.chunkChars ?? 8);
  const chunks = text.match(new RegExp(`[\\s\\S]{1,${size}}`, "g")) ?? [];
  return [
    { type: "stream-start", warnings: [] },
    { type: "response-metadata", id: "scripted", modelId: "scripted", timestamp: new Date(0) },
    { type: "text-start", id: "0" },
    ...chunks.map((delta): LanguageModelV3StreamPart => ({ type: "text-delta", id: "0", delta })),
    { type: "text-end", id: "0" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usageOf(options) },
  ];
}

/** One script entry: a reply's text, an Error to throw, or a function of the call (and its 0-based index) giving either. */
export type ScriptedAnswer = string | Error | ((options: LanguageModelV3CallOptions, n: number) => string | Error | Promise<string | Error>);

/**
 * A mock model (the AI SDK's MockLanguageModelV3) answering from a script: one entry per call, the
 * last one repeated; generate and stream calls share the script. Its `doGenerateCalls` and
 * `doStreamCalls` record what it was asked.
 */
export function scriptedModel(modelId: string, answers: readonly ScriptedAnswer[], options: ScriptedOptions = {}): MockLanguageModelV3 {
  let n = 0;
  const next = async (call: LanguageModelV3CallOptions): Promise<string> => {
    const i = n++;
    const entry = answers[Math.min(i, answers.length - 1)];
    if (entry === undefined) throw new Error(`${modelId}: no scripted answer`);
    const answer = typeof entry === "function" ? await entry(call, i) : entry;
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const delay = () => (options.delayMs ? new Promise<void>((resolve) => setTimeout(resolve, options.delayMs)) : undefined);
  return new MockLanguageModelV3({
    provider: "mock",
    modelId,
    doGenerate: async (call) => {
      const text = await next(call);
      await delay();
      return textResult(text, options);
    },
    doStream: async (call) => {
      const text = await next(call);
      return { stream: simulateReadableStream({ chunks: textStreamParts(text, options), initialDelayInMs: options.delayMs ?? 0, chunkDelayInMs: 0 }) };
    },
  });
}

/** The text of a v3 prompt message (system content, or the concatenated text parts; other parts as `[type]`). */
export function messageText(message: LanguageModelV3CallOptions["prompt"][number]): string {
  if (message.role === "system") return message.content;
  return message.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("");
}

/** One challenger concern as a script writes it. */
export interface ScriptedConcern {
  category: string;
  severity: string;
  evidence: string;
  concern: string;
  suggested_fix?: string;
}

/** A challenger reply as JSON text: a verdict and its concerns. */
export function auditReply(verdict: "pass" | "needs_work", concerns: readonly ScriptedConcern[] = []): string {
  return JSON.stringify({ verdict, concerns });
}
