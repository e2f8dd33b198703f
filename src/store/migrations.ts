/** Versioned schema: entry N brings the store from user_version N to N+1. Append only. */
export const MIGRATIONS: readonly string[] = [
  // 1 — reply cache and the append-only event log (foundation).
  `
  CREATE TABLE cache (
    key        TEXT PRIMARY KEY,
    provider   TEXT NOT NULL,
    model      TEXT NOT NULL,
    reply      TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE events (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    type     TEXT NOT NULL,
    at       TEXT NOT NULL,
    issue_id TEXT,
    body     TEXT NOT NULL
  );
  CREATE INDEX events_issue ON events(issue_id, seq);
  `,
  // 2 — issues of the local tracker, planning runs and their artifacts, and the folded adversarial state.
  `
  CREATE TABLE issues (
    id         TEXT PRIMARY KEY,
    number     INTEGER,
    title      TEXT NOT NULL,
    body       TEXT NOT NULL,
    labels     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE plans (
    issue_id    TEXT PRIMARY KEY,
    cycle       INTEGER NOT NULL,
    status      TEXT NOT NULL,
    route       TEXT,
    route_reason TEXT,
    calls       INTEGER NOT NULL DEFAULT 0,
    concern_seq INTEGER NOT NULL DEFAULT 0,
    updated_at  TEXT NOT NULL
  );
  CREATE TABLE artifacts (
    issue_id TEXT NOT NULL,
    cycle    INTEGER NOT NULL,
    name     TEXT NOT NULL,
    content  TEXT NOT NULL,
    PRIMARY KEY (issue_id, cycle, name)
  );
  CREATE TABLE adversarial_state (
    issue_id TEXT PRIMARY KEY,
    state    TEXT NOT NULL
  );
  `,
  // 3 — wave 2: leases (one planner per issue), the cycle's dollars, and cache age for `cache clear --older-than`.
  `
  CREATE TABLE leases (
    issue_id    TEXT PRIMARY KEY,
    holder_id   TEXT NOT NULL,
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL,
    renewed_at  INTEGER NOT NULL
  );
  ALTER TABLE plans ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
  CREATE INDEX cache_created ON cache(created_at);
  CREATE INDEX events_type ON events(type, seq);
  `,
  // 4 — issue 30: the repository map's code index (per-file extractions and GitHub blobs by content hash), bounded by bytes, oldest-used out first.
  `
  CREATE TABLE code_index (
    key     TEXT PRIMARY KEY,
    value   TEXT NOT NULL,
    bytes   INTEGER NOT NULL,
    used_at INTEGER NOT NULL
  );
  CREATE INDEX code_index_used ON code_index(used_at, key);
  `,
];
