import { Hono } from "hono";
import { DEFAULT_SERVE_MAX_CLIENTS } from "../config/load.js";
import { messageOf } from "../errors.js";
import { EventIndex, type Estimator } from "../read-models.js";
import type { Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import { apiRoutes } from "./api.js";
import { loopbackHostsOnly, requireBearer } from "./auth.js";
import { BoardCache } from "./board.js";
import { EventHub } from "./hub.js";
import { pageRoutes, type PageAssets } from "./page.js";
import { responder } from "./respond.js";
import { eventStream } from "./sse.js";

/** What the dashboard is built from. */
export interface AppDeps {
  store: Store;
  tracker: Tracker;
  /** Redacts every secret the config names; every answer passes through it. */
  redact: (text: string) => string;
  /** Every request must carry this bearer token (required for any address but loopback). */
  token?: string;
  /** Bound to loopback without a token: only requests addressed to localhost are answered. */
  loopbackOnly?: boolean;
  page?: PageAssets;
  warn: (message: string) => void;
  heartbeatMs?: number;
  /** `serve.client_buffer_bytes`: what the event stream holds unsent for one client (default 256 KiB; tests lower it). */
  bufferBytes?: number;
  /** `serve.max_clients`: event-stream clients at once (default 256); one more is answered 503. */
  maxClients?: number;
  /** Prices calls of unknown price from their tokens (`serve.estimate_at`; docs/serve.md "Cost"). */
  estimate?: Estimator;
}

/** The dashboard as a Hono app, with the hub that feeds it and a close for both. */
export interface DashboardApp {
  app: Hono;
  hub: EventHub;
  index: EventIndex;
  /** Resolves when the index holds the log as it was at start (the hub follows from there). */
  ready: Promise<void>;
  /** Event-stream clients: open now, opened since start, dropped for their budget (docs/serve.md "Slow clients"). */
  streams(): { open: number; opened: number; dropped: number };
  close(): void;
}

/** Read-only: GET and HEAD only; anything else is 405 (docs/serve.md: nothing served changes state). */
export function createDashboard(deps: AppDeps): DashboardApp {
  const index = new EventIndex(deps.estimate);
  const hub = new EventHub(deps.store, index, deps.warn);
  const ready = hub.start();
  ready.catch((e: unknown) => deps.warn(`reading the event log failed: ${messageOf(e)}`));
  // Every open stream's end, called on close: one entry per client, no listener on a shared signal (500 clients warn nothing).
  const streams = new Set<() => void>();
  const maxClients = deps.maxClients ?? DEFAULT_SERVE_MAX_CLIENTS;
  const counts = { opened: 0, dropped: 0 };
  const onClose = (end: () => void) => {
    if (streams.size >= maxClients) return undefined;
    counts.opened++;
    streams.add(end);
    return () => void streams.delete(end);
  };
  const respond = responder(deps.redact);
  const app = new Hono();

  app.use("*", async (c, next) => {
    await next();
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("Cross-Origin-Resource-Policy", "same-origin");
    if (deps.page && (c.res.headers.get("content-type") ?? "").startsWith("text/html")) c.header("Content-Security-Policy", deps.page.csp);
  });
  app.use("*", async (c, next) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD") return c.json({ error: "this dashboard is read-only: only GET" }, 405, { Allow: "GET, HEAD" });
    return next();
  });
  if (deps.loopbackOnly) app.use("*", loopbackHostsOnly());
  if (deps.token !== undefined)
    app.use(
      "*",
      requireBearer(deps.token, () => deps.page?.html),
    );

  app.get(
    "/api/events/stream",
    eventStream({
      store: deps.store,
      hub,
      redact: deps.redact,
      onClose,
      ...(deps.heartbeatMs ? { heartbeatMs: deps.heartbeatMs } : {}),
      ...(deps.bufferBytes ? { bufferBytes: deps.bufferBytes } : {}),
      maxClients,
      onDrop: () => void counts.dropped++,
    }),
  );
  apiRoutes(app, {
    store: deps.store,
    tracker: deps.tracker,
    index,
    hub,
    board: new BoardCache(
      deps.store,
      deps.tracker,
      () => hub.lastSeq,
      deps.tracker.kind === "local" ? 2_000 : 15_000,
      (id) => index.cycleUsage(id).unpriced_calls > 0,
    ),
    respond,
    ready,
    ...(deps.estimate ? { estimate: deps.estimate } : {}),
  });
  pageRoutes(app, deps.page);

  app.notFound((c) => respond(c, { error: `no route ${c.req.method} ${c.req.path} (GET /api lists them)` }, 404));
  app.onError((e, c) => {
    deps.warn(`request ${c.req.method} ${c.req.path} failed: ${e.message}`);
    return respond(c, { error: e.message }, 500);
  });

  return {
    app,
    hub,
    index,
    ready,
    streams: () => ({ open: streams.size, ...counts }),
    close() {
      for (const end of [...streams]) end();
      hub.close();
    },
  };
}
