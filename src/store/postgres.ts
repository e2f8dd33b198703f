import type { Pool, PoolClient } from "pg";
import type { AdversarialState } from "../contracts/concern.js";
import type { DissentEvent, NewEvent } from "../contracts/events.js";
import { codeOf, ConfigError, messageOf, StoreError } from "../errors.js";
import type { CachedReply } from "../models/cache.js";
import type { IssueRow, LeaseResult, PlanRow, StageCommit, Store, StoredEvent, StoreTx } from "./port.js";
import type { StoreSnapshot } from "./snapshot.js";
import { checkout } from "./pg-client.js";
import { countsCall, emptyState, FOLDED, reduce, stampEvent } from "./state.js";
import { addPart, OPT_IN_PARTS } from "../opt-in.js";

/** The schema dissent's tables live in (pg-boss keeps its own). */
export const PG_SCHEMA = "dissent";
/** The channel every committed event is announced on (docs/serve.md: the dashboard follows it). */
export const PG_CHANNEL = "dissent_events";
/** The advisory lock every appending transaction holds until it commits: `seq` order is commit order. */
const APPEND_LOCK = 7412;
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
];

export interface PostgresOptions {
  redact?: (text: string) => string;
  clock?: () => Date;
  /** The dissent home (for messages only: with PostgreSQL everything lives in the database). */
  home?: string;
  /** Pool size per process. */
  max?: number;
}

/** Runs one statement on a connection (a pooled client inside a transaction, or the pool). */
export type Query = (text: string, values?: unknown[]) => Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;

/** The PostgreSQL store, with what the factory's queue and `dissent migrate` need beyond the port. */
export interface PostgresStore extends Store {
  readonly kind: "postgres";
  /** The connection URL (a secret: never shown; `location` is the printable form). */
  readonly url: string;
  /** The store's operations inside a transaction someone else opened on `query`'s connection (pg-boss's job, say). */
  txOn(query: Query): StoreTx;
  /** What the store holds besides the reply cache, by table (a non-empty target refuses `dissent migrate`). */
  contents(): Promise<Record<string, number>>;
  /** Copies an embedded store's rows in one transaction, keeping ids and the events' `seq`; the cache merges. */
  importSnapshot(snapshot: StoreSnapshot): Promise<Record<string, number>>;
}

/** Is this store the PostgreSQL adapter? */
export function isPostgresStore(store: Store): store is PostgresStore {
  return store.kind === "postgres" && "txOn" in store;
}

/** Where a database URL points, for messages: host:port/database, never the password. */
export function describeUrl(url: string): string {
  if (!URL.canParse(url)) return "the database in the configured URL";
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
}

function storeError(e: unknown, where: string): StoreError {
  const code = codeOf(e) ?? "";
  const message = messageOf(e);
  if (["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET"].includes(code)) {
    return new StoreError(`cannot reach PostgreSQL at ${where} (${code}): check that it is running and DISSENT_DATABASE_URL (or store.url_env) points at it`);
  }
  if (/timeout exceeded when trying to connect|Connection terminated due to connection timeout/i.test(message)) {
    return new StoreError(`cannot reach PostgreSQL at ${where} (no answer within 10 s): check that it is running and the URL's host and port`);
  }
  if (code === "28P01" || code === "28000") return new StoreError(`PostgreSQL at ${where} refused the credentials in the database URL (${code})`);
  if (code === "3D000") return new StoreError(`PostgreSQL at ${where} has no such database (${code}): create it (createdb) or fix the URL`);
  if (code === "57P01" || code === "57P03") return new StoreError(`PostgreSQL at ${where} is shutting down or starting (${code}); try again`);
  return new StoreError(`the store at ${where} failed: ${message.split("\n")[0]}`);
}

/** An error from pg or the network (not one of ours, not a bug of ours). */
const isDbError = (e: unknown) => codeOf(e) !== undefined && !StoreError.isInstance(e);
/** pg's connection errors carry no code. */
const isConnectError = (e: unknown) =>
  e instanceof Error &&
  /timeout exceeded when trying to connect|Connection terminated|connection timeout|not queryable|terminating connection/i.test(e.message);

