import type { PoolClient } from "pg";
import { StoreError } from "../../errors.js";

/** The schema dissent's tables live in (pg-boss keeps its own). */
export const PG_SCHEMA = "dissent";
/** The channel every committed event is announced on (docs/serve.md: the dashboard follows it). */
export const PG_CHANNEL = "dissent_events";
/** The advisory lock every appending transaction holds until it commits: `seq` order is commit order. */
export const APPEND_LOCK = 7412;
/** The advisory lock migrations run under. */
const MIGRATE_LOCK = 7411;

/**
 * Versioned schema, as for SQLite: entry N brings the database from version N to N+1. Append only.
 * Event bodies, states and labels are JSON, not JSONB: JSON keeps the text as written, so an event
 * reads back with its keys in the order of docs/issue.md (`type`, `at`, `issue_id`, …), as from SQLite.
 */
const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE ${PG_SCHEMA}.cache (
    key        TEXT PRIMARY KEY,
    provider   TEXT NOT NULL,
    model      TEXT NOT NULL,
    reply      TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  );
  CREATE INDEX cache_created ON ${PG_SCHEMA}.cache(created_at);
  CREATE TABLE ${PG_SCHEMA}.events (
    seq      BIGSERIAL PRIMARY KEY,
    type     TEXT NOT NULL,
    at       TEXT NOT NULL,
    issue_id TEXT,
    body     JSON NOT NULL
  );
  CREATE INDEX events_issue ON ${PG_SCHEMA}.events(issue_id, seq);
  CREATE INDEX events_type ON ${PG_SCHEMA}.events(type, seq);
  CREATE TABLE ${PG_SCHEMA}.adversarial_state (issue_id TEXT PRIMARY KEY, state JSON NOT NULL);
  CREATE SEQUENCE ${PG_SCHEMA}.issue_number;
  CREATE TABLE ${PG_SCHEMA}.issues (
    id TEXT PRIMARY KEY, number BIGINT UNIQUE NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL,
    labels JSON NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
  );
  CREATE TABLE ${PG_SCHEMA}.plans (
    issue_id TEXT PRIMARY KEY, cycle INTEGER NOT NULL, status TEXT NOT NULL, route TEXT, route_reason TEXT,
    calls INTEGER NOT NULL DEFAULT 0, cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0, concern_seq INTEGER NOT NULL DEFAULT 0, updated_at TEXT NOT NULL
  );
  CREATE TABLE ${PG_SCHEMA}.artifacts (issue_id TEXT NOT NULL, cycle INTEGER NOT NULL, name TEXT NOT NULL, content TEXT NOT NULL, PRIMARY KEY (issue_id, cycle, name));
  CREATE TABLE ${PG_SCHEMA}.leases (
    issue_id TEXT PRIMARY KEY, holder_id TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,
    acquired_at BIGINT NOT NULL, renewed_at BIGINT NOT NULL
  );
  CREATE TABLE ${PG_SCHEMA}.wiki (id TEXT PRIMARY KEY, text TEXT NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now());
  `,
  // 2 — issue 30: the repository map's code index (per-file extractions and GitHub blobs by content hash), bounded by bytes.
  `
  CREATE TABLE ${PG_SCHEMA}.code_index (key TEXT PRIMARY KEY, value TEXT NOT NULL, bytes BIGINT NOT NULL, used_at BIGINT NOT NULL);
  CREATE INDEX code_index_used ON ${PG_SCHEMA}.code_index(used_at, key);
  `,
];

/** Migrates under an advisory lock: two processes racing on a new database never both migrate. */
export async function migrate(client: PoolClient): Promise<void> {
  await client.query("SELECT pg_advisory_lock($1)", [MIGRATE_LOCK]);
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${PG_SCHEMA}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${PG_SCHEMA}.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    const row = await client.query<{ value: string }>(`SELECT value FROM ${PG_SCHEMA}.meta WHERE key = 'schema_version'`);
    const current = Number(row.rows[0]?.value ?? 0);
    if (current > PG_MIGRATIONS.length)
      throw new StoreError(`the database's dissent schema (version ${current}) is newer than this dissent knows (${PG_MIGRATIONS.length}): upgrade dissent`);
    for (let v = current; v < PG_MIGRATIONS.length; v++) {
      await client.query("BEGIN");
      try {
        await client.query(PG_MIGRATIONS[v] as string);
        await client.query(`INSERT INTO ${PG_SCHEMA}.meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = $1`, [
          String(v + 1),
        ]);
        await client.query("COMMIT");
      } catch (e) {
        await client.query("ROLLBACK");
        throw e;
      }
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATE_LOCK]);
  }
}
