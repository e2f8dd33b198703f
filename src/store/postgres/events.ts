import type { AdversarialState } from "../../contracts/concern.js";
import type { NewEvent } from "../../contracts/events.js";
import type { EventQuery, EventsPort, StoredEvent } from "../port.js";
import { countFromRow, eventFromRow, eventToRow, stateFromRow, stateToRow } from "../rows.js";
import { countsCall, FOLDED, reduce, stampEvent } from "../state.js";
import type { PgConn, Query } from "./connection.js";
import { followEvents } from "./follow.js";
import { APPEND_LOCK, PG_CHANNEL, PG_SCHEMA as S } from "./schema.js";

/** An issue's fold snapshot, read on `q`. */
export async function stateOn(q: Query, issueId: string): Promise<AdversarialState> {
  return stateFromRow((await q(`SELECT state FROM ${S}.adversarial_state WHERE issue_id = $1`, [issueId])).rows[0]);
}

/**
 * Appends inside the transaction on `q`: stamp, redact, insert; the fold and the cycle's counter move
 * with the events. A batch costs the same few round trips as one event (docs/factory.md "What it
 * costs"): the rows go in one INSERT, each issue's snapshot is read once and written once, and each
 * issue's counter moves once.
 */
export async function appendOn(conn: PgConn, q: Query, events: readonly NewEvent[]): Promise<StoredEvent[]> {
  if (!events.length) return [];
  // One appender at a time until commit: `seq` order is commit order, so a follower reading
  // `seq > last` never skips an event committed late (docs/serve.md), and the fold is serial.
  await q("SELECT pg_advisory_xact_lock($1)", [APPEND_LOCK]);
  const stamped = events.map((input) => stampEvent(input, conn.clock().toISOString(), conn.redact));
  const rows = stamped.map(eventToRow);
  // Rows are inserted in the order given (ORDER BY n), so `seq`s rise in that order whatever order RETURNING lists them in.
  const r = await q(
    `INSERT INTO ${S}.events (type, at, issue_id, body)
     SELECT type, at, issue_id, body FROM unnest($1::text[], $2::text[], $3::text[], $4::json[]) WITH ORDINALITY AS u(type, at, issue_id, body, n) ORDER BY n
     RETURNING seq`,
    [rows.map((x) => x.type), rows.map((x) => x.at), rows.map((x) => x.issue_id), rows.map((x) => x.body)],
  );
  const seqs = r.rows.map((row) => Number(row.seq)).sort((a, b) => a - b);
  if (seqs.length !== stamped.length) throw new Error(`the events insert returned ${seqs.length} rows for ${stamped.length} events`);
  const folds = new Map<string, AdversarialState>();
  const counts = new Map<string, number[]>();
  for (const event of stamped) {
    if (event.issue_id !== null && FOLDED.has(event.type)) {
      const state = folds.get(event.issue_id) ?? (await stateOn(q, event.issue_id));
      folds.set(event.issue_id, reduce(state, event));
    }
    if (countsCall(event)) {
      counts.set(event.issue_id, [...(counts.get(event.issue_id) ?? []), event.cost_usd ?? 0]);
    }
  }
  for (const [issueId, state] of folds) {
    const next = stateToRow(issueId, state);
    await q(`INSERT INTO ${S}.adversarial_state (issue_id, state) VALUES ($1, $2) ON CONFLICT (issue_id) DO UPDATE SET state = EXCLUDED.state`, [
      next.issue_id,
      next.state,
    ]);
  }
  // Each call's dollars added in turn, left to right, as one event at a time would: the same sum to the last bit.
  for (const [issueId, usd] of counts) {
    const added = usd.map((_, i) => ` + $${i + 3}::float8`).join("");
    await q(`UPDATE ${S}.plans SET calls = calls + $1, cost_usd = cost_usd${added} WHERE issue_id = $2`, [usd.length, issueId, ...usd]);
  }
  // Delivered at commit, and only then: a rolled-back append announces nothing.
  await q("SELECT pg_notify($1, $2)", [PG_CHANNEL, String(seqs[seqs.length - 1] ?? 0)]);
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
  return [sql, args];
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
