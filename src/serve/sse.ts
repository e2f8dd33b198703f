import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { redactDeep } from "../redact.js";
import type { Store, StoredEvent } from "../store/port.js";
import type { EventHub } from "./hub.js";
import { intParam } from "./respond.js";

/** What the stream needs. */
export interface StreamDeps {
  store: Store;
  hub: EventHub;
  redact: (text: string) => string;
  /** Aborted when the server closes: every stream ends. */
  closing: AbortSignal;
  /** Seconds between keep-alive comments. */
  heartbeatMs?: number;
}

const PAGE = 1000;

/**
 * `GET /api/events/stream`: every event committed to the store, by any process, as a server-sent
 * event whose id is its `seq`. A client that reconnects with `Last-Event-ID` (or `?after=SEQ`) gets
 * everything after it first, read from the store, then the live events — none missed, none twice.
 */
export function eventStream(deps: StreamDeps) {
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
      const early: StoredEvent[] = [];
      let finish: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (finish = resolve));
      const end = () => {
        if (ended) return;
        ended = true;
        unsubscribe();
        finish();
      };
      // Writes go one after another; a write that fails (the client left) ends the stream.
      let queue: Promise<void> = Promise.resolve();
      const write = (fn: () => Promise<unknown>) => {
        queue = queue
          .then(async () => {
            if (!ended) await fn();
          })
          .catch(end);
      };
      const send = (e: StoredEvent) => {
        if (e.seq <= sent) return;
        sent = e.seq;
        if (issue !== undefined && e.issue_id !== issue) return;
        const data = JSON.stringify(redactDeep(e, deps.redact));
        write(() => stream.writeSSE({ id: String(e.seq), data }));
      };
      // Subscribe before reading back, so an event committed meanwhile waits in `early` instead of falling between.
      const unsubscribe = deps.hub.subscribe((e) => (live ? send(e) : void early.push(e)));
      stream.onAbort(end);
      deps.closing.addEventListener("abort", end, { once: true });
      if (deps.closing.aborted) end();
      write(() => stream.write(`: dissent events after ${from}\nretry: 1000\n\n`));
      let ping: NodeJS.Timeout | undefined;
      try {
        for (;;) {
          const batch = await deps.store.events({ after: sent, limit: PAGE, ...(issue !== undefined ? { issueId: issue } : {}) });
          for (const e of batch) send(e);
          await queue; // a slow client holds the read-back, not the server's memory
          if (batch.length < PAGE || ended) break;
        }
        for (const e of early) send(e);
        early.length = 0;
        live = true;
        ping = setInterval(() => write(() => stream.write(": ping\n\n")), deps.heartbeatMs ?? 15_000);
        await done;
      } finally {
        clearInterval(ping);
        end();
        deps.closing.removeEventListener("abort", end);
      }
    });
  };
}
