import type { Client } from "pg";
import type { EventsPort, StoredEvent } from "../port.js";
import type { PgConn } from "./connection.js";
import { PG_CHANNEL } from "./schema.js";

/** A connection of its own that LISTENs on the events channel and calls `onNotice` for each notice. */
async function listen(conn: PgConn, onNotice: () => void, onError?: (e: unknown) => void): Promise<Client> {
  const pg = (await import("pg")).default as unknown as typeof import("pg");
  const listener = new pg.Client({ connectionString: conn.url, keepAlive: true, application_name: "dissent-follow" });
  listener.on("error", (e) => onError?.(e));
  listener.on("notification", () => onNotice());
  return listener;
}

/**
 * Follows the log across processes (docs/serve.md): every notice on the channel (sent at commit)
 * drains everything after the last event seen, in pages of 500, one drain at a time.
 */
export function followEvents(conn: PgConn, port: EventsPort, after: number, onEvent: (e: StoredEvent) => void, onError?: (e: unknown) => void): () => void {
  let last = after;
  let stopped = false;
  let client: Client | undefined;
  let draining = Promise.resolve();
  const drain = () => {
    draining = draining.then(async () => {
      if (stopped) return;
      try {
        for (;;) {
          const batch = await port.events({ after: last, limit: 500 });
          for (const e of batch) {
            if (stopped) return;
            last = e.seq;
            onEvent(e);
          }
          if (batch.length < 500) break;
        }
      } catch (e) {
        onError?.(e);
      }
    });
  };
  void (async () => {
    try {
      const listener = await listen(conn, drain, onError);
      client = listener;
      await listener.connect();
      await listener.query(`LISTEN ${PG_CHANNEL}`);
      if (stopped) await listener.end();
    } catch (e) {
      if (!stopped) onError?.(e);
    }
    drain();
  })();
  // A notification can be missed while the listener reconnects: a slow poll catches up.
  const poll = setInterval(drain, 2000);
  poll.unref();
  const stop = () => {
    stopped = true;
    clearInterval(poll);
    void client?.end().catch(() => undefined); // ending a listener that already failed has nothing to report
    conn.followers.delete(stop);
  };
  conn.followers.add(stop);
  return stop;
}
