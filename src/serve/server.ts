import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import type { Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import { createDashboard, type DashboardApp } from "./app.js";
import { UsageError } from "../errors.js";
import { isLoopback, TOKEN_ENV } from "./auth.js";
import { priceEstimator } from "./estimate.js";
import { loadPage } from "./page.js";

/** How to run `dissent serve`. */
export interface ServeOptions {
  store: Store;
  tracker: Tracker;
  redact: (text: string) => string;
  host: string;
  /** 0 picks a free port (the URL says which). */
  port: number;
  token?: string;
  warn: (message: string) => void;
  /** The built page's folder (default: dist/web). */
  webDir?: string;
  heartbeatMs?: number;
  /** `serve.client_buffer_bytes` (default 256 KiB). */
  bufferBytes?: number;
  /** `serve.max_clients` (default 256). */
  maxClients?: number;
  /** `serve.estimate_at`: the price calls of unknown price are estimated at; null or absent, none. */
  estimateAt?: string | null;
}

/** A running dashboard. */
export interface RunningServer {
  url: string;
  port: number;
  dashboard: DashboardApp;
  close(): Promise<void>;
}

const urlHost = (host: string) => (host.includes(":") ? `[${host}]` : host);

/** How often a closing server closes the connections that went idle (a stream it ended, a response sent). */
const CLOSE_POLL_MS = 20;
/** How long a closing server lets a response still being read finish before it cuts the connection (docs/serve.md). */
export const CLOSE_GRACE_MS = 500;

/** Starts the dashboard and its API on `host:port` (Hono on Node). */
export async function startServer(o: ServeOptions): Promise<RunningServer> {
  if (o.token === undefined && !isLoopback(o.host)) throw new UsageError(`refusing to serve ${o.host} without a token (${TOKEN_ENV})`);
  const page = loadPage(o.webDir);
  const estimate = await priceEstimator(o.estimateAt ?? null);
  const dashboard = createDashboard({
    store: o.store,
    tracker: o.tracker,
    redact: o.redact,
    ...(o.token !== undefined ? { token: o.token } : { loopbackOnly: isLoopback(o.host) }),
    ...(page ? { page } : {}),
    warn: o.warn,
    ...(o.heartbeatMs ? { heartbeatMs: o.heartbeatMs } : {}),
    ...(o.bufferBytes ? { bufferBytes: o.bufferBytes } : {}),
    ...(o.maxClients ? { maxClients: o.maxClients } : {}),
    ...(estimate ? { estimate } : {}),
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: dashboard.app.fetch, hostname: o.host, port: o.port }, () => resolve(s as Server)) as Server;
    s.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${urlHost(o.host)}:${port}/`,
    port,
    dashboard,
    close: async () => {
      dashboard.close(); // every open stream ends its response
      await new Promise<void>((resolve) => {
        // A stream's end reaches its connection a moment later: each connection is closed as soon as it is idle…
        const idle = setInterval(() => server.closeIdleConnections(), CLOSE_POLL_MS);
        // …and one whose client does not hang up (a response it does not read) is cut off after a grace period.
        const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        server.close(() => {
          clearInterval(idle);
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
