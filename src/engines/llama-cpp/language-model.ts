import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3Warning,
} from "@ai-sdk/provider";
import { toChatHistory } from "./chat-history.js";
import type { Generation, GenerateRequest, LoadedModel } from "./loaded-model.js";

/** The AI SDK face of a loaded model: what the call door (`generateText`) talks to. */
export interface LlamaLanguageModelOptions {
  /** The provider's name in the config (shown in call records). */
  provider: string;
  modelId: string;
  model: LoadedModel;
}

function usageOf(g: Generation): LanguageModelV3Usage {
  return {
    inputTokens: { total: g.inputTokens, noCache: g.inputTokens - g.cachedInputTokens, cacheRead: g.cachedInputTokens, cacheWrite: 0 },
    outputTokens: { total: g.outputTokens, text: g.outputTokens, reasoning: 0 },
  };
}

/** What a call asks, as a request to the loaded model (temperature 0 unless the caller says; the seed passed on). */
function requestOf(options: LanguageModelV3CallOptions): { request: GenerateRequest; warnings: SharedV3Warning[] } {
  const history = toChatHistory(options.prompt);
  if ("error" in history) throw new Error(history.error);
  const warnings: SharedV3Warning[] = [];
  if (options.tools?.length) warnings.push({ type: "unsupported", feature: "tools" });
  const format = options.responseFormat;
  return {
    request: {
      history,
      ...(format?.type === "json" ? { json: format.schema === undefined ? {} : { schema: format.schema } } : {}),
      ...(options.maxOutputTokens !== undefined ? { maxTokens: options.maxOutputTokens } : {}),
      temperature: options.temperature ?? 0,
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      ...(options.abortSignal ? { signal: options.abortSignal } : {}),
    },
    warnings,
  };
}

/**
 * A LanguageModelV3 over an in-process model: structured requests (`responseFormat` json) are
 * grammar-constrained, so the reply always parses; `finishReason` is `length` when the token limit
 * cut the reply off; usage counts the tokens evaluated and generated.
 */
export function llamaLanguageModel(o: LlamaLanguageModelOptions): LanguageModelV3 {
  return {
    specificationVersion: "v3",
    provider: `llama-cpp.${o.provider}`,
    modelId: o.modelId,
    supportedUrls: {},
    async doGenerate(options): Promise<LanguageModelV3GenerateResult> {
      const { request, warnings } = requestOf(options);
      const g = await o.model.generate(request);
      return {
        content: [{ type: "text", text: g.text }],
        finishReason: { unified: g.finish, raw: g.stopReason },
        usage: usageOf(g),
        warnings,
        response: { modelId: o.modelId, timestamp: new Date() },
      };
    },
    async doStream(options) {
      const { request, warnings } = requestOf(options);
      const id = "text-0";
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          controller.enqueue({ type: "stream-start", warnings });
          controller.enqueue({ type: "text-start", id });
          let sent = "";
          o.model
            .generate({
              ...request,
              onText: (delta) => {
                sent += delta;
                controller.enqueue({ type: "text-delta", id, delta });
              },
            })
            .then(
              (g) => {
                // Text the engine held back while matching stop triggers arrives with the result only.
                if (g.text.length > sent.length && g.text.startsWith(sent)) controller.enqueue({ type: "text-delta", id, delta: g.text.slice(sent.length) });
                controller.enqueue({ type: "text-end", id });
                controller.enqueue({ type: "finish", finishReason: { unified: g.finish, raw: g.stopReason }, usage: usageOf(g) });
                controller.close();
              },
              (error: unknown) => {
                controller.enqueue({ type: "error", error });
                controller.close();
              },
            );
        },
      });
      return { stream };
    },
  };
}
