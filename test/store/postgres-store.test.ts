/**
 * What only the PostgreSQL adapter (src/store/postgres.ts) has to get right, against a real server:
 * many writers at once (the log's `seq` order is its commit order, so a follower never skips an
 * event), workers racing to create the schema, the lease at its production time to live on the
 * database's clock, the store's operations inside a transaction someone else opened, and one-line
 * errors that never show the URL's password.
 */
import { createServer } from "node:net";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { exitCodeOf } from "../../src/cli/exit-codes.js";
import { StoreError } from "../../src/errors.js";
import { LEASE_TTL_MS } from "../../src/pipeline/lease.js";
import type { Store, StoredEvent } from "../../src/store/port.js";
import { describeUrl, isPostgresStore, openPostgresStore, PG_SCHEMA, type Query } from "../../src/store/postgres.js";
import { freshDatabase } from "../support/postgres.js";
import { label, modelCall } from "./fixtures.js";

const opened: Store[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
async function open(url: string): Promise<Store> {
  const s = await openPostgresStore(url, { max: 6 });
  opened.push(s);
  return s;
}
async function sql<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const address = srv.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe("the PostgreSQL store", () => {
  it("many writers at once: seq order is commit order, so a follower sees every event once, in order, even from slow transactions", async () => {
    const url = await freshDatabase();
    const [a, b] = [await open(url), await open(url)];
    const follower = await open(url);
    const seen: StoredEvent[] = [];
    const stop = follower.follow(0, (e) => void seen.push(e));
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 30; i++) {
      const s = i % 2 ? a : b;
      // Some transactions hold their events a while before committing; others commit at once.
      writes.push(
        i % 3 === 0
          ? s.transaction(async (tx) => {
              await tx.append([label(`i${i % 4}`, i)]);
              await new Promise((r) => setTimeout(r, 30));
              await tx.append([modelCall(`i${i % 4}`)]);
            })
          : s.append([label(`i${i % 4}`, i)]),
      );
    }
    await Promise.all(writes);
    const all = await a.events();
    expect(all).toHaveLength(40);
    const end = Date.now() + 10_000;
    while (seen.length < all.length && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    stop();
    expect(seen).toEqual(all);
    for (let i = 1; i < seen.length; i++) expect((seen[i] as StoredEvent).seq).toBeGreaterThan((seen[i - 1] as StoredEvent).seq);
  });

  it("workers starting at once on a new database create the schema once, and all work", async () => {
    const url = await freshDatabase();
    const stores = await Promise.all(Array.from({ length: 5 }, () => open(url)));
    await Promise.all(stores.map((s, i) => s.append([label("i1", i)])));
    expect(await (stores[0] as Store).events()).toHaveLength(5);
    expect(await sql(url, `SELECT value FROM ${PG_SCHEMA}.meta WHERE key = 'schema_version'`)).toEqual([{ value: "2" }]);
  });

  it("the lease at its production time to live, on the database's clock: held at 59 s without renewal, taken over after 60 s", async () => {
    const url = await freshDatabase();
    const [a, b] = [await open(url), await open(url)];
    const A = { id: "a", host: "alpha", pid: 1 };
    const B = { id: "b", host: "beta", pid: 2 };
    expect(await a.lease.acquire("1", A, LEASE_TTL_MS)).toEqual({ ok: true, tookOver: false });
    await sql(url, `UPDATE ${PG_SCHEMA}.leases SET renewed_at = renewed_at - 59000`);
    expect(await b.lease.acquire("1", B, LEASE_TTL_MS)).toMatchObject({ ok: false, holder: { host: "alpha", pid: 1 } });
    await sql(url, `UPDATE ${PG_SCHEMA}.leases SET renewed_at = renewed_at - 1500`);
    expect(await b.lease.acquire("1", B, LEASE_TTL_MS)).toEqual({ ok: true, tookOver: true });
    expect(await a.lease.renew("1", "a")).toBe(false);
  });

  it("txOn: the store's operations inside a transaction someone else opened commit or roll back with it", async () => {
    const url = await freshDatabase();
    const s = await open(url);
    if (!isPostgresStore(s)) throw new Error("not the PostgreSQL store");
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const q: Query = (text, values) => c.query(text, values) as ReturnType<Query>;
    try {
      await c.query("BEGIN");
      await s.txOn(q).append([label("i1", 1)]);
      await c.query("ROLLBACK");
      expect(await s.events()).toEqual([]);
      await c.query("BEGIN");
      await s.txOn(q).append([label("i1", 2)]);
      await c.query("COMMIT");
      expect((await s.events()).map((e) => (e.type === "LabelChanged" ? e.labels[0] : ""))).toEqual(["l2"]);
    } finally {
      await c.end();
    }
  });

  it("a database whose dissent schema is newer than this dissent is refused in one line", async () => {
    const url = await freshDatabase();
    await (await open(url)).close();
    await sql(url, `UPDATE ${PG_SCHEMA}.meta SET value = '99' WHERE key = 'schema_version'`);
    const err = await openPostgresStore(url).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(StoreError.isInstance(err)).toBe(true);
    expect((err as Error).message).toMatch(/newer than this dissent knows/);
  });

  it("a server that is not there, or a database that does not exist: a StoreError naming host, port and database, never the password; exit 1", async () => {
    const port = await closedPort();
    const down = await openPostgresStore(`postgres://dissent:s3cret-pw@127.0.0.1:${port}/factory`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(StoreError.isInstance(down), String(down)).toBe(true);
    expect((down as Error).message).toMatch(new RegExp(`^cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}/factory \\(ECONNREFUSED\\)`));
    expect((down as Error).message).not.toContain("s3cret-pw");
    expect((down as Error).message).not.toContain("\n");
    expect(exitCodeOf(down)).toBe(1);

    const url = new URL(await freshDatabase());
    url.pathname = "/no_such_db";
    const missing = await openPostgresStore(url.toString()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((missing as Error).message).toMatch(/has no such database \(3D000\)/);
    expect(describeUrl("postgres://u:pw@db.example:6543/prod")).toBe("db.example:6543/prod");
    expect(describeUrl("not a url")).not.toContain("not a url");
  });
});
