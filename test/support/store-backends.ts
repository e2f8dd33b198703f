/**
 * The store port's two adapters behind one test harness, so one suite runs against both
 * (`describe.each(BACKENDS)`): the embedded SQLite file and a real PostgreSQL database (one new
 * database per store, in the run's cluster; see test/support/postgres.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { Store } from "../../src/store/port.js";
import { openPostgresStore, PG_SCHEMA } from "../../src/store/postgres.js";
import { openSqliteStore } from "../../src/store/sqlite.js";
import { freshDatabase } from "./postgres.js";

/** What a test may give a store it opens. */
export interface OpenOptions {
  clock?: () => Date;
  redact?: (text: string) => string;
  /** The code index's bound in bytes (issue 30). */
  codeIndexBytes?: number;
}

/** One adapter as the suite drives it. */
export interface Backend {
  readonly name: "sqlite" | "postgres";
  /** A new, empty store with storage of its own. */
  open(opts?: OpenOptions): Promise<Store>;
  /** A second store on the same storage as `s` (another process, as far as the store can tell). */
  reopen(s: Store, opts?: OpenOptions): Promise<Store>;
  /** Empties a store's storage, keeping its schema (between runs of a property). */
  reset(s: Store): Promise<void>;
  /**
   * Makes every lease in `s`'s storage `ms` older. SQLite leases read the store's clock (a test
   * moves it); PostgreSQL leases read the database's clock, so the rows are moved back instead.
   */
  ageLeases(s: Store, ms: number): Promise<void>;
  /** Closes every store it opened and removes their storage. */
  cleanup(): Promise<void>;
}

/** A clock a test moves by hand, shared by the SQLite stores of one test. */
interface ManualClock {
  now: () => Date;
  advance(ms: number): void;
}

function sqliteBackend(): Backend {
  const dirs: string[] = [];
  const opened: Store[] = [];
  const homes = new Map<Store, { home: string; clock: ManualClock }>();
  const openAt = async (home: string, clock: ManualClock, opts: OpenOptions) => {
    const s = await openSqliteStore(home, {
      clock: opts.clock ?? clock.now,
      ...(opts.redact ? { redact: opts.redact } : {}),
      ...(opts.codeIndexBytes ? { codeIndexBytes: opts.codeIndexBytes } : {}),
    });
    opened.push(s);
    homes.set(s, { home, clock });
    return s;
  };
  const where = (s: Store) => {
    const known = homes.get(s);
    if (!known) throw new Error("not a store this backend opened");
    return known;
  };
  return {
    name: "sqlite",
    async open(opts = {}) {
      const dir = mkdtempSync(join(tmpdir(), "dissent-store-suite-"));
      dirs.push(dir);
      let t = Date.parse("2026-05-17T12:00:00.000Z");
      const clock: ManualClock = { now: () => new Date(t), advance: (ms) => void (t += ms) };
      return openAt(join(dir, "home"), clock, opts);
    },
    reopen: (s, opts = {}) => openAt(where(s).home, where(s).clock, opts),
    async reset(s) {
      const { default: Database } = await import("better-sqlite3");
      const db = new Database(join(where(s).home, "dissent.db"));
      try {
        db.exec(
          "DELETE FROM events; DELETE FROM adversarial_state; DELETE FROM plans; DELETE FROM artifacts; DELETE FROM leases; DELETE FROM issues; DELETE FROM cache; DELETE FROM code_index; DELETE FROM sqlite_sequence",
        );
      } finally {
        db.close();
      }
    },
    async ageLeases(s, ms) {
      where(s).clock.advance(ms);
    },
    async cleanup() {
      for (const s of opened.splice(0)) await s.close();
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
      homes.clear();
    },
  };
}

function postgresBackend(): Backend {
  const opened: Store[] = [];
  const urls = new Map<Store, string>();
  const openAt = async (url: string, opts: OpenOptions) => {
    const s = await openPostgresStore(url, {
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.redact ? { redact: opts.redact } : {}),
      ...(opts.codeIndexBytes ? { codeIndexBytes: opts.codeIndexBytes } : {}),
      max: 4,
    });
    opened.push(s);
    urls.set(s, url);
    return s;
  };
  const urlOf = (s: Store) => {
    const url = urls.get(s);
    if (!url) throw new Error("not a store this backend opened");
    return url;
  };
  const sql = async (s: Store, text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: urlOf(s) });
    await client.connect();
    try {
      await client.query(text, values);
    } finally {
      await client.end();
    }
  };
  return {
    name: "postgres",
    open: async (opts = {}) => openAt(await freshDatabase(), opts),
    reopen: (s, opts = {}) => openAt(urlOf(s), opts),
    reset: (s) =>
      sql(
        s,
        `TRUNCATE ${PG_SCHEMA}.events, ${PG_SCHEMA}.adversarial_state, ${PG_SCHEMA}.plans, ${PG_SCHEMA}.artifacts, ${PG_SCHEMA}.leases, ${PG_SCHEMA}.issues, ${PG_SCHEMA}.cache, ${PG_SCHEMA}.wiki, ${PG_SCHEMA}.code_index RESTART IDENTITY`,
      ),
    ageLeases: (s, ms) => sql(s, `UPDATE ${PG_SCHEMA}.leases SET renewed_at = renewed_at - $1, acquired_at = acquired_at - $1`, [ms]),
    async cleanup() {
      for (const s of opened.splice(0)) await s.close();
      urls.clear();
    },
  };
}

/** Both adapters, for `describe.each`. */
export const BACKENDS: readonly (readonly [string, () => Backend])[] = [
  ["sqlite", sqliteBackend],
  ["postgres", postgresBackend],
];
