/**
 * Issue 20 item 1: PostgreSQL going away while the factory plans (`pg_ctl -m fast`, every connection
 * told 57P01). The factory stops with one line and exit 1 — never a Node crash of 42 lines — and,
 * once the database is back, the next factory resumes the issue and finishes it, redoing nothing.
 * A private cluster of its own (test/support/postgres.ts), since this test stops it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { STAGES } from "../../src/pipeline/stages.js";
import { factoryWorld, type FactoryWorld } from "../support/factory-world.js";
import { linesOf } from "../support/hold.js";
import { startPostgres, type PgCluster } from "../support/postgres.js";
import { until } from "../support/proc.js";

vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });

let cluster: PgCluster | undefined;
let w: FactoryWorld | undefined;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(async () => {
  await cluster?.stop();
});
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("the factory's database going away", () => {
  it("stopped mid-round with pg_ctl -m fast: one line, exit 1; restarted, the issue resumes where it stopped", async () => {
    const pg = cluster as PgCluster;
    const url = await pg.createDatabase();
    // The plan council's tester answers late the first time: the round is mid-stage, its job's connection held, when the database goes.
    w = await factoryWorld((model, n) => (model === "plan.tester" && n === 0 ? { content: '{"findings":[]}', delayMs: 60_000 } : undefined), {
      databaseUrl: url,
      extra: "factory: { poll_interval_s: 0.3 }",
    });
    const world = w;
    const id = await world.newIssue("Retry failed uploads");
    const factory = world.start(["factory", "--json"]);
    await until(() => world.requestsFor("plan.tester") >= 1, 120_000);

    await pg.pause();
    const stopped = await factory.done;
    expect(stopped.code, stopped.stderr).toBe(1);
    const lines = linesOf(stopped.stderr);
    expect(lines, stopped.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^dissent: error: .*PostgreSQL at 127\.0\.0\.1:\d+\//);
    expect(stopped.stderr).not.toMatch(/Unhandled|node:internal|\n\s+at /);

    await pg.resume();
    const resumed = await world.run(["factory", "--once", "--json"], { timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((await world.show(id)).status).toBe("ready");
    // Nothing was lost and nothing redone: every stage completed exactly once, the producers before the outage asked once.
    const completed = (await world.events(id)).filter((e) => e.type === "AdversarialStageCompleted");
    expect(completed.map((e) => `${e.stage}/${e.cycle}`)).toEqual(STAGES.map((s) => `${s.stage}/1`));
    expect(world.requestsFor("discover.brief")).toBe(1);
    expect(world.requestsFor("shape.writer")).toBe(1);
  });
});
