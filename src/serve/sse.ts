import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { DEFAULT_SERVE_CLIENT_BUFFER_BYTES, DEFAULT_SERVE_MAX_CLIENTS } from "../config/load.js";
import { redactDeep } from "../redact.js";
import type { Store, StoredEvent } from "../store/port.js";
import type { EventHub } from "./hub.js";
import { intParam } from "./respond.js";

/** How long a client may stay over its budget of unsent bytes without taking any of them before it is dropped. */
export const STALL_MS = 2_000;
/** A client this many times over its budget is dropped at once, taking bytes or not (live events come faster than it reads). */
export const HARD_FACTOR = 16;
/** Frames larger than this are written in pieces of this size (Node's own high-water mark for a socket). */
export const WRITE_PIECE = 16 * 1024;
/** The most stored JSON one read of the log takes for a resuming client (docs/limits.md); the first event of a page always comes. */
export const READ_BACK_PAGE_BYTES = 128 * 1024;
/** …and the most events. */
export const READ_BACK_PAGE_EVENTS = 1000;
/**
 * Pages read back at once, across all clients: a page is read and serialised in one go, so this
 * bounds both the memory of pages in hand and how long a request of the API waits behind them.
 */
export const READ_BACK_AT_ONCE = 2;

/** What the stream needs. */
export interface StreamDeps {
  store: Store;
  hub: EventHub;
  redact: (text: string) => string;
  /**
   * Registers a stream with the server, which calls `end` on close; returns the unregister function,
   * or undefined when `maxClients` streams are already open (the request is refused).
   */
  onClose: (end: () => void) => (() => void) | undefined;
  /** Seconds between keep-alive comments. */
  heartbeatMs?: number;
  /** `serve.client_buffer_bytes`: the bytes the server holds unsent for one client (default 256 KiB). */
  bufferBytes?: number;
  /** `serve.max_clients`, for the refusal's message (the count itself is `onClose`'s). */
  maxClients?: number;
  /** Told of each client dropped for its budget. */
  onDrop?: () => void;
}

/** The Node response behind a Hono context on @hono/node-server: how much it holds unsent, and how to cut it. */
type Outgoing = { writableLength?: number; destroy?: () => void };
const nodeResponse = (c: Context): Outgoing | undefined => (c.env as { outgoing?: Outgoing } | undefined)?.outgoing;

const encoder = new TextEncoder();
/** One server-sent event, as bytes: `data:` the event's JSON (one line: JSON.stringify escapes newlines), `id:` its seq. */
const frameOf = (e: StoredEvent, redact: (text: string) => string): Uint8Array =>
  encoder.encode(`data: ${JSON.stringify(redactDeep(e, redact))}\nid: ${e.seq}\n\n`);

/**
 * `GET /api/events/stream`: every event committed to the store, by any process, as a server-sent
 * event whose id is its `seq`. A client that reconnects with `Last-Event-ID` (or `?after=SEQ`) gets
 * everything after it first, read from the store a page at a time (at most READ_BACK_PAGE_BYTES of
 * events a page), then the live events — none missed, none twice.
 *
 * Every client has one budget of unsent bytes, for what it reads back and what comes live alike
 * (issue 32): what the server queued for it and its socket has not taken. The read-back reads the
 * next page only while the client is under its budget, so it goes at the client's pace; a client
 * over its budget that takes nothing for STALL_MS, or HARD_FACTOR times over it, is dropped — its
 * connection closed and what waited for it let go — and resumes from its Last-Event-ID. A live
 * event is serialised once for every client (the same bytes wait in each queue), so clients that
 * never read cost their bytes once, not once each.
 */
