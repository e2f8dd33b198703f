import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request as the server received it. */
export interface WireRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON body, parsed (undefined when there was none). */
  body: Record<string, unknown> | undefined;
}

/** The bytes of one answer: a status, headers and the body as one string or as chunks written in turn. */
export interface WireReply {
  status: number;
  headers: Record<string, string>;
  body: string | readonly string[];
}

/** A server on 127.0.0.1 answering every request with the bytes a handler gives. */
export interface WireServer {
  /** `http://127.0.0.1:<port>/v1` */
  url: string;
  requests: WireRequest[];
  close(): Promise<void>;
}

/** Starts a server that replays a provider's exact bytes (its framing, headers and field order), chosen per request. */
export async function startWireServer(handler: (req: WireRequest, index: number) => WireReply): Promise<WireServer> {
  const requests: WireRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const request: WireRequest = {
      method: req.method ?? "GET",
      path: req.url ?? "/",
      headers: req.headers,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
    };
    const index = requests.push(request) - 1;
    const reply = handler(request, index);
    res.writeHead(reply.status, reply.headers);
    if (typeof reply.body === "string") {
      res.end(reply.body);
      return;
    }
    for (const piece of reply.body) res.write(piece);
    res.end();
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
