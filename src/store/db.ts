import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ConfigError } from "../errors.js";
import { MIGRATIONS } from "./migrations.js";

export type Db = Database.Database;

/** Opens (creating if needed) the one store under `home`, in WAL mode, migrated to the latest version. */
export function openDb(home: string): Db {
  let db: Db;
  try {
    mkdirSync(home, { recursive: true });
    db = new Database(join(home, "dissent.db"));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new ConfigError(`cannot use ${home} as the dissent home (DISSENT_HOME or home:): ${code === "EEXIST" || code === "ENOTDIR" ? "it is not a directory" : code}`);
  }
  // Wait for another dissent holding the lock before anything else touches the file.
  db.pragma("busy_timeout = 10000");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  migrate(db);
  return db;
}

/** An in-memory store with the same schema, for tests and the library. */
export function memoryDb(): Db {
  const db = new Database(":memory:");
  migrate(db);
  return db;
}

/** Brings the schema up to date in one IMMEDIATE transaction, re-reading the version inside it: two processes racing on a new home never both migrate. */
function migrate(db: Db): void {
  const version = () => db.pragma("user_version", { simple: true }) as number;
  if (version() === MIGRATIONS.length) return;
  db.transaction(() => {
    const current = version();
    if (current > MIGRATIONS.length) {
      throw new ConfigError(`the store's schema (version ${current}) is newer than this dissent knows (${MIGRATIONS.length}): upgrade dissent`);
    }
    for (let v = current; v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    }
  }).immediate();
}
