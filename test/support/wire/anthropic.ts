import type { WireReply } from "./server.js";

/**
 * Anthropic's Messages wire as api.anthropic.com writes it: one-line JSON with `content` blocks
 * (a `thinking` block before the text when extended thinking is on), `event:`/`data:` SSE pairs
 * for a stream, and errors shaped `{"type":"error","error":{"type","message"},"request_id"}`.
 */

const JSON_HEADERS = { "content-type": "application/json", "request-id": "req_011CSHoEeqs5C35K2UUqR7Fy", "anthropic-organization-id": "org-test" };
const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "request-id": "req_011CSHoF2dx8uJX3sQ9ofa2T" };

/** Anthropic's usage: `input_tokens` counts only what was neither read from nor written to the prompt cache. */
const usage = (input: number, output: number, cache: { read?: number; write?: number } = {}) => ({
  input_tokens: input,
  cache_creation_input_tokens: cache.write ?? 0,
  cache_read_input_tokens: cache.read ?? 0,
  cache_creation: { ephemeral_5m_input_tokens: cache.write ?? 0, ephemeral_1h_input_tokens: 0 },
  output_tokens: output,
  service_tier: "standard",
});

/** A message reply; with `thinking`, a thinking block (signed) comes first, as extended thinking writes it. */
export function anthropicJson(
  model: string,
  text: string,
  o: { thinking?: string; input?: number; output?: number; cacheRead?: number; cacheWrite?: number } = {},
): WireReply {
  const content = [
    ...(o.thinking ? [{ type: "thinking", thinking: o.thinking, signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" }] : []),
    { type: "text", text },
  ];
  const body = {
    model,
    id: "msg_013Zva2CMHLNnXjNJJKqJ2EF",
    type: "message",
    role: "assistant",
    content,
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: usage(o.input ?? 2095, o.output ?? 503, { ...(o.cacheRead ? { read: o.cacheRead } : {}), ...(o.cacheWrite ? { write: o.cacheWrite } : {}) }),
  };
  return { status: 200, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

/** The same reply streamed: message_start, the text block's deltas, a ping, message_delta, message_stop. */
export function anthropicSse(model: string, text: string): WireReply {
  const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const pieces = text.match(/[\s\S]{1,6}/g) ?? [];
  return {
    status: 200,
    headers: SSE_HEADERS,
    body: [
      event("message_start", {
        type: "message_start",
        message: {
          id: "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
          type: "message",
          role: "assistant",
          content: [],
          model,
          stop_reason: null,
          stop_sequence: null,
          usage: usage(25, 1),
        },
      }),
      event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      'event: ping\ndata: {"type": "ping"}\n\n',
      ...pieces.map((p) => event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } })),
      event("content_block_stop", { type: "content_block_stop", index: 0 }),
      event("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 15 } }),
      event("message_stop", { type: "message_stop" }),
    ],
  };
}

/** An API error as Anthropic writes it. */
export function anthropicError(status: number, type: string, message: string): WireReply {
  return { status, headers: JSON_HEADERS, body: JSON.stringify({ type: "error", error: { type, message }, request_id: "req_011CSHoEeqs5C35K2UUqR7Fy" }) };
}
