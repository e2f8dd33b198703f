import type { StoreSnapshot } from "../snapshot.js";
import { countFromRow } from "../rows.js";
import type { PgConn, Query } from "./connection.js";
import { PLAN_COLS } from "./plans.js";
import { APPEND_LOCK, PG_SCHEMA as S } from "./schema.js";

/** Tables `dissent migrate` copies (the cache merges; leases are not state worth copying). */
const CONTENT_TABLES = ["events", "issues", "plans", "artifacts", "adversarial_state", "wiki"] as const;

/** What the store holds besides the reply cache, by table (a non-empty target refuses `dissent migrate`). */
export function contents(conn: PgConn): Promise<Record<string, number>> {
  return conn.guard(async () => {
    const out: Record<string, number> = {};
    for (const t of CONTENT_TABLES) out[t] = countFromRow(t, (await conn.poolQuery(`SELECT COUNT(*) AS n FROM ${S}.${t}`)).rows[0]);
    return out;
  });
}

/** Replies are content-addressed: one already there is the same reply. Returns how many were new. */
async function importCache(q: Query, snap: StoreSnapshot): Promise<number> {
  let added = 0;
  for (const c of snap.cache) {
    const r = await q(`INSERT INTO ${S}.cache (key, provider, model, reply, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING`, [
      c.key,
      c.provider,
      c.model,
      c.reply,
      c.created_at,
    ]);
    added += r.rowCount ?? 0;
  }
  return added;
}

/** The log with its `seq` kept, then the sequence moved past it; the fold's snapshots as they were. */
async function importEvents(q: Query, snap: StoreSnapshot): Promise<void> {
  for (const e of snap.events)
    await q(`INSERT INTO ${S}.events (seq, type, at, issue_id, body) VALUES ($1, $2, $3, $4, $5)`, [e.seq, e.type, e.at, e.issue_id, e.body]);
  await q(
    `SELECT setval(pg_get_serial_sequence('${S}.events', 'seq'), GREATEST((SELECT COALESCE(MAX(seq), 0) FROM ${S}.events), 1), (SELECT COUNT(*) > 0 FROM ${S}.events))`,
  );
  for (const s of snap.states) await q(`INSERT INTO ${S}.adversarial_state (issue_id, state) VALUES ($1, $2)`, [s.issue_id, s.state]);
}

/** Issues with their numbers kept, then the number sequence moved past them. */
async function importIssues(q: Query, snap: StoreSnapshot): Promise<void> {
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
  await q(`SELECT setval('${S}.issue_number', GREATEST((SELECT COALESCE(MAX(number), 0) FROM ${S}.issues), 1), (SELECT COUNT(*) > 0 FROM ${S}.issues))`);
}

/** Planning cycles, their artifacts and the wiki. */
async function importPlans(conn: PgConn, q: Query, snap: StoreSnapshot): Promise<void> {
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
      p.updated_at ?? conn.clock().toISOString(),
    ]);
  }
  for (const a of snap.artifacts)
    await q(`INSERT INTO ${S}.artifacts (issue_id, cycle, name, content) VALUES ($1, $2, $3, $4)`, [a.issue_id, a.cycle, a.name, a.content]);
  for (const w of snap.wiki) await q(`INSERT INTO ${S}.wiki (id, text, updated_at) VALUES ($1, $2, now())`, [w.id, w.text]);
}

/** Copies an embedded store's rows in one transaction, keeping ids and the events' `seq`; the cache merges. */
export function importSnapshot(conn: PgConn, snap: StoreSnapshot): Promise<Record<string, number>> {
  return conn.transaction(async (q) => {
    await q("SELECT pg_advisory_xact_lock($1)", [APPEND_LOCK]);
    const cache = await importCache(q, snap);
    await importEvents(q, snap);
    await importIssues(q, snap);
    await importPlans(conn, q, snap);
    return {
      cache,
      events: snap.events.length,
      issues: snap.issues.length,
      plans: snap.plans.length,
      artifacts: snap.artifacts.length,
      adversarial_state: snap.states.length,
      wiki: snap.wiki.length,
    };
  });
}
