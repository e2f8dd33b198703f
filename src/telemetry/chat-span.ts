import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import type { ObservedCall } from "../models/types.js";
import { DISSENT, ERROR_TYPE, GEN_AI, OPERATION } from "./conventions.js";

/** What every chat span needs besides the call. */
export interface ChatSpanOptions {
  seed: number;
  /** Prompts and replies become span attributes only with `log_content: true` (docs/errors.md, §8). */
  logContent: boolean;
  redact: (text: string) => string;
}

/** A `performance.now()` reading as epoch milliseconds. */
export const epochMs = (perf: number) => performance.timeOrigin + perf;

/** Hosts whose provider has a well-known `gen_ai.provider.name` (semantic conventions 1.41.0). */
const KNOWN_HOSTS: [RegExp, string][] = [
  [/(^|\.)openai\.com$/, "openai"],
  [/(^|\.)anthropic\.com$/, "anthropic"],
  [/(^|\.)groq\.com$/, "groq"],
  [/(^|\.)deepseek\.com$/, "deepseek"],
  [/(^|\.)mistral\.ai$/, "mistral_ai"],
  [/(^|\.)x\.ai$/, "x_ai"],
  [/(^|\.)perplexity\.ai$/, "perplexity"],
  [/(^|\.)cohere\.(ai|com)$/, "cohere"],
  [/(^|\.)openai\.azure\.com$/, "azure.ai.openai"],
  [/^bedrock-runtime\..*\.amazonaws\.com$/, "aws.bedrock"],
  [/^generativelanguage\.googleapis\.com$/, "gcp.gemini"],
  [/^aiplatform\.googleapis\.com$/, "gcp.vertex_ai"],
];

/**
 * `gen_ai.provider.name` for a target: the well-known value when the provider type or host says
 * which (openai, anthropic, groq …), else the provider's name in the config (a custom value).
 */
export function providerName(target: ObservedCall["target"]): string {
  const [type, url] = target.endpoint.split(" ");
  if (type === "openai" || type === "anthropic") return type;
  if (url) {
    const host = /^https?:\/\/([^/:]+)/.exec(url)?.[1]?.toLowerCase();
    const known = host ? KNOWN_HOSTS.find(([re]) => re.test(host)) : undefined;
    if (known) return known[1];
  }
  return target.provider;
}

/** The span of one model call, `chat {model}`, a CLIENT span under `parent`, timed as the call was. Left open. */
export function startChatSpan(tracer: Tracer, parent: Span | undefined, c: ObservedCall, o: ChatSpanOptions, costUsd: number | null): Span {
  const ctx = parent ? trace.setSpan(context.active(), parent) : context.active();
  const span = tracer.startSpan(
    `${OPERATION.CHAT} ${c.target.model}`,
    {
      kind: SpanKind.CLIENT,
      startTime: epochMs(c.startedAt),
      attributes: {
        [GEN_AI.OPERATION_NAME]: OPERATION.CHAT,
        [GEN_AI.PROVIDER_NAME]: providerName(c.target),
        [GEN_AI.REQUEST_MODEL]: c.target.model,
        [GEN_AI.REQUEST_SEED]: o.seed,
        [GEN_AI.REQUEST_TEMPERATURE]: 0, // docs/configuration.md: every call is sent with temperature 0
        [GEN_AI.OUTPUT_TYPE]: c.request.schema ? "json" : "text",
        [GEN_AI.USAGE_INPUT_TOKENS]: c.inputTokens,
        [GEN_AI.USAGE_OUTPUT_TOKENS]: c.outputTokens,
        [GEN_AI.USAGE_CACHE_READ_INPUT_TOKENS]: c.cachedInputTokens,
        ...(c.cacheWriteInputTokens ? { [GEN_AI.USAGE_CACHE_CREATION_INPUT_TOKENS]: c.cacheWriteInputTokens } : {}),
        ...(c.target.maxTokens ? { [GEN_AI.REQUEST_MAX_TOKENS]: c.target.maxTokens } : {}),
        ...(c.finishReason ? { [GEN_AI.RESPONSE_FINISH_REASONS]: [c.finishReason] } : {}),
        [DISSENT.ROLE]: c.role,
        [DISSENT.PROVIDER]: c.target.provider,
        [DISSENT.ROUTE]: c.target.route,
        [DISSENT.CACHED]: c.cached,
        ...(c.attempts !== undefined ? { [DISSENT.ATTEMPTS]: c.attempts } : {}),
        ...(costUsd !== null ? { [DISSENT.COST_USD]: costUsd } : {}),
        ...(c.stage ? { [DISSENT.STAGE]: c.stage } : {}),
        ...(c.round !== undefined ? { [DISSENT.ROUND]: c.round } : {}),
        ...(c.parseError ? { [DISSENT.PARSE_ERROR]: o.redact(c.parseError).slice(0, 300) } : {}),
      },
    },
    ctx,
  );
  if (c.error) {
    span.setAttribute(ERROR_TYPE, c.error.kind);
    span.setStatus({ code: SpanStatusCode.ERROR, message: o.redact(c.error.message).slice(0, 500) });
  }
  if (o.logContent) {
    // Opt-in content attributes, in the conventions' message shape; secrets redacted like every sink.
    const text = (s: string) => [{ type: "text", content: o.redact(s) }];
    span.setAttribute(GEN_AI.SYSTEM_INSTRUCTIONS, JSON.stringify(text(c.request.system)));
    span.setAttribute(GEN_AI.INPUT_MESSAGES, JSON.stringify(c.request.messages.map((m) => ({ role: m.role, parts: text(m.content) }))));
    if (c.reply !== undefined)
      span.setAttribute(
        GEN_AI.OUTPUT_MESSAGES,
        JSON.stringify([{ role: "assistant", parts: text(c.reply), ...(c.finishReason ? { finish_reason: c.finishReason } : {}) }]),
      );
  }
  return span;
}
