/**
 * The PostgreSQL store bounds every statement (docs/limits.md "The store", issue 32): a statement
 * held by a lock is cancelled by the server at `store.statement_timeout_ms`, and a server that stops
 * answering is given up on by the client a little later — one line each, never a plan that waits
 * forever — against a real server, the lock taken and the backend stopped by the test.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { exitCodeOf } from "../../src/cli/exit-codes.js";
import { StoreError } from "../../src/errors.js";
import type { Store } from "../../src/store/port.js";
import { openPostgresStore, PG_SCHEMA } from "../../src/store/postgres.js";
import { holdWorld, type HoldWorld } from "../support/hold.js";
import { freshDatabase } from "../support/postgres.js";
import { label } from "./fixtures.js";

const opened: Store[] = [];
const clients: pg.Client[] = [];
const stopped: number[] = [];
let w: HoldWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
  for (const pid of stopped.splice(0)) process.kill(pid, "SIGCONT");
  for (const c of clients.splice(0)) await c.end().catch(() => undefined);
  for (const s of opened.splice(0)) await s.close();
});

async function open(url: string, statementTimeoutMs: number): Promise<Store> {
  const s = await openPostgresStore(url, { max: 2, statementTimeoutMs });
  opened.push(s);
  return s;
}
async function client(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  clients.push(c);
  return c;
}

/** The one-line StoreError a statement past its bound must be: exit 1, no password, no stack. */
async function storeFailure(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(StoreError.isInstance(e), String(e)).toBe(true);
  const message = (e as Error).message;
  expect(exitCodeOf(e)).toBe(1);
  expect(message).not.toContain("\n");
  expect(message).not.toMatch(/postgres:\/\//);
  return message;
}

describe("a statement of the PostgreSQL store is bounded", () => {
  it("held by a lock another session keeps: cancelled at store.statement_timeout_ms, one line; the store works once the lock is gone", async () => {
    const url = await freshDatabase();
    const store = await open(url, 300);
    await store.append([label("i1", 1)]);
    const locker = await client(url);
    await locker.query("BEGIN");
    await locker.query(`LOCK TABLE ${PG_SCHEMA}.events IN ACCESS EXCLUSIVE MODE`);

    const message = await storeFailure(store.events({ issueId: "i1" }));
    expect(message).toMatch(
      /^PostgreSQL at 127\.0\.0\.1:\d+\/\S+ did not finish a statement of the store within its bound \(300 ms, store\.statement_timeout_ms\): /,
    );
    expect(await storeFailure(store.append([label("i1", 2)]))).toContain("store.statement_timeout_ms");

    await locker.query("ROLLBACK");
    expect((await store.events({ issueId: "i1" })).length).toBe(1);
  });

  it("a server that stops answering (its backend stopped): the client gives up a little after the bound, one line, and the next statement gets a new connection", async () => {
    const url = await freshDatabase();
    const store = await open(url, 200);
    await store.append([label("i1", 1)]);
    const watcher = await client(url);
    const db = new URL(url).pathname.slice(1);
    const backends = await watcher.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'dissent'", [db]);
    expect(backends.rows.length).toBeGreaterThan(0);
    for (const { pid } of backends.rows) {
      process.kill(pid, "SIGSTOP"); // the store's connections get no answer, as from a hung server
      stopped.push(pid);
    }

    const message = await storeFailure(store.events({ issueId: "i1" }));
    expect(message).toMatch(
      /^PostgreSQL at 127\.0\.0\.1:\d+\/\S+ stopped answering: a statement of the store got no answer within its bound \(200 ms, store\.statement_timeout_ms, and 5 s more\)/,
    );

    for (const pid of stopped.splice(0)) process.kill(pid, "SIGCONT");
    expect((await store.events({ issueId: "i1" })).length).toBe(1);
  });

  it("dissent issue plan on a database whose events table another session holds locked: exit 1 and one line, and the plan runs once the lock is gone", async () => {
    const url = await freshDatabase();
    w = await holdWorld({}, { extra: "store: { type: postgres, statement_timeout_ms: 500 }\n" }, { DISSENT_DATABASE_URL: url });
    const id = await w.newIssue("Retry failed uploads", "Uploads fail on flaky networks.");
    const locker = await client(url);
    await locker.query("BEGIN");
    await locker.query(`LOCK TABLE ${PG_SCHEMA}.events IN ACCESS EXCLUSIVE MODE`);

    const held = await w.run(["issue", "plan", id]);
    expect(held.code, held.stderr).toBe(1);
    expect(held.stderr).toMatch(
      /^dissent: error: PostgreSQL at 127\.0\.0\.1:\d+\/\S+ did not finish a statement of the store within its bound \(500 ms, store\.statement_timeout_ms\): [^\n]*\n$/,
    );

    await locker.query("ROLLBACK");
    const planned = await w.run(["issue", "plan", id, "--json"]);
    expect(planned.code, planned.stderr).toBe(0);
    expect((JSON.parse(planned.stdout) as { status: string }).status).toBe("ready");
  });
});
