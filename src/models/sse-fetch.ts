interface ChunkChoice {
  index?: number;
  delta?: { content?: string | null; reasoning_content?: string | null; role?: string };
  finish_reason?: string | null;
}
interface Chunk {
  id?: string;
  model?: string;
  created?: number;
  choices?: ChunkChoice[];
  usage?: Record<string, unknown> | null;
}

/** The finish reason given to a stream that stopped with neither a finish reason nor `[DONE]`: the call door reads it as `truncated`. */
export const INCOMPLETE_STREAM = "incomplete_stream";

/**
 * Folds an OpenAI chat-completions SSE body into the equivalent non-streaming JSON reply. A stream
 * that stopped before finishing says so (CONTRACT §2 r2): it is never given `finish_reason: "stop"`.
 */
export function sseToCompletion(body: string): Record<string, unknown> {
  let content = "";
  let reasoning = "";
  let finish: string | null = null;
  let usage: Record<string, unknown> | null = null;
  let id = "chatcmpl-sse";
  let model = "";
  let created = 0;
  let done = false;
  for (const line of body.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "[DONE]") done = true;
    if (!data || data === "[DONE]") continue;
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      continue;
    }
    id = chunk.id ?? id;
    model = chunk.model ?? model;
    created = chunk.created ?? created;
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      if (choice.delta?.content) content += choice.delta.content;
      if (choice.delta?.reasoning_content) reasoning += choice.delta.reasoning_content;
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  return {
    id,
    object: "chat.completion",
    created,
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content, ...(reasoning ? { reasoning_content: reasoning } : {}) },
        finish_reason: finish ?? (done ? "stop" : INCOMPLETE_STREAM),
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

/**
 * A fetch that accepts a streamed (SSE) answer to a non-streaming request, as some
 * local servers send: the stream is read whole (through `base`, which bounds it) and handed on as ordinary JSON.
 */
export const sseTolerant =
  (base: typeof fetch): typeof fetch =>
  async (input, init) => {
    const res = await base(input, init);
    const type = res.headers.get("content-type") ?? "";
    const wantedStream = typeof init?.body === "string" && /"stream"\s*:\s*true/.test(init.body);
    if (!res.ok || wantedStream || !type.includes("text/event-stream")) return res;
    const json = JSON.stringify(sseToCompletion(await res.text()));
    const headers = new Headers(res.headers);
    headers.set("content-type", "application/json");
    headers.delete("content-length");
    return new Response(json, { status: res.status, statusText: res.statusText, headers });
  };

/** `sseTolerant` over the global fetch. */
export const sseTolerantFetch: typeof fetch = (input, init) => sseTolerant(fetch)(input, init);
