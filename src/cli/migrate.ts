import { resolve } from "node:path";
import { RunError, UsageError } from "../errors.js";
import { isPostgresStore } from "../store/postgres.js";
import { readSqliteSnapshot } from "../store/snapshot.js";
import { json, withDissent, type Common } from "./common.js";
import type { Io } from "./io.js";

/**
 * `dissent migrate --from-sqlite HOME` (docs/factory.md): copies the embedded store under HOME — reply
 * cache, events in their order (with their `seq`), plans, artifacts, local issues (with their ids),
 * adversarial states and wiki entries — into the PostgreSQL store the config names, in one
 * transaction. The target must hold no issues, events, plans, artifacts, states or wiki entries;
 * its reply cache may hold replies (they are content-addressed: a key already there is the same
 * reply, and is kept). The source is only read.
 */
export async function migrateCommand(opts: Common & { fromSqlite: string }, io: Io): Promise<number> {
  const home = resolve(io.cwd, opts.fromSqlite);
  return withDissent(opts, io, async (d) => {
    const target = await d.store();
    if (!isPostgresStore(target)) {
      throw new UsageError(
        `dissent migrate copies into PostgreSQL, but ${d.config.source} names the embedded store: set store: { type: postgres } and the database URL in the variable store.url_env names (DISSENT_DATABASE_URL by default)`,
      );
    }
    const held = Object.entries(await target.contents()).filter(([, n]) => n > 0);
    if (held.length) {
      throw new RunError(
        `the PostgreSQL store at ${target.location} is not empty (${held.map(([table, n]) => `${n} ${table}`).join(", ")}): migrate into a database with no dissent data, or empty it first (DROP SCHEMA dissent CASCADE)`,
      );
    }
    const snapshot = await readSqliteSnapshot(home);
    const copied = await target.importSnapshot(snapshot);
    if (opts.json) json(io, { from: home, to: target.location, copied, cache_already_there: snapshot.cache.length - (copied.cache ?? 0) });
    else {
      const parts = ["events", "issues", "plans", "artifacts", "adversarial_state", "wiki", "cache"].map(
        (k) => `${copied[k] ?? 0} ${k === "adversarial_state" ? "states" : k === "wiki" ? "wiki entries" : k === "cache" ? "cached replies" : k}`,
      );
      io.stdout(`copied ${home} into ${target.location}: ${parts.join(", ")}\n`);
    }
    return 0;
  });
}
