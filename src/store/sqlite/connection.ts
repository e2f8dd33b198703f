import type BetterSqlite3 from "better-sqlite3";
import { StoreError } from "../../errors.js";
import { MalformedRow } from "../columns.js";
import { isSqliteError, storeError } from "./errors.js";

/** The driver's connection. */
export type Db = BetterSqlite3.Database;

/** What every SQLite sub-port is built on: the one connection, its lock, its clock and its redactor. */
export interface SqliteConn {
  readonly db: Db;
  readonly home: string;
  /** The store file, or ":memory:" (messages name it). */
  readonly file: string;
  readonly readOnly: boolean;
  readonly clock: () => Date;
  readonly redact: (text: string) => string;
  /** Maps a driver failure (or a malformed row) to its one-line StoreError. */
  guard<T>(fn: () => T): T;
  /** Refuses a write on a store opened read-only. */
  writeGuard(): void;
  /** A read, serialised with everything else of this process. */
  read<T>(fn: () => T): Promise<T>;
  /** A write in its own IMMEDIATE transaction, serialised with everything else of this process. */
  write<T>(fn: () => T): Promise<T>;
  /** Runs `fn` holding the process's connection (a transaction spans awaits, and nothing else may slip into it). */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Stop functions of the live `follow`s, stopped on close. */
  readonly followers: Set<() => void>;
  closed(): boolean;
  /** Stops the followers and closes the connection (once). */
  close(): Promise<void>;
}

/** Serialises the process's use of its one connection: a transaction spans awaits, and nothing else may slip into it. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => T | Promise<T>): Promise<T> {
    const next = this.tail.then(fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/** What a connection needs besides the database. */
export interface ConnOptions {
  clock?: () => Date;
  redact?: (text: string) => string;
}

/** Wraps an open, migrated database as the connection the sub-ports share. */
export function sqliteConn(db: Db, home: string, file: string, readOnly: boolean, opts: ConnOptions): SqliteConn {
  const mutex = new Mutex();
  // One transaction wrapper for the connection (better-sqlite3 builds five functions per `transaction()`): every write runs through it.
  const inTransaction = db.transaction(<T>(fn: () => T): T => fn());
  let isClosed = false;
  const followers = new Set<() => void>();
  const guard = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (e) {
      if (StoreError.isInstance(e) || !(isSqliteError(e) || MalformedRow.isInstance(e))) throw e;
      throw storeError(e, file);
    }
  };
  return {
    db,
    home,
    file,
    readOnly,
    clock: opts.clock ?? (() => new Date()),
    redact: opts.redact ?? ((t: string) => t),
    guard,
    writeGuard() {
      if (readOnly) throw new StoreError(`the store ${file} is read-only here: this command writes to it; give the user write access to DISSENT_HOME`);
    },
    read: (fn) => mutex.run(() => guard(fn)),
    write: (fn) => mutex.run(() => guard(() => inTransaction.immediate(fn) as ReturnType<typeof fn>)),
    exclusive: (fn) => mutex.run(fn),
    followers,
    closed: () => isClosed,
    close: () =>
      mutex.run(() => {
        for (const stop of [...followers]) stop();
        if (!isClosed) {
          isClosed = true;
          db.close();
        }
      }),
  };
}
