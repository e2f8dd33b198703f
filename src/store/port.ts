import type { AdversarialState } from "../contracts/concern.js";
import type { DissentEvent, NewEvent } from "../contracts/events.js";
import type { ReplyCache } from "../models/cache.js";

/** An event as the store keeps it: with `seq`, its place in the one log (docs/serve.md). */
export type StoredEvent = DissentEvent & { seq: number };

/**
 * Where an issue's planning stands. `planning` means a cycle is under way (or was interrupted: the
 * next `issue plan` resumes it); `budget` means a cycle ended with no plan (the next starts afresh).
 */
export type PlanStatus = (typeof PLAN_STATUSES)[number];
/** Every PlanStatus, for reading a plans row back (src/store/rows.ts). */
export const PLAN_STATUSES = ["new", "planning", "ready", "needs_replan", "hitl", "budget", "fixed"] as const;
/** The ComplexityGate's routes, as a plans row records them. */
export const PLAN_ROUTES = ["trivial", "load_bearing"] as const;

/** An issue's planning cycle (one row per issue: the current cycle). */
export interface PlanRow {
  issue_id: string;
  cycle: number;
  status: PlanStatus;
  route: (typeof PLAN_ROUTES)[number] | null;
  route_reason: string | null;
  /** Network model calls of this cycle, counted with their ModelCall events (the budget survives a kill and resume). */
  calls: number;
  /** Dollars of this cycle's network calls whose price is known. */
  cost_usd: number;
  /** The last number of the issue's `{PHASE}-{ROLE}-{NNN}` concern ids (ids are never reused). */
  concern_seq: number;
  updated_at?: string;
}

/** An issue of the local tracker. */
export interface IssueRow {
  id: string;
  title: string;
  body: string;
  labels: string[];
  created_at: string;
  updated_at: string;
}

/** Who holds an issue's planning lease (docs/issue.md). */
export interface LeaseHolder {
  /** Unique per process and run. */
  id: string;
  host: string;
  pid: number;
}

export type LeaseResult = { ok: true; tookOver: boolean } | { ok: false; holder: { id: string; host: string; pid: number; since: string; renewed: string } };

/** What one stage's commit writes, atomically (docs/issue.md: the state is saved after every stage). */
export interface StageCommit {
  issueId: string;
  cycle: number;
  stage: string;
  artifact?: { name: string; content: string };
  /** More artifacts of the stage, written with it: the record of its rounds (docs/serve.md "What was said"). */
  records?: { name: string; content: string }[];
  events: NewEvent[];
  /** The concern counter after the stage: ids handed out during the stage become durable only here. */
  concernSeq: number;
}

/** Everything that can happen inside one transaction. */
export type StoreTx = Pick<EventsPort, "append"> & Pick<PlansPort, "plan" | "savePlan" | "putArtifact">;

/** A paged read of the event log. */
export interface EventQuery {
  issueId?: string;
  /** Only events with `seq` greater than this. */
  after?: number;
  limit?: number;
  types?: readonly string[];
  /**
   * Stops once the events read hold this many characters of stored JSON (the first event always comes,
   * whatever its size): a page of a log bounded by bytes, not only by count (the dashboard's read-back).
   */
  maxBytes?: number;
}

/** A wiki entry as stored (the file's text, or the database row's); parsed by carryover/wiki. */
export interface StoredWikiEntry {
  id: string;
  text: string;
}

/** What a wiki entry that cannot be read (a dangling symlink, a folder named *.md) holds as its text: this, then why. */
export const UNREADABLE_WIKI = "\u0000unreadable: ";
/** The largest wiki entry file read (docs/limits.md); a larger one is skipped with a warning. */
export const WIKI_ENTRY_BYTES = 1024 * 1024;

/** The reply cache (docs/run.md), with what `dissent cache` needs beyond the model port's get and put. */
export type CachePort = ReplyCache & { clear(olderThanDays?: number): Promise<number>; count(): Promise<number> };

/**
 * The code index (docs/issue.md "The code the councils read", ADR-032): what the repository map
 * keeps of each file — its extraction, and a GitHub blob's text — under keys that name the content
 * (a blob hash) and the extractor's version, so nothing in it goes stale. Bounded (CODE_INDEX_BYTES):
 * past it the entries used longest ago go first. `stats` counts what this process asked of it.
 */
export interface CodeIndexCache {
  getMany(keys: readonly string[]): Promise<Map<string, string>>;
  putMany(entries: readonly { key: string; value: string }[]): Promise<void>;
  /** Entries and bytes held. */
  size(): Promise<{ entries: number; bytes: number }>;
  readonly stats: CodeIndexStats;
}

