import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { redactDeep } from "../redact.js";
import type { Store, StoredEvent } from "../store/port.js";
import type { EventHub } from "./hub.js";
import { intParam } from "./respond.js";

/**
 * The most bytes of events one client may have waiting to be written (docs/limits.md): a client that
 * stays past it for STALL_MS, or passes four times it, is dropped. A burst of events a reader drains
 * at once never drops it.
 */
export const CLIENT_QUEUE_BYTES = 4 * 1024 * 1024;
/** How long a client may stay past its queue bound before it is dropped. */
export const STALL_MS = 2_000;

/** What the stream needs. */
export interface StreamDeps {
  store: Store;
  hub: EventHub;
  redact: (text: string) => string;
  /** Registers a stream's end with the server, which calls every one on close; returns the unregister function. */
  onClose: (end: () => void) => () => void;
  /** Seconds between keep-alive comments. */
  heartbeatMs?: number;
  /** The per-client queue bound (default CLIENT_QUEUE_BYTES). */
  maxQueueBytes?: number;
}

const PAGE = 1000;

/** The Node response behind a Hono context on @hono/node-server, to cut a dropped client's connection. */
const nodeResponse = (c: Context): { destroy?: () => void } | undefined => (c.env as { outgoing?: { destroy?: () => void } } | undefined)?.outgoing;

/**
 * `GET /api/events/stream`: every event committed to the store, by any process, as a server-sent
 * event whose id is its `seq`. A client that reconnects with `Last-Event-ID` (or `?after=SEQ`) gets
 * everything after it first, read from the store at its own pace, then the live events — none
 * missed, none twice. A client that stops reading while live events keep coming is dropped once
 * its queue passes the bound (issue 20 item 2): the server never grows for it, and the browser's
 * EventSource reconnects with Last-Event-ID and reads the rest from the store.
 */
export function eventStream(deps: StreamDeps) {
  const limit = deps.maxQueueBytes ?? CLIENT_QUEUE_BYTES;
  return (c: Context) => {
    const header = c.req.header("last-event-id");
    const resume = intParam(header !== undefined && header !== "" ? header : c.req.query("after"), "Last-Event-ID", 0, Number.MAX_SAFE_INTEGER);
    if (typeof resume === "object") return c.json({ error: resume.error }, 400);
    const issue = c.req.query("issue")?.replace(/^#/, "");
    const from = resume ?? deps.hub.lastSeq; // no resume point: only what happens from now on

    return streamSSE(c, async (stream) => {
      let sent = from;
      let live = false;
      let ended = false;
      // Live events that arrive while the log is read back; past a page of them, the store is read again instead.
      const early: StoredEvent[] = [];
      let overflowed = false;
      let finish: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (finish = resolve));
      const end = () => {
        if (ended) return;
        ended = true;
        unsubscribe();
        unregister();
        finish();
      };
      // Writes go one after another; `pending` counts the bytes waiting. A write that fails (the client left) ends the stream.
      let queue: Promise<void> = Promise.resolve();
      let pending = 0;
      const write = (bytes: number, fn: () => Promise<unknown>) => {
        pending += bytes;
        queue = queue
          .then(async () => {
            if (!ended) await fn();
          })
          .catch(end)
          .finally(() => {
            pending -= bytes;
          });
      };
      /** A client too far behind: its connection is cut (it resumes from its Last-Event-ID), and what waited for it is let go. */
      const drop = () => {
        end();
        stream.abort();
        nodeResponse(c)?.destroy?.();
      };
      const send = (e: StoredEvent, isLive: boolean) => {
        if (ended || e.seq <= sent) return;
        if (issue !== undefined && e.issue_id !== issue) {
          sent = e.seq;
          return;
        }
        const data = JSON.stringify(redactDeep(e, deps.redact));
        if (isLive && pending + data.length > 4 * limit) return drop();
        sent = e.seq;
        write(data.length, () => stream.writeSSE({ id: String(e.seq), data }));
        if (isLive && pending > limit) watchStall();
      };
      // Past the bound, a client gets STALL_MS to drain (a burst it reads at once); one still past it then is not reading.
      let stallTimer: NodeJS.Timeout | undefined;
      const watchStall = () => {
        stallTimer ??= setTimeout(() => {
          stallTimer = undefined;
          if (pending > limit) drop();
        }, STALL_MS);
      };
      // Subscribe before reading back, so an event committed meanwhile waits in `early` instead of falling between.
      const unsubscribe = deps.hub.subscribe((e) => {
        if (live) send(e, true);
        else if (early.length < PAGE) early.push(e);
        else overflowed = true; // the store holds them: read back again once this page is through
      });
      const unregister = deps.onClose(end);
      stream.onAbort(end);
      write(0, () => stream.write(`: dissent events after ${from}\nretry: 1000\n\n`));
      let ping: NodeJS.Timeout | undefined;
      try {
        for (;;) {
          const batch = await deps.store.events({ after: sent, limit: PAGE, ...(issue !== undefined ? { issueId: issue } : {}) });
          for (const e of batch) {
            send(e, false);
            if (pending > limit) await queue; // the read-back goes at the client's pace: never dropped for being slow here
          }
          await queue;
          if (ended) break;
          if (batch.length < PAGE) {
            if (!overflowed) break;
            overflowed = false;
            early.length = 0;
          }
        }
        for (const e of early) send(e, false);
        early.length = 0;
        live = true;
        ping = setInterval(() => write(0, () => stream.write(": ping\n\n")), deps.heartbeatMs ?? 15_000);
        await done;
      } finally {
        clearInterval(ping);
        clearTimeout(stallTimer);
        end();
      }
    });
  };
}