export function eventStream(deps: StreamDeps) {
  const budget = deps.bufferBytes ?? DEFAULT_SERVE_CLIENT_BUFFER_BYTES;
  // The hub hands every listener the same event object: its bytes are made once, for all of them.
  const frames = new WeakMap<StoredEvent, Uint8Array>();
  const liveFrame = (e: StoredEvent) => {
    let f = frames.get(e);
    if (!f) frames.set(e, (f = frameOf(e, deps.redact)));
    return f;
  };
  // Clients reading back take turns (READ_BACK_AT_ONCE at a time), in the order they asked.
  let reading = 0;
  const turns: (() => void)[] = [];
  const turn = async () => {
    if (reading < READ_BACK_AT_ONCE) reading++;
    else await new Promise<void>((resolve) => turns.push(resolve));
  };
  const release = () => {
    const next = turns.shift();
    if (next) next();
    else reading--;
  };
  return (c: Context) => {
    const header = c.req.header("last-event-id");
    const resume = intParam(header !== undefined && header !== "" ? header : c.req.query("after"), "Last-Event-ID", 0, Number.MAX_SAFE_INTEGER);
    if (typeof resume === "object") return c.json({ error: resume.error }, 400);
    const issue = c.req.query("issue")?.replace(/^#/, "");
    const from = resume ?? deps.hub.lastSeq; // no resume point: only what happens from now on

    let ended = false;
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    let unsubscribe: () => void = () => undefined;
    // Whoever waits for the client to take bytes is woken when it ends, too.
    let wake: () => void = () => undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      unsubscribe();
      unregister();
      wake();
      finish();
    };
    const registered = deps.onClose(end);
    if (!registered) {
      const max = deps.maxClients ?? DEFAULT_SERVE_MAX_CLIENTS;
      return c.json({ error: `the dashboard already serves ${max} live clients, its bound (serve.max_clients): try again shortly` }, 503, {
        "Retry-After": "5",
      });
    }
    const unregister = registered;

    return streamSSE(c, async (stream) => {
      const out = nodeResponse(c);
      // Frames go out one after another; `queued` counts the bytes not yet taken by the response.
      let chain: Promise<void> = Promise.resolve();
      let queued = 0;
      let lastTaken = Date.now();
      let waiting: (() => void) | undefined;
      wake = () => {
        const w = waiting;
        waiting = undefined;
        w?.();
      };
      let live = false;
      const unsent = () => queued + (out?.writableLength ?? 0);
      const write = (bytes: Uint8Array | string) => {
        // A large frame goes in pieces (views, not copies): each piece the socket takes is progress, so a
        // slow reader working through a big event is not taken for one that reads nothing.
        if (typeof bytes !== "string" && bytes.byteLength > WRITE_PIECE) {
          for (let at = 0; at < bytes.byteLength; at += WRITE_PIECE) write(bytes.subarray(at, at + WRITE_PIECE));
          return;
        }
        const size = typeof bytes === "string" ? bytes.length : bytes.byteLength;
        queued += size;
        chain = chain
          .then(async () => {
            if (!ended) await stream.write(bytes);
          })
          .catch(end)
          .finally(() => {
            queued -= size;
            lastTaken = Date.now();
            wake();
          });
        check();
      };
      /** A client over its budget: its connection is cut (it resumes from its Last-Event-ID), and what waited for it is let go. */
      const drop = () => {
        if (ended) return;
        deps.onDrop?.();
        end();
        stream.abort();
        out?.destroy?.();
      };
      let stallTimer: NodeJS.Timeout | undefined;
      const check = () => {
        if (ended) return;
        const n = unsent();
        // Live events come at the log's pace, not the client's: past HARD_FACTOR budgets it is let go at once.
        // (The read-back comes at the client's pace: it never passes a budget and a page, bar one larger event.)
        if (live && n > HARD_FACTOR * budget) return drop();
        if (n > budget) stallTimer ??= setTimeout(stalled, STALL_MS);
      };
      // Over budget for STALL_MS: dropped unless it took bytes meanwhile (a burst it is reading through).
      const stalled = () => {
        stallTimer = undefined;
        if (ended || unsent() <= budget) return;
        if (Date.now() - lastTaken >= STALL_MS) return drop();
        stallTimer = setTimeout(stalled, STALL_MS);
      };
      /** Resolves when the client has taken some bytes (or the stream ended). */
      const taken = () => new Promise<void>((resolve) => (waiting = resolve));

      let sent = from;
      // The highest seq the hub delivered while the log was read back: the store has it; the read-back goes on until it has it too.
      let missed = 0;
      unsubscribe = deps.hub.subscribe((e) => {
        if (ended || e.seq <= sent) return;
        if (issue !== undefined && e.issue_id !== issue) return;
        if (!live) {
          missed = Math.max(missed, e.seq);
          return;
        }
        sent = e.seq;
        write(liveFrame(e));
      });
      stream.onAbort(end);
      write(`: dissent events after ${from}\nretry: 1000\n\n`);
      let ping: NodeJS.Timeout | undefined;
      try {
        for (;;) {
          while (!ended && unsent() >= budget) await taken(); // at the client's own pace
          // A page at a time, in turns, each after a turn of the event loop: many clients reading back
          // share the process with every other request instead of holding it until all of them are full.
          await turn();
          let batch: StoredEvent[] = [];
          try {
            await new Promise((resolve) => setImmediate(resolve));
            if (ended) break;
            batch = await deps.store.events({
              after: sent,
              limit: READ_BACK_PAGE_EVENTS,
              maxBytes: Math.min(READ_BACK_PAGE_BYTES, budget),
              ...(issue !== undefined ? { issueId: issue } : {}),
            });
            for (const e of batch) {
              if (ended || e.seq <= sent) continue;
              sent = e.seq;
              write(frameOf(e, deps.redact));
            }
          } finally {
            release();
          }
          if (ended) break;
          // Caught up with the store and with everything the hub delivered meanwhile: live from here, synchronously.
          if (batch.length === 0 && missed <= sent) break;
        }
        if (!ended) {
          live = true;
          ping = setInterval(() => write(": ping\n\n"), deps.heartbeatMs ?? 15_000);
          await done;
        }
      } finally {
        clearInterval(ping);
        clearTimeout(stallTimer);
        end();
      }
    });
  };
}