/** Opens (creating its schema if needed) the PostgreSQL store at `url`. */
export async function openPostgresStore(url: string, opts: PostgresOptions = {}): Promise<PostgresStore> {
  const where = describeUrl(url);
  let pg: typeof import("pg");
  try {
    pg = (await import("pg")).default as unknown as typeof import("pg");
  } catch (e) {
    throw new ConfigError(`store postgres needs the pg package, which a default install of dissent leaves out: ${addPart(OPT_IN_PARTS.postgres)}`, {
      cause: e,
    });
  }
  // keepAlive: a worker on a host that died is noticed by TCP, not only by its lease expiring.
  const pool: Pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, connectionTimeoutMillis: 10_000, keepAlive: true, application_name: "dissent" });
  pool.on("error", () => undefined); // an idle client that dropped is replaced; the next query reports a real failure
  try {
    const held = await checkout(pool);
    try {
      await migrate(held.client);
    } finally {
      held.release();
    }
  } catch (e) {
    await pool.end().catch(() => undefined);
    if (StoreError.isInstance(e)) throw e;
    throw storeError(e, where);
  }
  return postgresStore(pool, url, where, opts);
}

/** Migrates under an advisory lock: two processes racing on a new database never both migrate. */
async function migrate(client: PoolClient): Promise<void> {
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

const S = PG_SCHEMA;
/** Tables `dissent migrate` copies (the cache merges; leases are not state worth copying). */
const CONTENT_TABLES = ["events", "issues", "plans", "artifacts", "adversarial_state", "wiki"] as const;

function postgresStore(pool: Pool, url: string, where: string, opts: PostgresOptions): PostgresStore {
  const clock = opts.clock ?? (() => new Date());
  const redact = opts.redact ?? ((t: string) => t);
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      if (StoreError.isInstance(e) || !(isDbError(e) || isConnectError(e))) throw e;
      throw storeError(e, where);
    }
  };
  const poolQuery: Query = (text, values) => pool.query(text, values) as ReturnType<Query>;

  const toPlan = (r: Record<string, unknown>): PlanRow => ({
    issue_id: String(r.issue_id),
    cycle: Number(r.cycle),
    status: r.status as PlanRow["status"],
    route: (r.route as PlanRow["route"]) ?? null,
    route_reason: (r.route_reason as string | null) ?? null,
    calls: Number(r.calls),
    cost_usd: Number(r.cost_usd),
    concern_seq: Number(r.concern_seq),
    updated_at: String(r.updated_at),
  });
  const PLAN_COLS = "issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq, updated_at";
  const stateOn = async (q: Query, issueId: string): Promise<AdversarialState> => {
    const r = await q(`SELECT state FROM ${S}.adversarial_state WHERE issue_id = $1`, [issueId]);
    return (r.rows[0]?.state as AdversarialState | undefined) ?? emptyState();
  };

  /** The transaction-scoped operations over one connection. */
  const ops = (q: Query): StoreTx => ({
    async append(events: readonly NewEvent[]) {
      if (!events.length) return [];
      // One appender at a time until commit: `seq` order is commit order, so a follower reading
      // `seq > last` never skips an event committed late (docs/serve.md), and the fold is serial.
      await q("SELECT pg_advisory_xact_lock($1)", [APPEND_LOCK]);
      const out: StoredEvent[] = [];
      for (const input of events) {
        const event = stampEvent(input, clock().toISOString(), redact);
        const r = await q(`INSERT INTO ${S}.events (type, at, issue_id, body) VALUES ($1, $2, $3, $4) RETURNING seq`, [
          event.type,
          event.at,
          event.issue_id,
          JSON.stringify(event),
        ]);
        const seq = Number(r.rows[0]?.seq);
        if (event.issue_id !== null && FOLDED.has(event.type)) {
          const next = reduce(await stateOn(q, event.issue_id), event);
          await q(`INSERT INTO ${S}.adversarial_state (issue_id, state) VALUES ($1, $2) ON CONFLICT (issue_id) DO UPDATE SET state = EXCLUDED.state`, [
            event.issue_id,
            JSON.stringify(next),
          ]);
        }
        if (countsCall(event)) {
          await q(`UPDATE ${S}.plans SET calls = calls + 1, cost_usd = cost_usd + $1 WHERE issue_id = $2`, [event.cost_usd ?? 0, event.issue_id]);
        }
        out.push({ ...event, seq });
      }
      // Delivered at commit, and only then: a rolled-back append announces nothing.
      await q("SELECT pg_notify($1, $2)", [PG_CHANNEL, String(out[out.length - 1]?.seq ?? 0)]);
      return out;
    },
    async plan(issueId) {
      const r = await q(`SELECT ${PLAN_COLS} FROM ${S}.plans WHERE issue_id = $1`, [issueId]);
      return r.rows[0] ? toPlan(r.rows[0]) : undefined;
    },
    async savePlan(row) {
      await q(
        `INSERT INTO ${S}.plans (${PLAN_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (issue_id) DO UPDATE SET cycle = $2, status = $3, route = $4, route_reason = $5, calls = $6, cost_usd = $7,
             concern_seq = GREATEST(${S}.plans.concern_seq, $8), updated_at = $9`,
        [row.issue_id, row.cycle, row.status, row.route, row.route_reason, row.calls, row.cost_usd, row.concern_seq, clock().toISOString()],
      );
    },
    async putArtifact(issueId, cycle, name, content) {
      await q(
        `INSERT INTO ${S}.artifacts (issue_id, cycle, name, content) VALUES ($1, $2, $3, $4) ON CONFLICT (issue_id, cycle, name) DO UPDATE SET content = EXCLUDED.content`,
        [issueId, cycle, name, redact(content)],
      );
    },
  });

  /** Runs `fn` in a transaction on a client of its own. */
  const transaction = <T>(fn: (q: Query) => Promise<T>): Promise<T> =>
    guard(async () => {
      const held = await checkout(pool);
      const client = held.client;
      const q: Query = (text, values) => client.query(text, values) as ReturnType<Query>;
      try {
        await client.query("BEGIN");
        const result = await fn(q);
        await client.query("COMMIT");
        return result;
      } catch (e) {
        await client.query("ROLLBACK").catch(() => undefined); // the connection may be gone: the error that matters is `e`
        throw e;
      } finally {
        held.release();
      }
    });

  const direct = ops(poolQuery);
  const toIssue = (r: Record<string, unknown>): IssueRow => ({
    id: String(r.id),
    title: String(r.title),
    body: String(r.body),
    labels: r.labels as string[],
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
  });
  const followers = new Set<() => void>();

  const store: PostgresStore = {
    kind: "postgres",
    location: where,
    url,
    txOn: (q) => ops(q),
    append: (events) => {
      const [only] = events;
      // One event the fold does not read (a ModelCall, a label change: most of the log) commits in one
      // statement, one round trip: the lock, then the row, then the cycle's counter and the notice.
      if (events.length !== 1 || !only || (only.issue_id !== null && FOLDED.has(only.type))) return transaction((q) => ops(q).append(events));
      return guard(async () => {
        const event = stampEvent(only, clock().toISOString(), redact);
        const r = await poolQuery(
          `WITH locked AS (SELECT pg_advisory_xact_lock($1)),
                ins AS (INSERT INTO ${S}.events (type, at, issue_id, body) SELECT $2, $3, $4, $5 FROM locked RETURNING seq),
                counted AS (UPDATE ${S}.plans SET calls = calls + 1, cost_usd = cost_usd + $6 WHERE $7 AND issue_id = $4 AND EXISTS (SELECT 1 FROM ins))
           SELECT seq, pg_notify($8, seq::text) FROM ins`,
          [
            APPEND_LOCK,
            event.type,
            event.at,
            event.issue_id,
            JSON.stringify(event),
            event.type === "ModelCall" ? (event.cost_usd ?? 0) : 0,
            countsCall(event),
            PG_CHANNEL,
          ],
        );
        return [{ ...event, seq: Number(r.rows[0]?.seq) }];
      });
    },
    plan: (id) => guard(() => direct.plan(id)),
    savePlan: (row) => guard(() => direct.savePlan(row)),
    putArtifact: (id, cycle, name, content) => guard(() => direct.putArtifact(id, cycle, name, content)),
    transaction: (fn) => transaction((q) => fn(ops(q))),
    cache: {
      get: (key) =>
        guard(async () => {
          const r = await poolQuery(`SELECT reply FROM ${S}.cache WHERE key = $1`, [key]);
          return r.rows[0] ? (JSON.parse(String(r.rows[0].reply)) as CachedReply) : undefined;
        }),
      put: (key, reply, meta) =>
        guard(async () => {
          await poolQuery(
            `INSERT INTO ${S}.cache (key, provider, model, reply, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO UPDATE SET reply = EXCLUDED.reply, created_at = EXCLUDED.created_at`,
            [key, meta.provider, meta.model, JSON.stringify({ ...reply, text: redact(reply.text) }), clock().toISOString()],
          );
        }),
      clear: (olderThanDays) =>
        guard(async () => {
          if (olderThanDays === undefined) return (await poolQuery(`DELETE FROM ${S}.cache`)).rowCount ?? 0;
          const cutoff = new Date(clock().getTime() - olderThanDays * 86_400_000).toISOString();
          return (await poolQuery(`DELETE FROM ${S}.cache WHERE created_at < $1`, [cutoff])).rowCount ?? 0;
        }),
      count: () => guard(async () => Number((await poolQuery(`SELECT COUNT(*) AS n FROM ${S}.cache`)).rows[0]?.n ?? 0)),
    },
    events: (query = {}) =>
      guard(async () => {
        const conditions: string[] = [];
        const args: unknown[] = [];
        if (query.issueId !== undefined) conditions.push(`issue_id = $${args.push(query.issueId)}`);
        if (query.after !== undefined) conditions.push(`seq > $${args.push(query.after)}`);
        if (query.types?.length) conditions.push(`type = ANY($${args.push([...query.types])})`);
        const sql = `SELECT seq, body FROM ${S}.events${conditions.length ? ` WHERE ${conditions.join(" AND ")}` : ""} ORDER BY seq${query.limit ? ` LIMIT ${Math.max(1, Math.floor(query.limit))}` : ""}`;
        return (await poolQuery(sql, args)).rows.map((r) => ({ ...(r.body as DissentEvent), seq: Number(r.seq) }));
      }),
    lastSeq: () => guard(async () => Number((await poolQuery(`SELECT COALESCE(MAX(seq), 0) AS n FROM ${S}.events`)).rows[0]?.n ?? 0)),
    state: (id) => guard(() => stateOn(poolQuery, id)),
    plans: () => guard(async () => (await poolQuery(`SELECT ${PLAN_COLS} FROM ${S}.plans ORDER BY issue_id`)).rows.map(toPlan)),
    artifact: (id, cycle, name) =>
      guard(async () => {
        const r = await poolQuery(`SELECT content FROM ${S}.artifacts WHERE issue_id = $1 AND cycle = $2 AND name = $3`, [id, cycle, name]);
        return r.rows[0] ? String(r.rows[0].content) : undefined;
      }),
    commitStage: (c: StageCommit) =>
      transaction(async (q) => {
        // The append lock first, then the check: two workers committing the same stage serialise here,
        // and the second finds the first's AdversarialStageCompleted (exactly one per finished stage, docs/factory.md).
        await q("SELECT pg_advisory_xact_lock($1)", [APPEND_LOCK]);
        const done = await q(
          `SELECT 1 FROM ${S}.events WHERE issue_id = $1 AND type = 'AdversarialStageCompleted' AND body->>'stage' = $2 AND (body->>'cycle')::int = $3 LIMIT 1`,
          [c.issueId, c.stage, c.cycle],
        );
        if (done.rows.length) return false;
        const tx = ops(q);
        if (c.artifact) await tx.putArtifact(c.issueId, c.cycle, c.artifact.name, c.artifact.content);
        await tx.append(c.events);
        await q(`UPDATE ${S}.plans SET concern_seq = GREATEST(concern_seq, $1) WHERE issue_id = $2`, [c.concernSeq, c.issueId]);
        return true;
      }),
    lease: {
      acquire: (issueId, holder, ttlMs, staleHolderId) =>
        transaction(async (q): Promise<LeaseResult> => {
          // The database's clock, not the workers': machines disagree about the time.
          const now = Number((await q("SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now")).rows[0]?.now);
          await q(
            `INSERT INTO ${S}.leases (issue_id, holder_id, host, pid, acquired_at, renewed_at) VALUES ($1, '', '', 0, 0, 0) ON CONFLICT (issue_id) DO NOTHING`,
            [issueId],
          );
          const row = (await q(`SELECT holder_id, host, pid, acquired_at, renewed_at FROM ${S}.leases WHERE issue_id = $1 FOR UPDATE`, [issueId])).rows[0] as
            | { holder_id: string; host: string; pid: number; acquired_at: string; renewed_at: string }
            | undefined;
          const held = row && row.holder_id !== "" && row.holder_id !== holder.id && row.holder_id !== staleHolderId && now - Number(row.renewed_at) < ttlMs;
          if (held && row) {
            return {
              ok: false,
              holder: {
                id: row.holder_id,
                host: row.host,
                pid: Number(row.pid),
                since: new Date(Number(row.acquired_at)).toISOString(),
                renewed: new Date(Number(row.renewed_at)).toISOString(),
              },
            };
          }
          if (row?.holder_id === holder.id) {
            await q(`UPDATE ${S}.leases SET renewed_at = $2 WHERE issue_id = $1`, [issueId, now]);
            return { ok: true, tookOver: false };
          }
          await q(`UPDATE ${S}.leases SET holder_id = $2, host = $3, pid = $4, acquired_at = $5, renewed_at = $5 WHERE issue_id = $1`, [
            issueId,
            holder.id,
            holder.host,
            holder.pid,
            now,
          ]);
          return { ok: true, tookOver: row !== undefined && row.holder_id !== "" };
        }),
      renew: (issueId, holderId) =>
        guard(async () => {
          const r = await poolQuery(
            `UPDATE ${S}.leases SET renewed_at = (extract(epoch from clock_timestamp()) * 1000)::bigint WHERE issue_id = $1 AND holder_id = $2`,
            [issueId, holderId],
          );
          return (r.rowCount ?? 0) > 0;
        }),
      release: (issueId, holderId) =>
        guard(async () => {
          await poolQuery(`DELETE FROM ${S}.leases WHERE issue_id = $1 AND holder_id = $2`, [issueId, holderId]);
        }),
    },
    issues: {
      create: ({ title, body, labels }) =>
        guard(async () => {
          const now = clock().toISOString();
          const r = await poolQuery(
            `INSERT INTO ${S}.issues (id, number, title, body, labels, created_at, updated_at)
             SELECT n::text, n, $1, $2, $3, $4, $4 FROM nextval('${S}.issue_number') AS n RETURNING id, title, body, labels, created_at, updated_at`,
            [redact(title), redact(body), JSON.stringify([...new Set(labels)]), now],
          );
          const row = r.rows[0];
          if (!row) throw new StoreError(`the store at ${where} created no issue row`);
          return toIssue(row);
        }),
      get: (id) =>
        guard(async () => {
          const r = await poolQuery(`SELECT id, title, body, labels, created_at, updated_at FROM ${S}.issues WHERE id = $1`, [id]);
          return r.rows[0] ? toIssue(r.rows[0]) : undefined;
        }),
      list: () =>
        guard(async () => (await poolQuery(`SELECT id, title, body, labels, created_at, updated_at FROM ${S}.issues ORDER BY number`)).rows.map(toIssue)),
      setLabels: (id, labels) =>
        guard(async () => {
          await poolQuery(`UPDATE ${S}.issues SET labels = $1, updated_at = $2 WHERE id = $3`, [JSON.stringify([...labels]), clock().toISOString(), id]);
        }),
    },
    wiki: {
      where: "the database",
      // Ordered as the embedded store lists its files (`<id>.md`, byte order), so both list alike.
      list: () =>
        guard(async () =>
          (await poolQuery(`SELECT id, text FROM ${S}.wiki ORDER BY (id || '.md') COLLATE "C"`)).rows.map((r) => ({ id: String(r.id), text: String(r.text) })),
        ),
      get: (id) =>
        guard(async () => {
          const r = await poolQuery(`SELECT id, text FROM ${S}.wiki WHERE id = $1`, [id]);
          return r.rows[0] ? { id: String(r.rows[0].id), text: String(r.rows[0].text) } : undefined;
        }),
      put: (entry) =>
        guard(async () => {
          await poolQuery(
            `INSERT INTO ${S}.wiki (id, text, updated_at) VALUES ($1, $2, now()) ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text, updated_at = now()`,
            [entry.id, redact(entry.text)],
          );
        }),
    },
    follow(after, onEvent, onError) {
      let last = after;
      let stopped = false;
      let client: import("pg").Client | undefined;
      let draining = Promise.resolve();
      const drain = () => {
        draining = draining.then(async () => {
          if (stopped) return;
          try {
            for (;;) {
              const batch = await store.events({ after: last, limit: 500 });
              for (const e of batch) {
                if (stopped) return;
                last = e.seq;
                onEvent(e);
              }
              if (batch.length < 500) break;
            }
          } catch (e) {
            onError?.(e);
          }
        });
      };
      void (async () => {
        try {
          const pg = (await import("pg")).default as unknown as typeof import("pg");
          const listener = new pg.Client({ connectionString: url, keepAlive: true, application_name: "dissent-follow" });
          client = listener;
          listener.on("error", (e) => onError?.(e));
          listener.on("notification", () => drain());
          await listener.connect();
          await listener.query(`LISTEN ${PG_CHANNEL}`);
          if (stopped) await listener.end();
        } catch (e) {
          if (!stopped) onError?.(e);
        }
        drain();
      })();
      // A notification can be missed while the listener reconnects: a slow poll catches up.
      const poll = setInterval(drain, 2000);
      poll.unref();
      const stop = () => {
        stopped = true;
        clearInterval(poll);
        void client?.end().catch(() => undefined); // ending a listener that already failed has nothing to report
        followers.delete(stop);
      };
      followers.add(stop);
      return stop;
    },
    contents: () =>
      guard(async () => {
        const out: Record<string, number> = {};
        for (const t of CONTENT_TABLES) out[t] = Number((await poolQuery(`SELECT COUNT(*) AS n FROM ${S}.${t}`)).rows[0]?.n ?? 0);
        return out;
      }),
    importSnapshot: (snap) =>
      transaction(async (q) => {
        await q("SELECT pg_advisory_xact_lock($1)", [APPEND_LOCK]);
        const counts: Record<string, number> = { cache: 0, events: 0, issues: 0, plans: 0, artifacts: 0, adversarial_state: 0, wiki: 0 };
        for (const c of snap.cache) {
          // Replies are content-addressed: one already there is the same reply.
          const r = await q(`INSERT INTO ${S}.cache (key, provider, model, reply, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING`, [
            c.key,
            c.provider,
            c.model,
            c.reply,
            c.created_at,
          ]);
          counts.cache = (counts.cache ?? 0) + (r.rowCount ?? 0);
        }
        for (const e of snap.events)
          await q(`INSERT INTO ${S}.events (seq, type, at, issue_id, body) VALUES ($1, $2, $3, $4, $5)`, [e.seq, e.type, e.at, e.issue_id, e.body]);
        counts.events = snap.events.length;
        await q(
          `SELECT setval(pg_get_serial_sequence('${S}.events', 'seq'), GREATEST((SELECT COALESCE(MAX(seq), 0) FROM ${S}.events), 1), (SELECT COUNT(*) > 0 FROM ${S}.events))`,
        );
        for (const s of snap.states) await q(`INSERT INTO ${S}.adversarial_state (issue_id, state) VALUES ($1, $2)`, [s.issue_id, s.state]);
        counts.adversarial_state = snap.states.length;
        for (const i of snap.issues) {
          await q(`INSERT INTO ${S}.issues (id, number, title, body, labels, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
            i.id,
            i.number,
            i.title,
            i.body,
            i.labels,
            i.created_at,
            i.updated_at,
          ]);
        }
        counts.issues = snap.issues.length;
        await q(`SELECT setval('${S}.issue_number', GREATEST((SELECT COALESCE(MAX(number), 0) FROM ${S}.issues), 1), (SELECT COUNT(*) > 0 FROM ${S}.issues))`);
        for (const p of snap.plans) {
          await q(`INSERT INTO ${S}.plans (${PLAN_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
            p.issue_id,
            p.cycle,
            p.status,
            p.route,
            p.route_reason,
            p.calls,
            p.cost_usd,
            p.concern_seq,
            p.updated_at ?? clock().toISOString(),
          ]);
        }
        counts.plans = snap.plans.length;
        for (const a of snap.artifacts)
          await q(`INSERT INTO ${S}.artifacts (issue_id, cycle, name, content) VALUES ($1, $2, $3, $4)`, [a.issue_id, a.cycle, a.name, a.content]);
        counts.artifacts = snap.artifacts.length;
        for (const w of snap.wiki) await q(`INSERT INTO ${S}.wiki (id, text, updated_at) VALUES ($1, $2, now())`, [w.id, w.text]);
        counts.wiki = snap.wiki.length;
        return counts;
      }),
    async close() {
      for (const stop of [...followers]) stop();
      await pool.end().catch(() => undefined); // closing twice, or after the server went away, leaves nothing to do
    },
  };
  return store;
}
