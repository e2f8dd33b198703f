/**
 * The server's own words for a failed request (docs/errors.md "Provider errors"). The AI SDK reads
 * only OpenAI's `{"error":{"message"}}` (and Anthropic's own shape); any other body — Ollama's
 * `{"error":"model 'x' not found"}`, vLLM's `{"object":"error","message":…}`, FastAPI's
 * `{"detail":…}`, a proxy's plain text or HTML page — left it saying only "Not Found".
 */

/** At most this much of a server's message reaches the one-line error. */
export const MAX_SERVER_TEXT = 300;
/** At most this much of an error body is looked at: the message is near its start. */
const MAX_BODY_SCAN = 64 * 1024;

const text = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v : undefined);

/** The message in a JSON error body, in the shapes servers use. */
function jsonMessage(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return text(body);
  const b = body as Record<string, unknown>;
  const error = b.error;
  if (typeof error === "object" && error !== null) {
    const e = error as Record<string, unknown>;
    return text(e.message) ?? text(e.msg) ?? text(e.type);
  }
  const detail = Array.isArray(b.detail) ? b.detail.map((d) => text((d as { msg?: unknown })?.msg) ?? "").join("; ") : b.detail;
  return text(error) ?? text(b.message) ?? text(detail) ?? text(b.msg);
}

/** Whitespace collapsed, control characters out, cut at MAX_SERVER_TEXT. */
function tidy(s: string): string {
  const flat = s
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > MAX_SERVER_TEXT ? `${flat.slice(0, MAX_SERVER_TEXT - 1)}…` : flat;
}

/** The server's message in an error body: JSON in any common shape, an HTML page's title or text, or plain text. */
export function serverMessage(body: string | undefined): string | undefined {
  if (body === undefined) return undefined;
  const head = body.length > MAX_BODY_SCAN ? body.slice(0, MAX_BODY_SCAN) : body;
  const trimmed = head.trim();
  if (trimmed === "") return undefined;
  if (trimmed.startsWith("{") || trimmed.startsWith("[") || trimmed.startsWith('"')) {
    try {
      const found = jsonMessage(JSON.parse(trimmed));
      return found === undefined ? undefined : tidy(found);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e; // cut off or not JSON after all: read it as text below
    }
  }
  if (trimmed.startsWith("<")) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(trimmed)?.[1];
    const plain = text(title) ?? trimmed.replace(/<[^>]*>/g, " ");
    return text(plain) ? tidy(plain) : undefined;
  }
  return tidy(trimmed);
}

/**
 * What a failed request says: the SDK's message when it already is the server's, else the
 * server's own text with the HTTP status (`model 'x' not found (404 Not Found)`).
 */
export function errorDetail(message: string, status: number | undefined, body: string | undefined): string {
  const server = serverMessage(body);
  if (server === undefined || tidy(message).includes(server.replace(/…$/, ""))) return message;
  const statusLine = status === undefined ? message : `${status}${message ? ` ${message}` : ""}`;
  return statusLine ? `${server} (${statusLine})` : server;
}
