import type { StoreTx } from "../store/port.js";
import type { Round } from "./rounds.js";

/** A round taken from the queue by this worker: it must be finished or abandoned. */
export interface Job extends Round {
  /**
   * Ends the job. What `record` appends (IssuePlanFailed, say) and the queue's state commit in one
   * transaction; `again` queues the round anew, due at that time (another worker's lease expires then).
   */
  finish(record?: (tx: StoreTx) => Promise<unknown>, again?: Date): Promise<void>;
  /** Gives the job back untouched (an interrupted plan): another worker, or the next start, takes it up. */
  abandon(): Promise<void>;
}

/** The factory's work queue: in-process on SQLite, pg-boss on PostgreSQL (docs/factory.md). */
export interface WorkQueue {
  readonly kind: "in-process" | "pg-boss";
  /** Queues each round unless one for its issue and cycle is queued or running already; returns those queued now. */
  enqueue(rounds: readonly Round[]): Promise<Round[]>;
  /** The next round that is due, or undefined. */
  take(): Promise<Job | undefined>;
  /** Milliseconds until a queued round falls due, when the queue can tell (in-process); undefined otherwise. */
  nextDueInMs(): number | undefined;
  close(): Promise<void>;
}
