import type { AdversarialState } from "../../contracts/concern.js";
import type { NewEvent } from "../../contracts/events.js";
import type { EventQuery, EventsPort, StoredEvent } from "../port.js";
import { countFromRow, eventFromRow, eventToRow, stateFromRow, stateToRow } from "../rows.js";
import { countsCall, emptyState, FOLDED, reduce, stampEvent } from "../state.js";
import type { PgConn, Query } from "./connection.js";
import { followEvents } from "./follow.js";
import { APPEND_LOCK, PG_CHANNEL, PG_SCHEMA as S } from "./schema.js";

/** An issue's fold snapshot, read on `q`. */
export async function stateOn(q: Query, issueId: string): Promise<AdversarialState> {
  return stateFromRow((await q(`SELECT state FROM ${S}.adversarial_state WHERE issue_id = $1`, [issueId])).rows[0]);
}

/**
 * Appends inside the transaction on `q`: stamp, redact, insert; the fold and the cycle's counter move
 * with the events. Three round trips whatever the batch (docs/factory.md "How fast"): the lock and the
 * rows; the snapshots of the issues the fold moves; the new snapshots, the counters and the notice.
 */
export async function appendOn(conn: PgConn, q: Query, events: readonly NewEvent[]): Promise<StoredEvent[]> {
  if (!events.length) return [];
  const stamped = events.map((input) => stampEvent(input, conn.clock().toISOString(), conn.redact));
  const rows = stamped.map(eventToRow);
  // One appender at a time until commit: `seq` order is commit order, so a follower reading `seq > last`
  // never skips an event committed late (docs/serve.md), and the fold is serial. The rows are numbered
  // under the lock and in the order given (ORDER BY n), so `seq`s rise in that order whatever order RETURNING lists them in.
  const inserted = await q(
    `WITH locked AS (SELECT pg_advisory_xact_lock($1))
     INSERT INTO ${S}.events (type, at, issue_id, body)
     SELECT u.type, u.at, u.issue_id, u.body FROM locked, unnest($2::text[], $3::text[], $4::text[], $5::json[]) WITH ORDINALITY AS u(type, at, issue_id, body, n) ORDER BY u.n
     RETURNING seq`,
    [APPEND_LOCK, rows.map((x) => x.type), rows.map((x) => x.at), rows.map((x) => x.issue_id), rows.map((x) => x.body)],
  );
  const seqs = inserted.rows.map((row) => Number(row.seq)).sort((a, b) => a - b);
  if (seqs.length !== stamped.length) throw new Error(`the events insert returned ${seqs.length} rows for ${stamped.length} events`);
  // Read after the lock, in a statement of its own: its snapshot holds every append committed before ours.
  const folded = [...new Set(stamped.flatMap((e) => (e.issue_id !== null && FOLDED.has(e.type) ? [e.issue_id] : [])))];
  const states = new Map<string, AdversarialState>();
  if (folded.length) {
    const found = await q(`SELECT issue_id, state FROM ${S}.adversarial_state WHERE issue_id = ANY($1)`, [folded]);
    for (const row of found.rows) states.set(String(row.issue_id), stateFromRow(row));
  }
  const counts = new Map<string, number[]>();
  for (const event of stamped) {
    if (event.issue_id !== null && FOLDED.has(event.type)) states.set(event.issue_id, reduce(states.get(event.issue_id) ?? emptyState(), event));
    if (countsCall(event)) counts.set(event.issue_id, [...(counts.get(event.issue_id) ?? []), event.cost_usd ?? 0]);
  }
  const next = folded.map((id) => stateToRow(id, states.get(id) ?? emptyState()));
  const values: unknown[] = [PG_CHANNEL, String(seqs[seqs.length - 1] ?? 0), next.map((x) => x.issue_id), next.map((x) => x.state)];
  // Each call's dollars added in turn, left to right, as one event at a time would: the same sum to the last bit.
  const counters = [...counts].map(([issueId, usd], i) => {
    const at = values.push(usd.length, issueId);
    const added = usd.map((cost) => ` + $${values.push(cost)}::float8`).join("");
    return `, c${i} AS (UPDATE ${S}.plans SET calls = calls + $${at - 1}, cost_usd = cost_usd${added} WHERE issue_id = $${at} RETURNING 1)`;
  });
  // Delivered at commit, and only then: a rolled-back append announces nothing.
  await q(
    `WITH st AS (INSERT INTO ${S}.adversarial_state (issue_id, state) SELECT * FROM unnest($3::text[], $4::json[])
                 ON CONFLICT (issue_id) DO UPDATE SET state = EXCLUDED.state RETURNING 1)${counters.join("")}
     SELECT pg_notify($1, $2)`,
    values,
  );
  return stamped.map((event, i) => ({ ...event, seq: seqs[i] ?? 0 }));
}

