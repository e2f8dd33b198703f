import type { WireReply } from "./server.js";

/**
 * OpenAI's chat-completions wire as api.openai.com writes it: a JSON reply pretty-printed with two
 * spaces in the API's own field order, a stream of `data: {…}\n\n` chunks ending in a usage chunk
 * and `data: [DONE]`, and errors shaped `{"error":{"message","type","param","code"}}`.
 */

const JSON_HEADERS = { "content-type": "application/json", "openai-processing-ms": "812", "x-request-id": "req_4f1c2b9e7d0a4c55b3e1" };
const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-request-id": "req_9b2e5d1c8a7f4e30a6d2" };

/** A non-streamed completion, as o3-mini and gpt-4.1 answer (reasoning tokens counted apart). */
export function openaiJson(
  model: string,
  content: string,
  usage: { prompt: number; completion: number; reasoning: number; cached?: number } = { prompt: 1117, completion: 46, reasoning: 0 },
): WireReply {
  const body = {
    id: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
    object: "chat.completion",
    created: 1741570283,
    model,
    choices: [{ index: 0, message: { role: "assistant", content, refusal: null, annotations: [] }, finish_reason: "stop" }],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
      prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: usage.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
    service_tier: "default",
    system_fingerprint: "fp_43b7f9db73",
  };
  return { status: 200, headers: JSON_HEADERS, body: JSON.stringify(body, null, 2) };
}

/** The chunks of a streamed completion: role first, the content a few characters at a time, the finish, the usage, `[DONE]`. */
export function openaiSse(model: string, content: string): WireReply {
  const base = {
    id: "chatcmpl-AzT3kP0qW1xYb7n6Lr2Vc8Hd",
    object: "chat.completion.chunk",
    created: 1739950000,
    model,
    service_tier: "default",
    system_fingerprint: "fp_f9f4fb6dbf",
  };
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`;
  const pieces = content.match(/[\s\S]{1,5}/g) ?? [];
  return {
    status: 200,
    headers: SSE_HEADERS,
    body: [
      chunk([{ index: 0, delta: { role: "assistant", content: "", refusal: null }, logprobs: null, finish_reason: null }]),
      ...pieces.map((p) => chunk([{ index: 0, delta: { content: p }, logprobs: null, finish_reason: null }])),
      chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]),
      chunk([], { usage: { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29, prompt_tokens_details: { cached_tokens: 0 } } }),
      "data: [DONE]\n\n",
    ],
  };
}

/** An API error as OpenAI writes it. */
export function openaiError(status: number, error: { message: string; type: string; param: string | null; code: string | null }): WireReply {
  return { status, headers: JSON_HEADERS, body: `${JSON.stringify({ error }, null, 2)}\n` };
}

/** What OpenAI answers a reasoning model (o3-mini, gpt-5-mini) sent `temperature`. */
export const TEMPERATURE_REJECTED = openaiError(400, {
  message: "Unsupported parameter: 'temperature' is not supported with this model.",
  type: "invalid_request_error",
  param: "temperature",
  code: "unsupported_parameter",
});
