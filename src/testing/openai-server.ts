import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A chat-completions request as the server received it. */
export interface ChatRequest {
  path: string;
  headers: IncomingMessage["headers"];
  body: {
    model: string;
    messages: { role: string; content: string }[];
    temperature?: number;
    seed?: number;
    stream?: boolean;
    tools?: unknown;
    response_format?: { type: string; json_schema?: unknown };
    [k: string]: unknown;
  };
}

/** How the server answers one request. */
export interface ServerReply {
  /** Assistant message content (a normal 200 reply). */
  content?: string;
  /** HTTP status for an error reply (body is an OpenAI-style error unless `raw` is given). */
  status?: number;
  raw?: string;
  headers?: Record<string, string>;
  /** Wait before answering. */
  delayMs?: number;
  /** Answer as SSE even though the client did not ask to stream. */
  sse?: boolean;
  /** Drop the connection without answering. */
  destroy?: boolean;
  /** Token usage as OpenAI reports it; `prompt_tokens_details.cached_tokens` are the prompt tokens its prompt cache served. */
  usage?: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
  /** The `finish_reason` to report (default "stop"), e.g. "length" for a reply cut off at the token limit. */
  finishReason?: string;
  /** Streamed replies only: stop the stream after the content, with no finish reason and no `[DONE]` (a dropped stream). */
  cutStream?: boolean;
  /**
   * Non-streamed replies only: send the 200 status, the headers and the first N bytes of the JSON
   * body, then reset the connection (a connection reset mid-body).
   */
  resetAfterBytes?: number;
}

/** Decides the reply to the `index`-th request (0-based). */
export type ServerHandler = (req: ChatRequest, index: number) => ServerReply | Promise<ServerReply>;

/** A running server: its base URL (for `baseURL`/`base_url`), port, the requests received, and how to stop it. */
export interface OpenAIServer {
  /** `http://127.0.0.1:<port>/v1`. */
  url: string;
  port: number;
  /** Every chat-completions request received, in order. */
  requests: ChatRequest[];
  /** Stops the server, dropping open connections. */
  close(): Promise<void>;
}

/** The `usage` object of a completion: the reply's counts (11 and 7 by default) and, when given, the cached prompt tokens. */
function usageOf(usage: ServerReply["usage"]) {
  const prompt = usage?.prompt_tokens ?? 11;
  const completion = usage?.completion_tokens ?? 7;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(usage?.prompt_tokens_details ? { prompt_tokens_details: usage.prompt_tokens_details } : {}),
  };
}

function sse(res: ServerResponse, model: string, content: string, usage: ServerReply["usage"], finishReason = "stop", cut = false) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const id = "chatcmpl-test";
  const pieces = content.match(/[\s\S]{1,7}/g) ?? [""];
  res.write(
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })}\n\n`,
  );
  for (const p of pieces) {
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] })}\n\n`,
    );
  }
  if (cut) {
    res.end();
    return;
  }
  res.write(
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: {}, finish_reason: finishReason }] })}\n\n`,
  );
  res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model, choices: [], usage: usageOf(usage) })}\n\n`);
  res.end("data: [DONE]\n\n");
}

/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 with a random port, answering from a
 * handler: point any OpenAI-compatible client (or dissent's config) at `url` in your own tests.
 * It streams when the request says `stream: true`, and answers in JSON otherwise.
 */
export async function startOpenAIServer(handler: ServerHandler): Promise<OpenAIServer> {
  const requests: ChatRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    if (!req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    const request: ChatRequest = { path: req.url, headers: req.headers, body: JSON.parse(text) as ChatRequest["body"] };
    const index = requests.push(request) - 1;
    let reply: ServerReply;
    try {
      reply = await handler(request, index);
    } catch (e) {
      reply = { status: 500, raw: JSON.stringify({ error: { message: `handler threw: ${String(e)}` } }) };
    }
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.destroy) {
      req.socket.destroy();
      return;
    }
    if (res.destroyed) return;
    if (reply.status && reply.status !== 200) {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(reply.raw ?? JSON.stringify({ error: { message: `status ${reply.status}`, type: "server_error", code: null } }));
      return;
    }
    const content = reply.content ?? "";
    if (request.body.stream || reply.sse) {
      sse(res, request.body.model, content, reply.usage, reply.finishReason, reply.cutStream);
      return;
    }
    const body =
      reply.raw ??
      JSON.stringify({
        id: "chatcmpl-test",
        object: "chat.completion",
        created: 1,
        model: request.body.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: reply.finishReason ?? "stop" }],
        usage: usageOf(reply.usage),
      });
    if (reply.resetAfterBytes !== undefined) {
      const bytes = Buffer.from(body, "utf8");
      res.writeHead(200, { "content-type": "application/json", "content-length": String(bytes.length), ...reply.headers });
      res.write(bytes.subarray(0, reply.resetAfterBytes));
      // Let the headers and the partial body reach the client, then reset the connection.
      setTimeout(() => {
        const socket = req.socket as import("node:net").Socket & { resetAndDestroy?: () => void };
        if (socket.resetAndDestroy) socket.resetAndDestroy();
        else socket.destroy();
      }, 50);
      return;
    }
    res.writeHead(200, { "content-type": "application/json", ...reply.headers });
    res.end(body);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
