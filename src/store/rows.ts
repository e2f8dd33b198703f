/**
 * Each table's row as both adapters store it, and one `fromRow` / `toRow` per table between that row
 * and what the port hands out (ADR-029). JSON columns are written as their text (ADR-010 §5: the
 * keys keep their order) and read back through `columnsOf`, which takes either driver's shape.
 */
import type { AdversarialState } from "../contracts/concern.js";
import type { DissentEvent } from "../contracts/events.js";
import type { CachedReply } from "../models/cache.js";
import { columnsOf, MalformedRow } from "./columns.js";
import { type IssueRow, type LeaseResult, PLAN_ROUTES, PLAN_STATUSES, type PlanRow, type StoredEvent, type StoredWikiEntry } from "./port.js";
import { emptyState } from "./state.js";

/** Every table's columns as stored (JSON as its text, lease times as epoch milliseconds). */
export interface Rows {
  cache: { key: string; provider: string; model: string; reply: string; created_at: string };
  events: { seq: number; type: string; at: string; issue_id: string | null; body: string };
  adversarial_state: { issue_id: string; state: string };
  issues: { id: string; number: number; title: string; body: string; labels: string; created_at: string; updated_at: string };
  plans: Required<PlanRow>;
  artifacts: { issue_id: string; cycle: number; name: string; content: string };
  leases: { issue_id: string; holder_id: string; host: string; pid: number; acquired_at: number; renewed_at: number };
  wiki: StoredWikiEntry;
  /** The code index: a value under its key, its size, and when it was last used (epoch ms). */
  code_index: { key: string; value: string; bytes: number; used_at: number };
}

