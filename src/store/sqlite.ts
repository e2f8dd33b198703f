import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import type { AdversarialState } from "../contracts/concern.js";
import type { DissentEvent, NewEvent } from "../contracts/events.js";
import { codeOf, ConfigError, StoreError } from "../errors.js";
import { readBounded } from "../files/read.js";
import type { CachedReply } from "../models/cache.js";
import { MIGRATIONS } from "./migrations.js";
import {
  type IssueRow,
  type LeaseHolder,
  type LeaseResult,
  type PlanRow,
  type StageCommit,
  type Store,
  type StoredEvent,
  type StoredWikiEntry,
  type StoreTx,
  UNREADABLE_WIKI,
  WIKI_ENTRY_BYTES,
} from "./port.js";
import { countsCall, emptyState, FOLDED, reduce, stampEvent } from "./state.js";

type Db = BetterSqlite3.Database;

export interface SqliteOptions {
  /** Redacts every string of every event before it is stored (and every cached reply). */
  redact?: (text: string) => string;
  clock?: () => Date;
  /** Open without writing (read-only commands on a read-only home). */
  readOnly?: boolean;
  /** An in-memory store (tests and the library). */
  memory?: boolean;
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

/** One line naming the file and what to do, for what SQLite says about it. */
function storeError(e: unknown, file: string): StoreError {
  const code = codeOf(e) ?? "";
  const message = (e as Error).message ?? String(e);
  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT" || /not a database|malformed/i.test(message)) {
    return new StoreError(`the store ${file} is damaged (${message}): move it aside to start afresh, or restore it from a backup`);
  }
  if (code === "SQLITE_READONLY" || code === "SQLITE_READONLY_DIRECTORY" || /readonly|read-only/i.test(message)) {
    return new StoreError(`the store ${file} is read-only: this command writes to it; give the user write access to the file and its folder (DISSENT_HOME)`);
  }
  if (code === "SQLITE_CANTOPEN" || code === "EACCES" || code === "EPERM") {
    return new StoreError(`cannot open the store ${file} (${code}): check that DISSENT_HOME (or home:) is a folder this user can write`);
  }
  if (code === "SQLITE_BUSY") return new StoreError(`the store ${file} stayed locked by another dissent for too long; try again`);
  if (code === "SQLITE_FULL" || code === "ENOSPC") return new StoreError(`the disk holding the store ${file} is full`);
  return new StoreError(`the store ${file} failed: ${message}`);
}

const isSqliteError = (e: unknown) => typeof e === "object" && e !== null && /^SQLITE_|^E[A-Z]+$/.test(codeOf(e) ?? "");

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

/** The file a home's store lives in. */
export const storeFile = (home: string) => join(home, "dissent.db");

