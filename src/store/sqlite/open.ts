import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { codeOf, ConfigError, StoreError } from "../../errors.js";
import { MIGRATIONS } from "../migrations.js";
import type { Store } from "../port.js";
import { type Db, sqliteConn } from "./connection.js";
import { storeError } from "./errors.js";
import { sqliteStore } from "./store.js";

/** How the embedded store is opened. */
export interface SqliteOptions {
  /** Redacts every string of every event before it is stored (and every cached reply). */
  redact?: (text: string) => string;
  clock?: () => Date;
  /** Open without writing (read-only commands on a read-only home). */
  readOnly?: boolean;
  /** An in-memory store (tests and the library). */
  memory?: boolean;
  /** The code index's bound in bytes (default CODE_INDEX_BYTES; tests make it small). */
  codeIndexBytes?: number;
}

/** The file a home's store lives in. */
export const storeFile = (home: string) => join(home, "dissent.db");

function loadDriver(): Promise<typeof BetterSqlite3> {
  const missing = (e: unknown) =>
    new ConfigError(
      `the embedded store needs better-sqlite3, which is not installed or did not build (${(e as Error).message.split("\n")[0]}): run npm install better-sqlite3, or use store: { type: postgres }`,
    );
  return import("better-sqlite3").then(
    (m) => {
      // The JavaScript loads even where the native part never built; open a throwaway database to know.
      try {
        new m.default(":memory:").close();
      } catch (e) {
        throw missing(e);
      }
      return m.default;
    },
    (e: unknown) => {
      throw missing(e);
    },
  );
}

/** Brings the schema up to date in one IMMEDIATE transaction, re-reading the version inside it: two processes racing on a new home never both migrate. */
function migrate(db: Db): void {
  const version = () => db.pragma("user_version", { simple: true }) as number;
  if (version() === MIGRATIONS.length) return;
  db.transaction(() => {
    const current = version();
    if (current > MIGRATIONS.length) {
      throw new StoreError(`the store's schema (version ${current}) is newer than this dissent knows (${MIGRATIONS.length}): upgrade dissent`);
    }
    for (let v = current; v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    }
  }).immediate();
}

/** A store file's bytes as a rollback-journal database (header bytes 18–19 say WAL otherwise), to open in memory. */
function snapshotOf(file: string): Buffer {
  const bytes = readFileSync(file);
  if (bytes.length >= 20 && bytes[18] === 2 && bytes[19] === 2) {
    bytes[18] = 1;
    bytes[19] = 1;
  }
  return bytes;
}

/** Is this folder (or, if it does not exist yet, its parent) writable? */
function writable(path: string): boolean {
  try {
    accessSync(existsSync(path) ? path : join(path, ".."), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Creates the home if needed and checks the store file is one SQLite can open without blocking. */
function prepareHome(home: string, file: string): void {
  try {
    mkdirSync(home, { recursive: true });
  } catch (e) {
    const code = codeOf(e) ?? "error";
    throw new ConfigError(
      `cannot use ${home} as the dissent home (DISSENT_HOME or home:): ${code === "EEXIST" || code === "ENOTDIR" ? "it is not a directory" : code}`,
    );
  }
  const st = statSync(file, { throwIfNoEntry: false });
  if (st?.isDirectory()) throw new StoreError(`the store ${file} is a directory, not a file: remove it`);
  // A FIFO or a device would block SQLite's first read forever.
  if (st && !st.isFile()) throw new StoreError(`the store ${file} is not a regular file (a FIFO or a device): remove it`);
}

/** Opens (creating if needed) the embedded store under `home`: SQLite in WAL mode, migrated. */
export async function openSqliteStore(home: string, opts: SqliteOptions = {}): Promise<Store> {
  const Database = await loadDriver();
  const file = opts.memory ? ":memory:" : storeFile(home);
  let db: Db;
  let readOnly = opts.readOnly === true;
  try {
    if (opts.memory) db = new Database(":memory:");
    else if (readOnly && (!existsSync(file) || !writable(home))) {
      if (!existsSync(file)) return emptyReadOnlyStore(home, file);
      if (!statSync(file).isFile()) throw new StoreError(`the store ${file} is not a regular file: remove it`);
      // A WAL database cannot be opened in place from a folder we cannot write (SQLite needs its -shm
      // file): read a snapshot of the file instead — a read-only command sees the last checkpoint.
      db = new Database(snapshotOf(file));
    } else {
      prepareHome(home, file);
      db = new Database(file);
    }
    // Wait for another dissent holding the lock, rather than failing at once.
    db.pragma("busy_timeout = 30000");
    if (!readOnly) {
      if (!opts.memory) db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      migrate(db);
    } else {
      const v = db.pragma("user_version", { simple: true }) as number;
      if (v < MIGRATIONS.length) readOnly = true; // an old store read as it is; writes are refused below
    }
  } catch (e) {
    if (StoreError.isInstance(e) || ConfigError.isInstance(e)) throw e;
    throw storeError(e, file);
  }
  return sqliteStore(sqliteConn(db, home, file, readOnly, opts), opts.memory === true, opts.codeIndexBytes);
}

/** A read-only command on a home with no store yet: everything is empty. */
async function emptyReadOnlyStore(home: string, file: string): Promise<Store> {
  const Database = await loadDriver();
  const db = new Database(":memory:");
  migrate(db);
  return sqliteStore(sqliteConn(db, home, file, true, {}), false);
}

/** An in-memory store with the same schema, for tests and the library. */
export function memoryStore(opts: Omit<SqliteOptions, "memory"> = {}): Promise<Store> {
  return openSqliteStore("", { ...opts, memory: true });
}
