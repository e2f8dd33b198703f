import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type McpServer, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { isLoopback, loopbackHostsOnly, requireBearer } from "../serve/auth.js";

/** Sessions held at once; the least recently used one is closed to make room (docs/mcp.md). */
export const MAX_SESSIONS = 32;

/** How to serve MCP over Streamable HTTP. */
export interface McpHttpOptions {
  host: string;
  /** 0 picks a free port (the URL says which). */
  port: number;
  /** Every request must carry `Authorization: Bearer <token>` when set; required on a non-loopback address. */
  token?: string;
  /** A new MCP server for each session (one server per transport, as the SDK requires). */
  serverFor: () => McpServer;
  /** A request body's bound (`mcp.max_message_bytes`, docs/limits.md). */
  maxBodyBytes: number;
  warn: (message: string) => void;
}

/** A running MCP endpoint. */
export interface RunningMcpHttp {
  /** The endpoint's URL (`http://HOST:PORT/mcp`). */
  url: string;
  port: number;
  close(): Promise<void>;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
}

const urlHost = (host: string) => (host.includes(":") ? `[${host}]` : host);
const jsonError = (status: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }), { status, headers: { "content-type": "application/json" } });

/**
 * `dissent mcp --http HOST:PORT`: the Streamable HTTP transport (stateful sessions) on Hono, behind
 * the same guards as `dissent serve` — a bearer token when one is given, and without one only
 * loopback, answering only requests that name this machine (DNS rebinding).
 */
export async function startMcpHttp(o: McpHttpOptions): Promise<RunningMcpHttp> {
  const [{ Hono }, { serve }] = await Promise.all([import("hono"), import("@hono/node-server")]);
  const sessions = new Map<string, Session>(); // insertion order = least recently used first
  const closeSession = async (id: string) => {
    const s = sessions.get(id);
    sessions.delete(id);
    await s?.transport.close().catch((e: unknown) => o.warn(`an MCP session did not close cleanly: ${String(e)}`));
    await s?.server.close().catch(() => undefined);
  };

  const app = new Hono();
  if (o.token !== undefined)
    app.use(
      "*",
      requireBearer(o.token, () => undefined),
    );
  else if (isLoopback(o.host)) app.use("*", loopbackHostsOnly());
  app.all("/mcp", async (c) => {
    const id = c.req.header("mcp-session-id");
    if (id !== undefined) {
      const s = sessions.get(id);
      if (!s) return jsonError(404, "no such MCP session (it ended, or the server restarted): initialize a new one");
      sessions.delete(id);
      sessions.set(id, s); // most recently used
      return s.transport.handleRequest(c.req.raw);
    }
    const server = o.serverFor();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: o.maxBodyBytes,
      onsessioninitialized: async (sid) => {
        sessions.set(sid, { transport, server });
        const oldest = sessions.keys().next().value;
        if (sessions.size > MAX_SESSIONS && oldest !== undefined) await closeSession(oldest);
      },
      onsessionclosed: (sid) => void sessions.delete(sid),
    });
    await server.connect(transport);
    const response = await transport.handleRequest(c.req.raw);
    // A request that did not start a session (not an initialize) leaves nothing behind.
    if (transport.sessionId === undefined) await server.close().catch(() => undefined);
    return response;
  });
  app.notFound((c) => c.json({ error: "dissent mcp answers at /mcp" }, 404));

  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: o.host, port: o.port }, () => resolve(s as Server)) as Server;
    s.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${urlHost(o.host)}:${port}/mcp`,
    port,
    close: async () => {
      await Promise.all([...sessions.keys()].map(closeSession));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 1_000).unref(); // a client that does not hang up
      });
    },
  };
}
