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
        server.close(() => resolve());
        server.closeIdleConnections();
        // A client that does not hang up is cut off after a grace period.
        setTimeout(() => server.closeAllConnections(), 1_000).unref();
      });
    },
  };
}
