import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import pg from "pg";
import { freshDatabase, startPostgres } from "../support/postgres.js";

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe("PostgreSQL test harness", () => {
  it("gives each caller its own empty database in a real server", async () => {
    const [a, b] = await Promise.all([freshDatabase(), freshDatabase()]);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/t_\w+$/);

    await withClient(a, async (c) => {
      await c.query("CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)");
      await c.query("INSERT INTO notes (body) VALUES ($1), ($2)", ["one", "two"]);
      const { rows } = await c.query<{ n: string }>("SELECT count(*) AS n FROM notes");
      expect(rows[0]?.n).toBe("2");
    });

    await withClient(b, async (c) => {
      const { rows } = await c.query<{ t: string | null }>("SELECT to_regclass('public.notes')::text AS t");
      expect(rows[0]?.t).toBeNull();
      const tables = await c.query("SELECT 1 FROM pg_tables WHERE schemaname = 'public'");
      expect(tables.rowCount).toBe(0);
      const v = await c.query<{ version: string }>("SELECT version()");
      expect(v.rows[0]?.version).toMatch(/^PostgreSQL \d+/);
    });
  });

  it("startPostgres() runs a standalone cluster and stop() removes it", async () => {
    const cluster = await startPostgres();
    try {
      expect(cluster.url).toBe(`postgres://postgres@127.0.0.1:${cluster.port}/postgres`);
      expect(existsSync(cluster.dataDir)).toBe(true);
      const url = await cluster.createDatabase("named_db");
      expect(url.endsWith("/named_db")).toBe(true);
      const { rows } = await withClient(url, (c) => c.query<{ db: string }>("SELECT current_database() AS db"));
      expect(rows[0]?.db).toBe("named_db");
    } finally {
      await cluster.stop();
    }
    expect(existsSync(cluster.dataDir)).toBe(false);
    await expect(withClient(cluster.url, (c) => c.query("SELECT 1"))).rejects.toThrow();
  });
});
