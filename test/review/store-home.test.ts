import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { dissent } from "../support/cli.js";
import { byRole, errorLine, world, type World } from "../support/e2e.js";

const DRAFT = "Forty-two.";

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("DISSENT_HOME (docs/configuration.md, §6)", () => {
  it("DISSENT_HOME naming a regular file is a configuration error: exit 2, one line naming it", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    const file = w.write("not-a-dir", "x\n");
    const r = await w.run(["run", "hello"], { env: { DISSENT_HOME: file } });
    // Today: exit 1, "dissent: error: internal error: EEXIST: file already exists, mkdir '…'".
    expect(r.code).toBe(2);
    expect(errorLine(r)).toContain("not-a-dir");
    expect(w.server.requests).toHaveLength(0);
  });

  it("a run on a fresh DISSENT_HOME that another dissent process is still migrating waits for it and succeeds", async () => {
    // Two `dissent run`s started together on a new project (make -j, two terminals, a test
    // runner) race in openDb: both read user_version 0, both CREATE TABLE, and the loser dies
    // with "internal error: table cache already exists" (seen 1 in 30 with 6 parallel runs).
    // Here the other process is played by this test, holding its migration transaction open.
    w = await world(byRole({ executor: { content: DRAFT } }));
    mkdirSync(w.home, { recursive: true });
    const other = new Database(join(w.home, "dissent.db"));
    other.pragma("journal_mode = WAL");
    other.exec("BEGIN IMMEDIATE");
    for (const m of MIGRATIONS) other.exec(m);
    other.pragma(`user_version = ${MIGRATIONS.length}`);
    const child = dissent(["run", "hello"], { cwd: w.dir, env: { DISSENT_HOME: w.home } });
    // Let the child start and reach openDb while the other migration is still uncommitted
    // (well inside its 5 s busy_timeout), then commit as the other process would.
    await new Promise((r) => setTimeout(r, 1500));
    other.exec("COMMIT");
    other.close();
    const r = await child;
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
  });
});