/** A row of `table` as stored. */
export type Row<T extends keyof Rows> = Rows[T];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** What dissent wrote as an event: an object naming its type (its fields are the writer's, checked when it was appended). */
const isEvent = (v: unknown): v is DissentEvent => isRecord(v) && typeof v.type === "string";
/** What dissent wrote as a fold snapshot. */
const isState = (v: unknown): v is AdversarialState =>
  isRecord(v) && Array.isArray(v.pending_concerns) && Array.isArray(v.addressed_concerns) && Array.isArray(v.stage_history);
/** What dissent wrote as a cached reply. */
const isReply = (v: unknown): v is CachedReply => isRecord(v) && typeof v.text === "string";
const isLabels = (v: unknown): v is string[] => Array.isArray(v) && v.every((l) => typeof l === "string");

/** An event as an `events` row (its `seq` is the database's to give). */
export function eventToRow(event: DissentEvent): Omit<Row<"events">, "seq"> {
  return { type: event.type, at: event.at, issue_id: event.issue_id, body: JSON.stringify(event) };
}

/** A `seq, body` read of the event log as the stored event. */
export function eventFromRow(raw: unknown): StoredEvent {
  const c = columnsOf("events", raw);
  const body = c.json("body");
  if (!isEvent(body)) throw new MalformedRow("events", "body", "is not an event");
  return { ...body, seq: c.int("seq") };
}

/** An issue's fold snapshot as an `adversarial_state` row. */
export function stateToRow(issueId: string, state: AdversarialState): Row<"adversarial_state"> {
  return { issue_id: issueId, state: JSON.stringify(state) };
}

/** A `state` read (or none: an issue with no folded event yet) as the issue's AdversarialState. */
export function stateFromRow(raw: unknown): AdversarialState {
  if (raw === undefined) return emptyState();
  const state = columnsOf("adversarial_state", raw).json("state");
  if (!isState(state)) throw new MalformedRow("adversarial_state", "state", "is not an adversarial state");
  return state;
}

/** A planning cycle as a `plans` row, stamped `updatedAt` (the store's clock, not the caller's). */
export function planToRow(plan: PlanRow, updatedAt: string): Row<"plans"> {
  const { issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq } = plan;
  return { issue_id, cycle, status, route, route_reason, calls, cost_usd, concern_seq, updated_at: updatedAt };
}

/** A `plans` row as the port's PlanRow. */
export function planFromRow(raw: unknown): PlanRow {
  const c = columnsOf("plans", raw);
  return {
    issue_id: c.text("issue_id"),
    cycle: c.int("cycle"),
    status: c.oneOf("status", PLAN_STATUSES),
    route: c.textOrNull("route") === null ? null : c.oneOf("route", PLAN_ROUTES),
    route_reason: c.textOrNull("route_reason"),
    calls: c.int("calls"),
    cost_usd: c.real("cost_usd"),
    concern_seq: c.int("concern_seq"),
    updated_at: c.text("updated_at"),
  };
}

/** An `artifacts` row's content (a stage's artifact, as written: redacted text). */
export function artifactFromRow(raw: unknown): string {
  return columnsOf("artifacts", raw).text("content");
}

/** A new issue of the local tracker as an `issues` row (labels deduplicated, in order). */
export function issueToRow(issue: IssueRow, number: number): Row<"issues"> {
  return { ...issue, number, labels: JSON.stringify([...new Set(issue.labels)]) };
}

/** An `issues` row as the port's IssueRow. */
export function issueFromRow(raw: unknown): IssueRow {
  const c = columnsOf("issues", raw);
  const labels = c.json("labels");
  if (!isLabels(labels)) throw new MalformedRow("issues", "labels", "is not a list of labels");
  return { id: c.text("id"), title: c.text("title"), body: c.text("body"), labels, created_at: c.text("created_at"), updated_at: c.text("updated_at") };
}

/** A `leases` row's holder and times (`issue_id` is the key it was read by). */
export type LeaseRecord = Omit<Row<"leases">, "issue_id">;

/** A `leases` row as its holder and times (epoch ms: pg returns BIGINT as text). */
export function leaseFromRow(raw: unknown): LeaseRecord {
  const c = columnsOf("leases", raw);
  return { holder_id: c.text("holder_id"), host: c.text("host"), pid: c.int("pid"), acquired_at: c.int("acquired_at"), renewed_at: c.int("renewed_at") };
}

/** A lease held by someone else, as `acquire` reports it. */
export function heldBy(lease: LeaseRecord): LeaseResult {
  return {
    ok: false,
    holder: {
      id: lease.holder_id,
      host: lease.host,
      pid: lease.pid,
      since: new Date(lease.acquired_at).toISOString(),
      renewed: new Date(lease.renewed_at).toISOString(),
    },
  };
}

/** A reply as a `cache` row: its text redacted (the cache is a sink, docs/run.md). */
export function replyToRow(key: string, reply: CachedReply, meta: { provider: string; model: string }, createdAt: string, redact: (t: string) => string) {
  const row: Row<"cache"> = {
    key,
    provider: meta.provider,
    model: meta.model,
    reply: JSON.stringify({ ...reply, text: redact(reply.text) }),
    created_at: createdAt,
  };
  return row;
}

/** A `reply` read of the cache as the reply. */
export function replyFromRow(raw: unknown): CachedReply {
  const reply = columnsOf("cache", raw).json("reply");
  if (!isReply(reply)) throw new MalformedRow("cache", "reply", "is not a cached reply");
  return reply;
}

/** A `wiki` row (PostgreSQL; the embedded store keeps files) as the stored entry. */
export function wikiFromRow(raw: unknown): StoredWikiEntry {
  const c = columnsOf("wiki", raw);
  return { id: c.text("id"), text: c.text("text") };
}

/** A `COUNT(*)`, `MAX(seq)` or `changes` read: the number in column `n`. */
export function countFromRow(table: string, raw: unknown): number {
  return raw === undefined ? 0 : columnsOf(table, raw).int("n");
}

/** A code index entry as a `code_index` row, its value redacted (the store is a sink), stamped `usedAt` (epoch ms). */
export function codeEntryToRow(entry: { key: string; value: string }, usedAt: number, redact: (t: string) => string): Row<"code_index"> {
  const value = redact(entry.value);
  return { key: entry.key, value, bytes: Buffer.byteLength(value), used_at: usedAt };
}

/** A `key, value` read of the code index. */
export function codeEntryFromRow(raw: unknown): { key: string; value: string } {
  const c = columnsOf("code_index", raw);
  return { key: c.text("key"), value: c.text("value") };
}
