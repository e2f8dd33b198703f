/**
 * Plain HTTP servers on 127.0.0.1 for the transport's tests (test/models/http-fetch*.test.ts): each
 * request answered by a handler that may do anything a real server or network does (hang, reset,
 * pour bytes as fast as the client reads); every server and connection is closed by `closeServers`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** How a request is answered: the handler gets the request body as text and its index. */
export type Handler = (req: IncomingMessage, res: ServerResponse, body: string, n: number) => void | Promise<void>;

/** The servers started, for `closeServers`. */
const servers: { server: Server; sockets: Set<Socket> }[] = [];
/** Closes every server started, cutting its open connections first. */
export async function closeServers(): Promise<void> {
  for (const { server, sockets } of servers.splice(0)) {
    for (const s of sockets) s.destroy(); // a hanging answer must not hold the close
    await new Promise((r) => server.close(r));
  }
}

/** A server on 127.0.0.1 answering with `handler`; its base URL and the requests it saw. */
export async function serve(handler: Handler): Promise<{ url: string; seen: { headers: IncomingMessage["headers"]; body: string; path: string }[] }> {
  const seen: { headers: IncomingMessage["headers"]; body: string; path: string }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const n = seen.push({ headers: req.headers, body, path: req.url ?? "" }) - 1;
    await handler(req, res, body, n);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  servers.push({ server, sockets });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

/** Writes `piece` as fast as the client reads, up to `total` bytes; resolves whether it all went. */
export function pour(res: ServerResponse, piece: Buffer, total: number): Promise<boolean> {
  return new Promise((resolve) => {
    let sent = 0;
    res.on("close", () => resolve(res.writableFinished));
    const pump = () => {
      while (!res.destroyed && sent < total) {
        sent += piece.length;
        if (!res.write(piece)) return void res.once("drain", pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
}

/** A chat-completions reply (JSON text) whose answer is `content`. */
export const completion = (content: string) =>
  JSON.stringify({
    id: "chatcmpl-t",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  });
