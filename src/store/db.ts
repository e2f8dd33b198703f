import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { MIGRATIONS } from "./migrations.js";

export type Db = Database.Database;

/** Opens (creating if needed) the one store under `home`, in WAL mode, migrated to the latest version. */
export function openDb(home: string): Db {
  mkdirSync(home, { recursive: true });
  const db = new Database(join(home, "dissent.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  migrate(db);
  return db;
}

/** An in-memory store with the same schema, for tests and the library. */
export function memoryDb(): Db {
  const db = new Database(":memory:");
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`store schema version ${current} is newer than this dissent (${MIGRATIONS.length}); upgrade dissent`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
