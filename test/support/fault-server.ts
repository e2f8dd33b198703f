/**
 * An OpenAI-compatible model server that misbehaves on a schedule, as real servers and networks
 * do: connections reset before an answer, stalls, 5xx and 429 bursts, streams cut before they
 * finish, replies cut at the token limit, huge replies (JSON or SSE, written as fast as the client
 * reads them), and slow drips. Used by the reply-cap tests and the chaos suite (test/chaos/).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { ChatRequest } from "./openai-server.js";

/** One way an answer goes wrong. */
export type Fault =
  /** the connection is dropped before a byte is answered */
  | { kind: "reset" }
  /** nothing for `ms`, then the normal answer (a stall past call_timeout_ms is a timeout) */
  | { kind: "stall"; ms: number }
  /** an error status (500, 502, 503, 429), with Retry-After when given */
  | { kind: "status"; status: number; retryAfterS?: number }
  /** the answer as SSE, stopped after half its text with no finish reason and no [DONE] */
  | { kind: "cut_stream" }
  /** the answer with finish_reason "length": cut off at the token limit */
  | { kind: "length" }
  /** a reply of `bytes` bytes of text (JSON, or SSE chunks), written as the client reads it */
  | { kind: "huge"; bytes: number; sse?: boolean }
  /** the answer as SSE, one 7-character chunk every `chunkMs` */
  | { kind: "drip"; chunkMs: number };

/** What the server answers when no fault applies. */
export type Answer = (req: ChatRequest, n: number) => string | Promise<string>;
/** The fault (if any) for the `n`-th request. */
export type Schedule = (req: ChatRequest, n: number) => Fault | undefined;

export interface FaultServer {
  /** `http://127.0.0.1:<port>/v1`. */
  url: string;
  requests: ChatRequest[];
  /** Faults applied, by kind. */
  injected: Map<Fault["kind"], number>;
  /** For each huge reply: the bytes it was to have, and how many the client took before it hung up. */
  huge: { planned: number; sent: number; finished: boolean }[];
  /** Replaces the schedule (e.g. none, for a clean rerun). */
  reschedule(schedule: Schedule): void;
  close(): Promise<void>;
}

const chunk = (model: string, delta: Record<string, unknown>, finish: string | null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-f", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function json(res: ServerResponse, model: string, content: string, finish = "stop"): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      id: "chatcmpl-f",
      object: "chat.completion",
      created: 1,
      model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finish }],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    }),
  );
}

/** Writes `head`, then `piece` until `total` bytes, then `tail`, as fast as the client reads; resolves with what was written when done or when the client left. */
function pour(res: ServerResponse, head: string, piece: string, total: number, tail: string): Promise<{ sent: number; finished: boolean }> {
  return new Promise((resolve) => {
    let sent = 0;
    let settled = false;
    const settle = (finished: boolean) => {
      if (settled) return;
      settled = true;
      resolve({ sent, finished });
    };
    res.on("close", () => settle(false));
    const buf = Buffer.from(piece);
    const pump = () => {
      while (!res.destroyed && sent < total) {
        sent += buf.length;
        if (!res.write(buf)) return void res.once("drain", pump);
      }
      if (!res.destroyed) res.end(tail, () => settle(true));
    };
    res.write(head);
    sent += Buffer.byteLength(head);
    pump();
  });
}

/** Starts the server on 127.0.0.1 with a random port. */
export async function startFaultServer(answer: Answer, schedule: Schedule = () => undefined): Promise<FaultServer> {
  let current = schedule;
  const requests: ChatRequest[] = [];
  const injected = new Map<Fault["kind"], number>();
  const huge: FaultServer["huge"] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (!req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    const request: ChatRequest = { path: req.url, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest["body"] };
    const n = requests.push(request) - 1;
    const model = request.body.model;
    const fault = current(request, n);
    if (fault) injected.set(fault.kind, (injected.get(fault.kind) ?? 0) + 1);
    const content = () => Promise.resolve(answer(request, n));
    switch (fault?.kind) {
      case "reset":
        req.socket.destroy();
        return;
      case "stall":
        await new Promise((r) => setTimeout(r, fault.ms));
        if (!res.destroyed) json(res, model, await content());
        return;
      case "status":
        res.writeHead(fault.status, {
          "content-type": "application/json",
          ...(fault.retryAfterS !== undefined ? { "retry-after": String(fault.retryAfterS) } : {}),
        });
        res.end(JSON.stringify({ error: { message: `injected ${fault.status}`, type: "server_error", code: null } }));
        return;
      case "length":
        json(res, model, (await content()).slice(0, 12), "length");
        return;
      case "cut_stream": {
        const text = await content();
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(chunk(model, { role: "assistant", content: "" }, null));
        res.end(chunk(model, { content: text.slice(0, Math.ceil(text.length / 2)) }, null));
        return;
      }
      case "drip": {
        const text = await content();
        res.writeHead(200, { "content-type": "text/event-stream" });
        for (const piece of text.match(/[\s\S]{1,7}/g) ?? [""]) {
          if (res.destroyed) return;
          res.write(chunk(model, { content: piece }, null));
          await new Promise((r) => setTimeout(r, fault.chunkMs));
        }
        res.write(chunk(model, {}, "stop"));
        res.end("data: [DONE]\n\n");
        return;
      }
      case "huge": {
        const record = { planned: fault.bytes, sent: 0, finished: false };
        huge.push(record);
        if (fault.sse) {
          res.writeHead(200, { "content-type": "text/event-stream" });
          const piece = chunk(model, { content: "word ".repeat(200) }, null);
          Object.assign(
            record,
            await pour(res, chunk(model, { role: "assistant", content: "" }, null), piece, fault.bytes, `${chunk(model, {}, "stop")}data: [DONE]\n\n`),
          );
        } else {
          // No Content-Length: the client learns the size only by reading, as from a chunked reply.
          res.writeHead(200, { "content-type": "application/json" });
          const head = `{"id":"chatcmpl-f","object":"chat.completion","created":1,"model":${JSON.stringify(model)},"choices":[{"index":0,"message":{"role":"assistant","content":"`;
          const tail = `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}`;
          Object.assign(record, await pour(res, head, "word ".repeat(13_107), fault.bytes, tail));
        }
        return;
      }
      default:
        json(res, model, await content());
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    injected,
    huge,
    reschedule: (s) => void (current = s),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
