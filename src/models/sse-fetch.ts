interface ChunkChoice {
  index?: number;
  delta?: { content?: string | ContentPart[] | null; reasoning_content?: string | null; reasoning?: string | null; role?: string };
  finish_reason?: string | null;
}
interface Chunk {
  id?: string;
  model?: string;
  created?: number;
  choices?: ChunkChoice[];
  usage?: Record<string, unknown> | null;
}

/** One part of a content list (Mistral's thinking models): text is the answer, thinking is reasoning. */
interface ContentPart {
  type?: string;
  text?: unknown;
  thinking?: unknown;
}

/** The text of Mistral's `thinking` field: a list of text chunks (or, leniently, a string). */
const thinkingText = (t: unknown): string =>
  typeof t === "string" ? t : Array.isArray(t) ? t.map((c) => (typeof (c as ContentPart)?.text === "string" ? (c as { text: string }).text : "")).join("") : "";

/** A delta's content split into answer and reasoning: a string is all answer; in a list, only `text` parts are. */
export function deltaParts(content: string | ContentPart[] | null | undefined): { text: string; reasoning: string } {
  if (typeof content === "string") return { text: content, reasoning: "" };
  let text = "";
  let reasoning = "";
  for (const part of Array.isArray(content) ? content : []) {
    if (part?.type === "text" && typeof part.text === "string") text += part.text;
    else if (part?.type === "thinking") reasoning += thinkingText(part.thinking);
  }
  return { text, reasoning };
}

/** The finish reason given to a stream that stopped with neither a finish reason nor `[DONE]`: the call door reads it as `truncated`. */
export const INCOMPLETE_STREAM = "incomplete_stream";

/**
 * Folds an OpenAI chat-completions SSE body into the equivalent non-streaming JSON reply. A stream
 * that stopped before finishing says so (docs/configuration.md): it is never given `finish_reason: "stop"`.
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
      const parts = deltaParts(choice.delta?.content);
      content += parts.text;
      reasoning += parts.reasoning + (choice.delta?.reasoning_content ?? choice.delta?.reasoning ?? "");
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
