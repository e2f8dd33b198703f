import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";

/** A provider-spec v3 generate result holding one text part. */
export function textResult(text: string, usage: { input?: number; output?: number } = {}): LanguageModelV3GenerateResult {
  const input = usage.input ?? 10;
  const output = usage.output ?? 5;
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: {
      inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: output, text: output, reasoning: 0 },
    },
    warnings: [],
  };
}

type Answer = string | Error | ((options: LanguageModelV3CallOptions, n: number) => string | Error | Promise<string | Error>);

/**
 * A mock model answering from a script: one entry per call, the last one repeated.
 * An Error entry is thrown; a function entry is asked for the answer.
 */
export function scriptedModel(modelId: string, answers: Answer[], usage?: { input?: number; output?: number }): MockLanguageModelV3 {
  let n = 0;
  return new MockLanguageModelV3({
    provider: "mock",
    modelId,
    doGenerate: async (options) => {
      const i = n++;
      const entry = answers[Math.min(i, answers.length - 1)];
      if (entry === undefined) throw new Error(`${modelId}: no scripted answer`);
      const answer = typeof entry === "function" ? await entry(options, i) : entry;
      if (answer instanceof Error) throw answer;
      return textResult(answer, usage);
    },
  });
}

/** The text of a v3 prompt message (system content, or the concatenated text parts). */
export function messageText(message: LanguageModelV3CallOptions["prompt"][number]): string {
  if (message.role === "system") return message.content;
  return message.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("");
}

/** A challenger reply as JSON text. */
export function auditReply(
  verdict: "pass" | "needs_work",
  concerns: { category: string; severity: string; evidence: string; concern: string; suggested_fix?: string }[] = [],
): string {
  return JSON.stringify({ verdict, concerns });
}
