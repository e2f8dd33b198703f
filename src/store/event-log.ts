import type { DissentEvent, NewEvent } from "../contracts/events.js";
import type { Db } from "./db.js";

/** A typed event bus whose durable sink is the append-only `events` table. */
export interface EventLog {
  /** Stamps `at`, stores the event, then tells every subscriber. */
  append(event: NewEvent): DissentEvent;
  /** Events oldest first, optionally of one issue. */
  list(filter?: { issueId?: string }): DissentEvent[];
  /** In-process subscribers; returns the unsubscribe function. */
  subscribe(fn: (event: DissentEvent) => void): () => void;
  /** Runs `fn` inside one SQLite transaction (events appended in it land together or not at all). */
  transaction<T>(fn: () => T): T;
}

/** Hooks run inside the append transaction, e.g. to keep a folded snapshot equal to the log. */
export type AppendHook = (event: DissentEvent, db: Db) => void;

export function sqliteEventLog(db: Db, hooks: AppendHook[] = [], clock: () => Date = () => new Date()): EventLog {
  const insert = db.prepare("INSERT INTO events (type, at, issue_id, body) VALUES (?, ?, ?, ?)");
  const all = db.prepare<[], { body: string }>("SELECT body FROM events ORDER BY seq");
  const byIssue = db.prepare<[string], { body: string }>("SELECT body FROM events WHERE issue_id = ? ORDER BY seq");
  const subscribers = new Set<(e: DissentEvent) => void>();
  const write = db.transaction((event: DissentEvent) => {
    insert.run(event.type, event.at, event.issue_id, JSON.stringify(event));
    for (const hook of hooks) hook(event, db);
  });
  // Subscribers hear of an event only once it is durable: inside transaction() they wait for the commit.
  let depth = 0;
  let queued: DissentEvent[] = [];
  const notify = (events: readonly DissentEvent[]) => {
    let failure: unknown;
    for (const event of events) {
      for (const fn of subscribers) {
        try {
          fn(event);
        } catch (e) {
          failure ??= e; // every subscriber still hears of every event; the first failure is reported after
        }
      }
    }
    if (failure !== undefined) throw failure;
  };
  return {
    append(input) {
      const { type, ...rest } = input;
      const event = { type, at: clock().toISOString(), ...rest } as DissentEvent; // {"type", "at", "issue_id", …}
      write(event);
      if (depth > 0) queued.push(event);
      else notify([event]);
      return event;
    },
    list(filter) {
      const rows = filter?.issueId !== undefined ? byIssue.all(filter.issueId) : all.all();
      return rows.map((r) => JSON.parse(r.body) as DissentEvent);
    },
    subscribe(fn) {
      subscribers.add(fn);
      return () => void subscribers.delete(fn);
    },
    transaction(fn) {
      depth++;
      let result;
      try {
        result = db.transaction(fn)();
      } catch (e) {
        if (depth === 1) queued = [];
        throw e;
      } finally {
        depth--;
      }
      if (depth === 0) {
        const done = queued;
        queued = [];
        notify(done);
      }
      return result;
    },
  };
}
