import type { AdversarialState } from "../../contracts/concern.js";
import type { NewEvent } from "../../contracts/events.js";
import type { EventQuery, EventsPort, StoredEvent } from "../port.js";
import { countFromRow, eventFromRow, eventToRow, stateFromRow, stateToRow } from "../rows.js";
import { countsCall, FOLDED, reduce, stampEvent } from "../state.js";
import type { SqliteConn } from "./connection.js";

/** The event log on SQLite, with the in-transaction append the other sub-ports and `transaction` reuse. */
export interface SqliteEvents extends EventsPort {
  /** Appends inside the caller's transaction: stamp, redact, insert; the fold and the cycle's counter move with each event. */
  appendRaw(events: readonly NewEvent[]): StoredEvent[];
}

/** The event log, its fold snapshot and the cycle's call counter (ADR-010 §3, §7). */
export function sqliteEvents(conn: SqliteConn): SqliteEvents {
  const { db } = conn;
  const q = {
    insertEvent: db.prepare("INSERT INTO events (type, at, issue_id, body) VALUES (?, ?, ?, ?)"),
    state: db.prepare<[string]>("SELECT state FROM adversarial_state WHERE issue_id = ?"),
    putState: db.prepare("INSERT INTO adversarial_state (issue_id, state) VALUES (?, ?) ON CONFLICT(issue_id) DO UPDATE SET state = excluded.state"),
    countCall: db.prepare("UPDATE plans SET calls = calls + 1, cost_usd = cost_usd + ? WHERE issue_id = ?"),
  };
  const loadState = (issueId: string): AdversarialState => stateFromRow(q.state.get(issueId));
  const appendRaw = (events: readonly NewEvent[]): StoredEvent[] => {
    conn.writeGuard();
    const out: StoredEvent[] = [];
    for (const input of events) {
      const event = stampEvent(input, conn.clock().toISOString(), conn.redact);
      const row = eventToRow(event);
      const info = q.insertEvent.run(row.type, row.at, row.issue_id, row.body);
      if (event.issue_id !== null && FOLDED.has(event.type)) {
        const next = stateToRow(event.issue_id, reduce(loadState(event.issue_id), event));
        q.putState.run(next.issue_id, next.state);
      }
      if (countsCall(event)) q.countCall.run(event.cost_usd ?? 0, event.issue_id);
      out.push({ ...event, seq: Number(info.lastInsertRowid) });
    }
    return out;
  };
  const port: SqliteEvents = {
    appendRaw,
    append: (events) => conn.write(() => appendRaw(events)),
    events: (query = {}) =>
      conn.read(() => {
        const statement = db.prepare(eventsSql(query));
        const max = query.maxBytes;
        if (max === undefined) return statement.all(...eventsArgs(query)).map(eventFromRow);
        // Paged by size: rows are stepped through one at a time and the read stops at the bound (the rest stay in the file).
        const out: StoredEvent[] = [];
        let bytes = 0;
        for (const row of statement.iterate(...eventsArgs(query))) {
          out.push(eventFromRow(row));
          bytes += bodyLength(row);
          if (bytes >= max) break;
        }
        return out;
      }),
    lastSeq: () => conn.read(() => countFromRow("events", db.prepare("SELECT COALESCE(MAX(seq), 0) AS n FROM events").get())),
    state: (id) => conn.read(() => loadState(id)),
    follow: (after, onEvent, onError) => pollEvents(conn, port, after, onEvent, onError),
  };
  return port;
}

/** The characters of a `seq, body` row's stored JSON. */
const bodyLength = (row: unknown): number => {
  const body = (row as { body?: unknown }).body;
  return typeof body === "string" ? body.length : 0;
};

/** The paged read's SQL: conditions in the order `eventsArgs` gives their values. */
function eventsSql(query: EventQuery): string {
  const where: string[] = [];
  if (query.issueId !== undefined) where.push("issue_id = ?");
  if (query.after !== undefined) where.push("seq > ?");
  if (query.types?.length) where.push(`type IN (${query.types.map(() => "?").join(", ")})`);
  return `SELECT seq, body FROM events${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY seq${query.limit ? ` LIMIT ${Math.max(1, Math.floor(query.limit))}` : ""}`;
}

function eventsArgs(query: EventQuery): (string | number)[] {
  return [...(query.issueId !== undefined ? [query.issueId] : []), ...(query.after !== undefined ? [query.after] : []), ...(query.types ?? [])];
}

/** Follows the table: every 150 ms, everything after the last event seen, in pages of 500. */
function pollEvents(conn: SqliteConn, port: EventsPort, after: number, onEvent: (e: StoredEvent) => void, onError?: (e: unknown) => void): () => void {
  let last = after;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    if (stopped || conn.closed()) return;
    try {
      for (;;) {
        const batch = await port.events({ after: last, limit: 500 });
        for (const e of batch) {
          last = e.seq;
          onEvent(e);
        }
        if (batch.length < 500) break;
      }
    } catch (e) {
      onError?.(e);
    }
    if (!stopped && !conn.closed()) timer = setTimeout(() => void tick(), 150);
  };
  void tick();
  const stop = () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    conn.followers.delete(stop);
  };
  conn.followers.add(stop);
  return stop;
}