/** What one process asked of a code index: keys found, keys not found, entries written. */
export interface CodeIndexStats {
  hits: number;
  misses: number;
  puts: number;
}

/** The most the code index holds, in bytes of its values (docs/limits.md). */
export const CODE_INDEX_BYTES = 512 * 1024 * 1024;
/** The largest one value of the code index; a larger one is not kept. */
export const CODE_INDEX_VALUE_BYTES = 8 * 1024 * 1024;

/**
 * The event log and its fold: appending stamps, redacts and numbers events, moves the issue's
 * AdversarialState snapshot and counts a network ModelCall against its planning cycle (the budget).
 */
export interface EventsPort {
  /** Appends events (stamped, redacted, numbered); the fold and the cycle's call counter move with them. */
  append(events: readonly NewEvent[]): Promise<StoredEvent[]>;
  events(query?: EventQuery): Promise<StoredEvent[]>;
  lastSeq(): Promise<number>;
  /** An issue's AdversarialState: the fold of its events (kept as a snapshot equal to the fold). */
  state(issueId: string): Promise<AdversarialState>;
  /**
   * Calls `onEvent` for every event committed by any process sharing the store, in `seq` order,
   * starting after `after` (SQLite: follows the table; PostgreSQL: LISTEN/NOTIFY). Returns a stop function.
   */
  follow(after: number, onEvent: (e: StoredEvent) => void, onError?: (e: unknown) => void): () => void;
}

/**
 * Planning cycles and their artifacts (the plan, the criteria, and the implement phase's pull
 * request body: the implement phase keeps nothing else of its own beyond events, docs/implement.md).
 */
export interface PlansPort {
  plan(issueId: string): Promise<PlanRow | undefined>;
  savePlan(row: PlanRow): Promise<void>;
  plans(): Promise<PlanRow[]>;
  putArtifact(issueId: string, cycle: number, name: string, content: string): Promise<void>;
  artifact(issueId: string, cycle: number, name: string): Promise<string | undefined>;
  /** Commits a stage (artifact, events, concern counter) unless it was already committed for this cycle. */
  commitStage(commit: StageCommit): Promise<boolean>;
}

/** One planner per issue (docs/issue.md). */
export interface LeasePort {
  /** Takes the lease if it is free, ours, expired, or held by `staleHolderId` (a holder known to be dead). */
  acquire(issueId: string, holder: LeaseHolder, ttlMs: number, staleHolderId?: string): Promise<LeaseResult>;
  /** False when the lease is no longer ours (taken over after expiring). */
  renew(issueId: string, holderId: string): Promise<boolean>;
  release(issueId: string, holderId: string): Promise<void>;
}

/** The local tracker's issues (docs/issue.md). */
export interface IssuesPort {
  create(input: { title: string; body: string; labels: readonly string[] }): Promise<IssueRow>;
  get(id: string): Promise<IssueRow | undefined>;
  list(): Promise<IssueRow[]>;
  setLabels(id: string, labels: readonly string[]): Promise<void>;
}

/** The wiki's entries: files under the home, or rows of the database. */
export interface WikiPort {
  list(): Promise<StoredWikiEntry[]>;
  get(id: string): Promise<StoredWikiEntry | undefined>;
  put(entry: StoredWikiEntry): Promise<void>;
  /** Where entries live, for messages: a folder, or "the database". */
  readonly where: string;
}

/**
 * The store port (DESIGN: "ports that own their transactions"): the composition of its sub-ports —
 * the reply cache, the event log and its fold, planning cycles, leases, the local tracker's issues
 * and the wiki — behind one asynchronous interface with two adapters, the embedded SQLite file
 * (src/store/sqlite/) and PostgreSQL (src/store/postgres/); ADR-029.
 */
export interface Store extends StoreTx, EventsPort, PlansPort {
  readonly kind: "sqlite" | "postgres";
  /** Names the store in messages (a file path, or host/database). */
  readonly location: string;
  readonly cache: CachePort;
  /** Runs `fn` in one transaction that takes the write lock up front (SQLite `BEGIN IMMEDIATE`; PostgreSQL serialises by row lock). */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  readonly lease: LeasePort;
  readonly issues: IssuesPort;
  readonly wiki: WikiPort;
  /** The repository map's code index (ADR-032). */
  readonly codeIndex: CodeIndexCache;
  close(): Promise<void>;
}