/**
 * One event the fold does not read (a ModelCall, a label change: most of the log) commits in one
 * statement, one round trip: the lock, then the row, then the cycle's counter and the notice.
 */
async function appendOne(conn: PgConn, input: NewEvent): Promise<StoredEvent[]> {
  const event = stampEvent(input, conn.clock().toISOString(), conn.redact);
  const row = eventToRow(event);
  const r = await conn.poolQuery(
    `WITH locked AS (SELECT pg_advisory_xact_lock($1)),
          ins AS (INSERT INTO ${S}.events (type, at, issue_id, body) SELECT $2, $3, $4, $5 FROM locked RETURNING seq),
          counted AS (UPDATE ${S}.plans SET calls = calls + 1, cost_usd = cost_usd + $6 WHERE $7 AND issue_id = $4 AND EXISTS (SELECT 1 FROM ins))
     SELECT seq, pg_notify($8, seq::text) FROM ins`,
    [APPEND_LOCK, row.type, row.at, row.issue_id, row.body, event.type === "ModelCall" ? (event.cost_usd ?? 0) : 0, countsCall(event), PG_CHANNEL],
  );
  return [{ ...event, seq: Number(r.rows[0]?.seq) }];
}

/** The paged read's SQL and values. */
function eventsQuery(query: EventQuery): [string, unknown[]] {
  const conditions: string[] = [];
  const args: unknown[] = [];
  if (query.issueId !== undefined) conditions.push(`issue_id = $${args.push(query.issueId)}`);
  if (query.after !== undefined) conditions.push(`seq > $${args.push(query.after)}`);
  if (query.types?.length) conditions.push(`type = ANY($${args.push([...query.types])})`);
  const sql = `SELECT seq, body FROM ${S}.events${conditions.length ? ` WHERE ${conditions.join(" AND ")}` : ""} ORDER BY seq${query.limit ? ` LIMIT ${Math.max(1, Math.floor(query.limit))}` : ""}`;
  if (query.maxBytes === undefined) return [sql, args];
  // Paged by size: the rows whose running total of stored JSON, before them, is under the bound (the first always comes).
  const max = `$${args.push(Math.max(1, Math.floor(query.maxBytes)))}`;
  const sized = `SELECT seq, body FROM (SELECT seq, body, SUM(octet_length(body::text)) OVER (ORDER BY seq) - octet_length(body::text) AS before FROM (${sql}) page) sized WHERE before < ${max} ORDER BY seq`;
  return [sized, args];
}

/** The event log, its fold snapshot and the cycle's call counter (ADR-010 §3, §4, §7). */
export function pgEvents(conn: PgConn): EventsPort {
  const port: EventsPort = {
    append: (events) => {
      const [only] = events;
      if (events.length !== 1 || !only || (only.issue_id !== null && FOLDED.has(only.type))) return conn.transaction((q) => appendOn(conn, q, events));
      return conn.guard(() => appendOne(conn, only));
    },
    events: (query = {}) => conn.guard(async () => (await conn.poolQuery(...eventsQuery(query))).rows.map(eventFromRow)),
    lastSeq: () => conn.guard(async () => countFromRow("events", (await conn.poolQuery(`SELECT COALESCE(MAX(seq), 0) AS n FROM ${S}.events`)).rows[0])),
    state: (id) => conn.guard(() => stateOn(conn.poolQuery, id)),
    follow: (after, onEvent, onError) => followEvents(conn, port, after, onEvent, onError),
  };
  return port;
}
