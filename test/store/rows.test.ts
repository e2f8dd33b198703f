/**
 * The typed row mappers both store adapters read through (src/store/rows.ts, ADR-029): a row reads
 * back the same whichever driver returned it (pg hands BIGINT and COUNT as text and JSON columns
 * parsed; SQLite hands JSON as text), nullable columns keep their null, and a row that does not hold
 * what its table promises is one StoreError line naming the store — through the port on both
 * adapters, and through the CLI as a user meets it — instead of an internal error.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { MalformedRow } from "../../src/store/columns.js";
import type { Store } from "../../src/store/port.js";
import { openPostgresStore, PG_SCHEMA } from "../../src/store/postgres.js";
import { eventFromRow, eventToRow, issueFromRow, issueToRow, leaseFromRow, planFromRow, planToRow, stateFromRow } from "../../src/store/rows.js";
import { openSqliteStore, storeFile } from "../../src/store/sqlite.js";
import { foldState, stampEvent } from "../../src/store/state.js";
import { dissent } from "../support/cli.js";
import { freshDatabase } from "../support/postgres.js";
import { AT, concern, forwarded } from "./fixtures.js";

const malformed = (fn: () => unknown): MalformedRow => {
  try {
    fn();
  } catch (e) {
    if (MalformedRow.isInstance(e)) return e;
    throw e;
  }
  throw new Error("expected a MalformedRow");
};

describe("rows read back the same from either driver's shape", () => {
  it("an event: its body as SQLite's text or as pg's parsed JSON, its seq as a number or pg's BIGINT text, keys in order", () => {
    const event = stampEvent(forwarded("7", concern("PLAN-TESTER-001", { evidence: 'a "quoted" line\nand ünïcode' })), AT, (t) => t);
    const row = eventToRow(event);
    const fromSqlite = eventFromRow({ seq: 12, body: row.body });
    const fromPg = eventFromRow({ seq: "12", body: JSON.parse(row.body) });
    expect(fromSqlite).toEqual({ ...event, seq: 12 });
    expect(fromPg).toEqual(fromSqlite);
    expect(Object.keys(fromPg).slice(0, 3)).toEqual(["type", "at", "issue_id"]);
    expect(row).toMatchObject({ type: "ConcernForwarded", at: AT, issue_id: "7" });
  });

  it("a plan: route and route_reason keep their null, counts read from pg's text, updated_at is the store's stamp", () => {
    const plan = { issue_id: "3", cycle: 2, status: "planning" as const, route: null, route_reason: null, calls: 4, cost_usd: 0.125, concern_seq: 9 };
    const row = planToRow({ ...plan, updated_at: "caller's" }, "2026-05-17T12:00:01.000Z");
    expect(row.updated_at).toBe("2026-05-17T12:00:01.000Z");
    expect(planFromRow(row)).toEqual({ ...plan, updated_at: "2026-05-17T12:00:01.000Z" });
    const routed = planFromRow({ ...row, route: "load_bearing", route_reason: "touches the schema", cycle: "2", calls: "4" });
    expect(routed).toMatchObject({ route: "load_bearing", route_reason: "touches the schema", cycle: 2, calls: 4 });
  });

  it("an issue: labels deduplicated in order on the way in, read back from text or parsed JSON", () => {
    const row = issueToRow({ id: "1", title: "t", body: "b", labels: ["bug", "dissent-find", "bug"], created_at: AT, updated_at: AT }, 1);
    expect(row.labels).toBe('["bug","dissent-find"]');
    expect(issueFromRow(row).labels).toEqual(["bug", "dissent-find"]);
    expect(issueFromRow({ ...row, labels: ["bug"] }).labels).toEqual(["bug"]);
  });

  it("a lease's times from pg's BIGINT text; an issue with no snapshot folds to the empty state", () => {
    expect(leaseFromRow({ holder_id: "h", host: "m", pid: 42, acquired_at: "1779019200000", renewed_at: "1779019210000" })).toEqual({
      holder_id: "h",
      host: "m",
      pid: 42,
      acquired_at: 1779019200000,
      renewed_at: 1779019210000,
    });
    expect(stateFromRow(undefined)).toEqual(foldState([]));
  });

  it("what a table does not promise is a MalformedRow naming table and column", () => {
    expect(malformed(() => issueFromRow({ id: "1", title: "t", body: "b", labels: '["bug", ', created_at: AT, updated_at: AT })).message).toMatch(
      /^issues\.labels is not JSON/,
    );
    expect(malformed(() => issueFromRow({ id: "1", title: "t", body: "b", labels: "[1, 2]", created_at: AT, updated_at: AT })).column).toBe("labels");
    const plan = { issue_id: "3", cycle: 1, status: "shipped", route: null, route_reason: null, calls: 0, cost_usd: 0, concern_seq: 0, updated_at: AT };
    expect(malformed(() => planFromRow(plan)).message).toBe('plans.status is "shipped", not one of new, planning, ready, needs_replan, hitl, budget, fixed');
    expect(malformed(() => planFromRow({ ...plan, status: "ready", calls: "many" })).message).toBe('plans.calls is "many", not an integer');
    expect(malformed(() => eventFromRow({ seq: 1, body: '{"no":"type"}' })).message).toBe("events.body is not an event");
    expect(malformed(() => stateFromRow({ state: "[]" })).table).toBe("adversarial_state");
  });
});

describe("a damaged row is one StoreError line naming the store, never an internal error", () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const home = () => {
    const dir = mkdtempSync(join(tmpdir(), "dissent-rows-"));
    dirs.push(dir);
    return join(dir, "home");
  };
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );

  it("SQLite: labels that are not JSON, a state that is not a state", async () => {
    const at = home();
    const store = await openSqliteStore(at);
    stores.push(store);
    await store.issues.create({ title: "a thing", body: "", labels: ["bug"] });
    await store.append([forwarded("1", concern("PLAN-TESTER-001"))]);
    const db = new Database(storeFile(at));
    db.prepare("UPDATE issues SET labels = ? WHERE id = '1'").run('["bug", ');
    db.prepare("UPDATE adversarial_state SET state = '[]' WHERE issue_id = '1'").run();
    db.close();
    for (const err of [await failure(store.issues.list()), await failure(store.state("1"))]) {
      expect(StoreError.isInstance(err), String(err)).toBe(true);
      expect((err as Error).message).toContain(`the store ${storeFile(at)} holds a damaged row: `);
      expect((err as Error).message).not.toContain("\n");
    }
    expect(((await failure(store.issues.get("1"))) as Error).message).toContain("issues.labels is not JSON");
  });

  it("PostgreSQL: labels that are not a list, a plan with a status no dissent wrote", async () => {
    const url = await freshDatabase();
    const store = await openPostgresStore(url, { max: 2 });
    stores.push(store);
    await store.issues.create({ title: "a thing", body: "", labels: ["bug"] });
    await store.savePlan({ issue_id: "1", cycle: 1, status: "planning", route: null, route_reason: null, calls: 0, cost_usd: 0, concern_seq: 0 });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`UPDATE ${PG_SCHEMA}.issues SET labels = '{"bug": true}' WHERE id = '1'`);
      await client.query(`UPDATE ${PG_SCHEMA}.plans SET status = 'shipped' WHERE issue_id = '1'`);
    } finally {
      await client.end();
    }
    const labels = await failure(store.issues.get("1"));
    const plans = await failure(store.plans());
    for (const err of [labels, plans]) {
      expect(StoreError.isInstance(err), String(err)).toBe(true);
      expect((err as Error).message).toContain(`the store at ${store.location} holds a damaged row: `);
      expect((err as Error).message).not.toContain(url);
    }
    expect((labels as Error).message).toContain("issues.labels is not a list of labels");
    expect((plans as Error).message).toContain('plans.status is "shipped"');
  });

  it("through the CLI: `dissent issue list` on a home whose issue row was damaged by hand prints one line and exits 1", async () => {
    const at = home();
    const cwd = join(at, "..");
    const env = { DISSENT_HOME: at };
    expect((await dissent(["issue", "new", "--title", "a thing", "--label", "bug"], { cwd, env })).code).toBe(0);
    const db = new Database(storeFile(at));
    db.prepare("UPDATE issues SET labels = ? WHERE id = '1'").run('["bug", ');
    db.close();
    const r = await dissent(["issue", "list"], { cwd, env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `dissent: error: the store ${storeFile(at)} holds a damaged row: issues.labels is not JSON (${jsonError('["bug", ')}); restore it from a backup, or fix or remove that row\n`,
    );
  });

  it("through the CLI: `dissent migrate --from-sqlite` refuses a plan whose status no dissent wrote, in one line, and copies nothing", async () => {
    const at = home();
    const cwd = join(at, "..");
    const store = await openSqliteStore(at);
    await store.issues.create({ title: "a thing", body: "", labels: ["bug"] });
    await store.savePlan({ issue_id: "1", cycle: 1, status: "ready", route: "trivial", route_reason: null, calls: 0, cost_usd: 0, concern_seq: 0 });
    await store.close();
    const db = new Database(storeFile(at));
    db.prepare("UPDATE plans SET status = 'shipped' WHERE issue_id = '1'").run();
    db.close();
    const url = await freshDatabase();
    writeFileSync(join(cwd, "pg.config.yaml"), "store: { type: postgres }\n");
    const r = await dissent(["migrate", "--from-sqlite", at, "--config", join(cwd, "pg.config.yaml")], { cwd, env: { DISSENT_DATABASE_URL: url } });
    expect(r.stderr).toBe(
      `dissent: error: the store ${storeFile(at)} holds a damaged row: plans.status is "shipped", not one of new, planning, ready, needs_replan, hitl, budget, fixed; restore it from a backup, or fix or remove that row\n`,
    );
    expect(r.code).toBe(1);
    const target = await openPostgresStore(url, { max: 1 });
    stores.push(target);
    expect(await target.issues.list()).toEqual([]);
  });
});

/** What this Node's JSON.parse says about `text`. */
function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (e) {
    return (e as Error).message;
  }
  return "";
}
