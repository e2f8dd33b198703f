import { messageOf } from "../errors.js";
import { EventIndex } from "../read-models.js";
import type { Store, StoredEvent } from "../store/port.js";

/** Told of each event committed to the store, in `seq` order. */
export type Listener = (e: StoredEvent) => void;

/** How many events one read of the log takes. */
const PAGE = 2000;

/**
 * The server's one window on the log: it folds the log into the EventIndex at start, then follows
 * the store (SQLite: by `seq`; PostgreSQL: LISTEN/NOTIFY) and hands every new event, committed by
 * any process sharing the store, to the index and to each open stream.
 */
export class EventHub {
  private readonly listeners = new Set<Listener>();
  private stop: (() => void) | undefined;
  private seen = 0;
  private failure: unknown;

  constructor(
    private readonly store: Store,
    private readonly index: EventIndex,
    private readonly warn: (message: string) => void,
  ) {}

  /** The last `seq` the hub has delivered. */
  get lastSeq(): number {
    return this.seen;
  }

  /**
   * Folds what the log holds now into the index, then follows it. The fold reads only the events
   * the index uses, a page at a time, and lets the server answer between pages.
   */
  async start(): Promise<void> {
    const end = await this.store.lastSeq();
    this.seen = end; // streams without a resume point start here, not at the beginning of the log
    for (let after = 0; ; ) {
      const batch = await this.store.events({ after, limit: PAGE, types: EventIndex.TYPES });
      for (const e of batch) if (e.seq <= end) this.index.apply(e);
      after = batch.at(-1)?.seq ?? after;
      if (batch.length < PAGE || after >= end) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.index.advance(end);
    this.stop = this.store.follow(
      end,
      (e) => this.deliver(e),
      (e) => {
        // One warning per kind of failure, not one per poll: the follower keeps trying.
        const message = messageOf(e);
        if (message !== String(this.failure)) this.warn(`following the store failed (retrying): ${message}`);
        this.failure = message;
      },
    );
  }

  private deliver(e: StoredEvent): void {
    if (e.seq <= this.seen) return;
    this.seen = e.seq;
    this.failure = undefined;
    this.index.apply(e);
    for (const l of this.listeners) l(e);
  }

  /** Calls `fn` for every event delivered from now on; returns the unsubscribe function. */
  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  close(): void {
    this.stop?.();
    this.listeners.clear();
  }
}
