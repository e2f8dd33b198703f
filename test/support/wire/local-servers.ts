import type { WireReply } from "./server.js";

/**
 * OpenAI-compatible servers that answer in their own shapes: Mistral's thinking models stream
 * `delta.content` as a list of parts, and Ollama, vLLM and proxies write errors that are not
 * `{"error":{"message"}}`.
 */

/**
 * A Magistral stream: `delta.content` is a list of parts — `thinking` parts (themselves lists of
 * text chunks) first, then `text` parts — sent as SSE to a request that did not ask to stream.
 */
export function mistralPartsSse(model: string, thinking: readonly string[], answer: readonly string[]): WireReply {
  const chunk = (delta: unknown, finish: string | null = null, usage?: unknown) =>
    `data: ${JSON.stringify({ id: "cf79f7daaee244b1a0ae5c7b1444424a", object: "chat.completion.chunk", created: 1750000000, model, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
  return {
    status: 200,
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    body: [
      chunk({ role: "assistant", content: "" }),
      ...thinking.map((t) => chunk({ content: [{ type: "thinking", thinking: [{ type: "text", text: t }] }] })),
      ...answer.map((t) => chunk({ content: [{ type: "text", text: t }] })),
      chunk({ content: "" }, "stop", { prompt_tokens: 31, total_tokens: 95, completion_tokens: 64 }),
      "data: [DONE]\n\n",
    ],
  };
}

/** Ollama's error for a model it has not pulled. */
export const OLLAMA_MODEL_NOT_FOUND: WireReply = {
  status: 404,
  headers: { "content-type": "application/json; charset=utf-8" },
  body: `{"error":"model 'qwen3:8b' not found"}`,
};

/** vLLM's error for a model it does not serve. */
export const VLLM_MODEL_NOT_FOUND: WireReply = {
  status: 404,
  headers: { "content-type": "application/json" },
  body: `{"object":"error","message":"The model \`qwen3-8b\` does not exist.","type":"NotFoundError","param":null,"code":404}`,
};

/** A server (or the proxy in front of it) answering in plain text. */
export const PLAIN_TEXT_ERROR: WireReply = {
  status: 400,
  headers: { "content-type": "text/plain; charset=utf-8" },
  body: "Invalid request: context length of 4096 tokens exceeded (prompt has 5210 tokens)\n",
};