/** Is this folder (or, if it does not exist yet, its parent) writable? */
function writable(path: string): boolean {
  try {
    accessSync(existsSync(path) ? path : join(path, ".."), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Opens (creating if needed) the embedded store under `home`: SQLite in WAL mode, migrated. */
export async function openSqliteStore(home: string, opts: SqliteOptions = {}): Promise<Store> {
  const Database = await loadDriver();
  const file = opts.memory ? ":memory:" : storeFile(home);
  let db: Db;
  let readOnly = opts.readOnly === true;
  try {
    if (opts.memory) db = new Database(":memory:");
    else {
      if (readOnly && (!existsSync(file) || !writable(home))) {
        if (!existsSync(file)) return emptyReadOnlyStore(home, file);
        if (!statSync(file).isFile()) throw new StoreError(`the store ${file} is not a regular file: remove it`);
        // A WAL database cannot be opened in place from a folder we cannot write (SQLite needs its -shm
        // file): read a snapshot of the file instead — a read-only command sees the last checkpoint.
        db = new Database(snapshotOf(file));
      } else {
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
        db = new Database(file);
      }
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
  return sqliteStore(db, home, file, readOnly, opts);
}

/** A read-only command on a home with no store yet: everything is empty. */
async function emptyReadOnlyStore(home: string, file: string): Promise<Store> {
  const Database = await loadDriver();
  const db = new Database(":memory:");
  migrate(db);
  return sqliteStore(db, home, file, true, {});
}

function sqliteStore(db: Db, home: string, file: string, readOnly: boolean, opts: SqliteOptions): Store {
  const clock = opts.clock ?? (() => new Date());
  const redact = opts.redact ?? ((t: string) => t);
  const mutex = new Mutex();
  const wikiDir = join(home, "wiki");
  const guard = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (e) {
      if (StoreError.isInstance(e) || !isSqliteError(e)) throw e;
      throw storeError(e, file);
    }
  };
  const writeGuard = () => {
    if (readOnly) throw new StoreError(`the store ${file} is read-only here: this command writes to it; give the user write access to DISSENT_HOME`);
  };

  const q = {
    insertEvent: db.prepare("INSERT INTO events (type, at, issue_id, body) VALUES (?, ?, ?, ?)"),
    state: db.prepare<[string], { state: string }>("SELECT state FROM adversarial_state WHERE issue_id = ?"),
    putState: db.prepare("INSERT INTO adversarial_state (issue_id, state) VALUES (?, ?) ON CONFLICT(issue_id) DO UPDATE SET state = excluded.state"),
    plan: db.prepare<[string], PlanRow>(
      "SELECT issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq, updated_at FROM plans WHERE issue_id = ?",
    ),
    plans: db.prepare<[], PlanRow>("SELECT issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq, updated_at FROM plans"),
    savePlan: db.prepare(
      `INSERT INTO plans (issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq, updated_at)
       VALUES (@issue_id, @cycle, @status, @route, @route_reason, @calls, @cost_usd, @concern_seq, @updated_at)
       ON CONFLICT(issue_id) DO UPDATE SET cycle = @cycle, status = @status, route = @route, route_reason = @route_reason,
         calls = @calls, cost_usd = @cost_usd, concern_seq = MAX(concern_seq, @concern_seq), updated_at = @updated_at`,
    ),
    countCall: db.prepare("UPDATE plans SET calls = calls + 1, cost_usd = cost_usd + ? WHERE issue_id = ?"),
    seq: db.prepare("UPDATE plans SET concern_seq = MAX(concern_seq, ?) WHERE issue_id = ?"),
    artifact: db.prepare<[string, number, string], { content: string }>("SELECT content FROM artifacts WHERE issue_id = ? AND cycle = ? AND name = ?"),
    putArtifact: db.prepare("INSERT OR REPLACE INTO artifacts (issue_id, cycle, name, content) VALUES (?, ?, ?, ?)"),
    stageDone: db.prepare<[string, string, number], { n: number }>(
      "SELECT COUNT(*) AS n FROM events WHERE issue_id = ? AND type = 'AdversarialStageCompleted' AND json_extract(body, '$.stage') = ? AND json_extract(body, '$.cycle') = ?",
    ),
    cacheGet: db.prepare<[string], { reply: string }>("SELECT reply FROM cache WHERE key = ?"),
    cachePut: db.prepare("INSERT OR REPLACE INTO cache (key, provider, model, reply, created_at) VALUES (?, ?, ?, ?, ?)"),
    lease: db.prepare<[string], { holder_id: string; host: string; pid: number; acquired_at: number; renewed_at: number }>(
      "SELECT holder_id, host, pid, acquired_at, renewed_at FROM leases WHERE issue_id = ?",
    ),
    putLease: db.prepare(
      "INSERT INTO leases (issue_id, holder_id, host, pid, acquired_at, renewed_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(issue_id) DO UPDATE SET holder_id = excluded.holder_id, host = excluded.host, pid = excluded.pid, acquired_at = excluded.acquired_at, renewed_at = excluded.renewed_at",
    ),
    renew: db.prepare("UPDATE leases SET renewed_at = ? WHERE issue_id = ? AND holder_id = ?"),
    release: db.prepare("DELETE FROM leases WHERE issue_id = ? AND holder_id = ?"),
    issue: db.prepare<[string], { id: string; title: string; body: string; labels: string; created_at: string; updated_at: string }>(
      "SELECT id, title, body, labels, created_at, updated_at FROM issues WHERE id = ?",
    ),
    issues: db.prepare<[], { id: string; title: string; body: string; labels: string; created_at: string; updated_at: string }>(
      "SELECT id, title, body, labels, created_at, updated_at FROM issues ORDER BY number",
    ),
  };

  const loadState = (issueId: string): AdversarialState => {
    const row = q.state.get(issueId);
    return row ? (JSON.parse(row.state) as AdversarialState) : emptyState();
  };

  /** Appends inside the caller's transaction: stamp, redact, insert; the fold and the cycle's counter move with each event. */
  const appendRaw = (events: readonly NewEvent[]): StoredEvent[] => {
    writeGuard();
    const out: StoredEvent[] = [];
    for (const input of events) {
      const event = stampEvent(input, clock().toISOString(), redact);
      const info = q.insertEvent.run(event.type, event.at, event.issue_id, JSON.stringify(event));
      if (event.issue_id !== null && FOLDED.has(event.type)) q.putState.run(event.issue_id, JSON.stringify(reduce(loadState(event.issue_id), event)));
      if (countsCall(event)) q.countCall.run(event.cost_usd ?? 0, event.issue_id);
      out.push({ ...event, seq: Number(info.lastInsertRowid) });
    }
    return out;
  };
  const savePlanRaw = (row: PlanRow) => {
    writeGuard();
    q.savePlan.run({ ...row, updated_at: clock().toISOString() });
  };
  const putArtifactRaw = (issueId: string, cycle: number, name: string, content: string) => {
    writeGuard();
    q.putArtifact.run(issueId, cycle, name, redact(content));
  };

  const txOps: StoreTx = {
    append: async (events) => guard(() => appendRaw(events)),
    plan: async (id) => guard(() => q.plan.get(id)),
    savePlan: async (row) => guard(() => savePlanRaw(row)),
    putArtifact: async (id, cycle, name, content) => guard(() => putArtifactRaw(id, cycle, name, content)),
  };

  /** A write in its own IMMEDIATE transaction, serialised with everything else of this process. */
  const write = <T>(fn: () => T): Promise<T> => mutex.run(() => guard(() => db.transaction(fn).immediate()));
  const read = <T>(fn: () => T): Promise<T> => mutex.run(() => guard(fn));

  const toIssue = (r: { id: string; title: string; body: string; labels: string; created_at: string; updated_at: string }): IssueRow => ({
    ...r,
    labels: JSON.parse(r.labels) as string[],
  });

  const wikiFiles = (): StoredWikiEntry[] => {
    if (!existsSync(wikiDir)) return [];
    const out: StoredWikiEntry[] = [];
    for (const d of readdirSync(wikiDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!d.name.endsWith(".md") || d.name.startsWith(".")) continue;
      // A dangling symlink, a folder or a FIFO named *.md, no permission, a runaway file: the reader reports it and skips it.
      const got = readBounded(join(wikiDir, d.name), WIKI_ENTRY_BYTES);
      out.push({ id: d.name.replace(/\.md$/, ""), text: got.ok ? got.text : `${UNREADABLE_WIKI}${got.reason}` });
    }
    return out;
  };

  let closed = false;
  const followers = new Set<() => void>();

  const store: Store = {
    kind: "sqlite",
    location: file,
    ...txOps,
    append: (events) => write(() => appendRaw(events)),
    plan: (id) => read(() => q.plan.get(id)),
    savePlan: (row) => write(() => savePlanRaw(row)),
    putArtifact: (id, cycle, name, content) => write(() => putArtifactRaw(id, cycle, name, content)),
    cache: {
      get: (key) =>
        read(() => {
          const row = q.cacheGet.get(key);
          return row ? (JSON.parse(row.reply) as CachedReply) : undefined;
        }),
      put: (key, reply, meta) =>
        readOnly
          ? Promise.resolve()
          : write(() => void q.cachePut.run(key, meta.provider, meta.model, JSON.stringify({ ...reply, text: redact(reply.text) }), clock().toISOString())),
      clear: (olderThanDays) =>
        write(() => {
          writeGuard();
          if (olderThanDays === undefined) return db.prepare("DELETE FROM cache").run().changes;
          const cutoff = new Date(clock().getTime() - olderThanDays * 86_400_000).toISOString();
          return db.prepare("DELETE FROM cache WHERE created_at < ?").run(cutoff).changes;
        }),
      count: () => read(() => (db.prepare("SELECT COUNT(*) AS n FROM cache").get() as { n: number }).n),
    },
    transaction: (fn) =>
      mutex.run(async () => {
        writeGuard();
        guard(() => db.prepare("BEGIN IMMEDIATE").run());
        try {
          const result = await fn(txOps);
          guard(() => db.prepare("COMMIT").run());
          return result;
        } catch (e) {
          if (db.inTransaction) db.prepare("ROLLBACK").run();
          throw e;
        }
      }),
    events: (query = {}) =>
      read(() => {
        const where: string[] = [];
        const args: (string | number)[] = [];
        if (query.issueId !== undefined) {
          where.push("issue_id = ?");
          args.push(query.issueId);
        }
        if (query.after !== undefined) {
          where.push("seq > ?");
          args.push(query.after);
        }
        if (query.types?.length) {
          where.push(`type IN (${query.types.map(() => "?").join(", ")})`);
          args.push(...query.types);
        }
        const sql = `SELECT seq, body FROM events${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY seq${query.limit ? ` LIMIT ${Math.max(1, Math.floor(query.limit))}` : ""}`;
        return (db.prepare(sql).all(...args) as { seq: number; body: string }[]).map((r) => ({ ...(JSON.parse(r.body) as DissentEvent), seq: r.seq }));
      }),
    lastSeq: () => read(() => (db.prepare("SELECT COALESCE(MAX(seq), 0) AS n FROM events").get() as { n: number }).n),
    state: (id) => read(() => loadState(id)),
    plans: () => read(() => q.plans.all()),
    artifact: (id, cycle, name) => read(() => q.artifact.get(id, cycle, name)?.content),
    commitStage: (c: StageCommit) =>
      write(() => {
        writeGuard();
        // Exactly one AdversarialStageCompleted per finished stage (docs/factory.md), whatever happened to the committer.
        if ((q.stageDone.get(c.issueId, c.stage, c.cycle)?.n ?? 0) > 0) return false;
        if (c.artifact) putArtifactRaw(c.issueId, c.cycle, c.artifact.name, c.artifact.content);
        appendRaw(c.events);
        q.seq.run(c.concernSeq, c.issueId);
        return true;
      }),
    lease: {
      acquire: (issueId: string, holder: LeaseHolder, ttlMs: number, staleHolderId?: string) =>
        write((): LeaseResult => {
          writeGuard();
          const now = clock().getTime();
          const row = q.lease.get(issueId);
          if (row && row.holder_id !== holder.id && row.holder_id !== staleHolderId && now - row.renewed_at < ttlMs) {
            return {
              ok: false,
              holder: {
                id: row.holder_id,
                host: row.host,
                pid: row.pid,
                since: new Date(row.acquired_at).toISOString(),
                renewed: new Date(row.renewed_at).toISOString(),
              },
            };
          }
          q.putLease.run(issueId, holder.id, holder.host, holder.pid, now, now);
          return { ok: true, tookOver: row !== undefined && row.holder_id !== holder.id };
        }),
      renew: (issueId, holderId) => write(() => q.renew.run(clock().getTime(), issueId, holderId).changes > 0),
      release: (issueId, holderId) => write(() => void q.release.run(issueId, holderId)),
    },
    issues: {
      create: ({ title, body, labels }) =>
        write(() => {
          writeGuard();
          const now = clock().toISOString();
          const { n } = db.prepare("SELECT COALESCE(MAX(number), 0) + 1 AS n FROM issues").get() as { n: number };
          const id = String(n);
          const unique = [...new Set(labels)];
          db.prepare("INSERT INTO issues (id, number, title, body, labels, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
            id,
            n,
            redact(title),
            redact(body),
            JSON.stringify(unique),
            now,
            now,
          );
          return { id, title: redact(title), body: redact(body), labels: unique, created_at: now, updated_at: now };
        }),
      get: (id) =>
        read(() => {
          const r = q.issue.get(id);
          return r ? toIssue(r) : undefined;
        }),
      list: () => read(() => q.issues.all().map(toIssue)),
      setLabels: (id, labels) =>
        write(() => {
          writeGuard();
          db.prepare("UPDATE issues SET labels = ?, updated_at = ? WHERE id = ?").run(JSON.stringify([...labels]), clock().toISOString(), id);
        }),
    },
    wiki: opts.memory
      ? memoryWiki()
      : {
          where: wikiDir,
          list: async () => wikiFiles(),
          get: async (id) => wikiFiles().find((e) => e.id === id),
          put: async (entry) => {
            writeGuard();
            mkdirSync(wikiDir, { recursive: true });
            const path = join(wikiDir, `${entry.id}.md`);
            // Write-then-rename: a crash never leaves half an entry.
            const tmp = `${path}.tmp-${process.pid}`;
            writeFileSync(tmp, redact(entry.text));
            renameSync(tmp, path);
          },
        },
    follow(after, onEvent, onError) {
      let last = after;
      let timer: NodeJS.Timeout | undefined;
      let stopped = false;
      const tick = async () => {
        if (stopped || closed) return;
        try {
          for (;;) {
            const batch = await store.events({ after: last, limit: 500 });
            for (const e of batch) {
              last = e.seq;
              onEvent(e);
            }
            if (batch.length < 500) break;
          }
        } catch (e) {
          onError?.(e);
        }
        if (!stopped && !closed) timer = setTimeout(() => void tick(), 150);
      };
      void tick();
      const stop = () => {
        stopped = true;
        if (timer) clearTimeout(timer);
        followers.delete(stop);
      };
      followers.add(stop);
      return stop;
    },
    close: () =>
      mutex.run(() => {
        for (const stop of [...followers]) stop();
        if (!closed) {
          closed = true;
          db.close();
        }
      }),
  };
  return store;
}

/** Wiki entries held in memory (an in-memory store has no folder). */
function memoryWiki(): Store["wiki"] {
  const entries = new Map<string, string>();
  const sorted = () => [...entries.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, text]) => ({ id, text }));
  return {
    where: "memory",
    list: async () => sorted(),
    get: async (id) => (entries.has(id) ? { id, text: entries.get(id) as string } : undefined),
    put: async (e) => void entries.set(e.id, e.text),
  };
}

/** An in-memory store with the same schema, for tests and the library. */
export function memoryStore(opts: Omit<SqliteOptions, "memory"> = {}): Promise<Store> {
  return openSqliteStore("", { ...opts, memory: true });
}
