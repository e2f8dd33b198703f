import { existsSync } from "node:fs";
import { StoreError } from "../errors.js";
import { MIGRATIONS } from "./migrations.js";
import { type PlanRow, type StoredWikiEntry, UNREADABLE_WIKI } from "./port.js";
import { columnsOf, damagedRow, MalformedRow } from "./columns.js";
import { planFromRow, type Row } from "./rows.js";
import { openSqliteStore, storeFile } from "./sqlite.js";

/**
 * Everything an embedded store holds, row by row, as stored (JSON as its text, so nothing is
 * re-encoded on the way): what `dissent migrate --from-sqlite` copies into PostgreSQL.
 */
export interface StoreSnapshot {
  cache: Row<"cache">[];
  /** In `seq` order, with their `seq`. */
  events: Row<"events">[];
  /** The fold's snapshot per issue (equal to the fold of its events). */
  states: Row<"adversarial_state">[];
  issues: Row<"issues">[];
  plans: PlanRow[];
  artifacts: Row<"artifacts">[];
  wiki: StoredWikiEntry[];
}

/** Reads the embedded store under `home` (bringing an older schema up to date first, as any command would). */
export async function readSqliteSnapshot(home: string): Promise<StoreSnapshot> {
  const file = storeFile(home);
  if (!existsSync(file)) throw new StoreError(`there is no embedded store at ${file}: give the dissent home that holds dissent.db`);
  // Opening it the usual way migrates an old schema and reports a damaged file in one line.
  const store = await openSqliteStore(home);
  const wiki = await store.wiki.list().finally(() => store.close());
  const unreadable = wiki.find((e) => e.text.startsWith(UNREADABLE_WIKI));
  if (unreadable)
    throw new StoreError(
      `the wiki entry ${store.wiki.where}/${unreadable.id}.md ${unreadable.text.slice(UNREADABLE_WIKI.length)}: fix or remove it, then migrate again`,
    );
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version !== MIGRATIONS.length) throw new StoreError(`the store ${file} has schema version ${version}; this dissent reads version ${MIGRATIONS.length}`);
    const all = <T>(sql: string, fromRow: (raw: unknown) => T) => db.prepare(sql).all().map(fromRow);
    return {
      cache: all("SELECT key, provider, model, reply, created_at FROM cache ORDER BY key", cacheRow),
      events: all("SELECT seq, type, at, issue_id, body FROM events ORDER BY seq", eventRow),
      states: all("SELECT issue_id, state FROM adversarial_state ORDER BY issue_id", stateRow),
      issues: all("SELECT id, number, title, body, labels, created_at, updated_at FROM issues ORDER BY number", issueRow),
      plans: all("SELECT issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq, updated_at FROM plans ORDER BY issue_id", planFromRow),
      artifacts: all("SELECT issue_id, cycle, name, content FROM artifacts ORDER BY issue_id, cycle, name", artifactRow),
      wiki,
    };
  } catch (e) {
    if (MalformedRow.isInstance(e)) throw damagedRow(e, file);
    throw e;
  } finally {
    db.close();
  }
}

// The rows copied as stored (JSON as its text: nothing is re-encoded on the way), each column checked.
const cacheRow = (raw: unknown): Row<"cache"> => {
  const c = columnsOf("cache", raw);
  return { key: c.text("key"), provider: c.text("provider"), model: c.text("model"), reply: c.text("reply"), created_at: c.text("created_at") };
};
const eventRow = (raw: unknown): Row<"events"> => {
  const c = columnsOf("events", raw);
  return { seq: c.int("seq"), type: c.text("type"), at: c.text("at"), issue_id: c.textOrNull("issue_id"), body: c.text("body") };
};
const stateRow = (raw: unknown): Row<"adversarial_state"> => {
  const c = columnsOf("adversarial_state", raw);
  return { issue_id: c.text("issue_id"), state: c.text("state") };
};
const issueRow = (raw: unknown): Row<"issues"> => {
  const c = columnsOf("issues", raw);
  const [created_at, updated_at] = [c.text("created_at"), c.text("updated_at")];
  return { id: c.text("id"), number: c.int("number"), title: c.text("title"), body: c.text("body"), labels: c.text("labels"), created_at, updated_at };
};
const artifactRow = (raw: unknown): Row<"artifacts"> => {
  const c = columnsOf("artifacts", raw);
  return { issue_id: c.text("issue_id"), cycle: c.int("cycle"), name: c.text("name"), content: c.text("content") };
};
