/**
 * Scale-out on PostgreSQL (docs/factory.md): `dissent factory` processes sharing one database — the
 * store and the pg-boss queue. Real processes, a real server, a model server on 127.0.0.1.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { STAGES } from "../../src/pipeline/stages.js";
import type { CliResult } from "../support/cli.js";
import { factoryLines, factoryWorld, type EventJson, type FactoryWorld } from "../support/factory-world.js";
import { until } from "../support/proc.js";
import { agreeableReply } from "../support/roles-config.js";

vi.setConfig({ testTimeout: 240_000 });

let w: FactoryWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

async function eventually(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 250));
  }
}

const MAX_CALLS = 24;

describe("dissent factory on PostgreSQL", () => {
  it("--once plans every dissent-find issue and exits 0; the CLI reads the plans back from the database", async () => {
    w = await factoryWorld(undefined, { postgres: true });
    const ids = [await w.newIssue("Retry failed uploads"), await w.newIssue("Add an audit log")];
    const r = await w.run(["factory", "--once", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(
      factoryLines(r.stdout)
        .filter((l) => l.event === "finished")
        .map((l) => l.issue)
        .sort(),
    ).toEqual([...ids].sort());
    for (const id of ids) expect((await w.show(id)).status).toBe("ready");
  });

  it("two workers plan 20 issues: none planned twice (one cycle each, one AdversarialStageCompleted per stage), no budget crossed", async () => {
    // A little latency, varied by model, so the two workers' rounds interleave.
    w = await factoryWorld((model, n) => ({ content: agreeableReply(model), delayMs: (model.length + n) % 7 }), {
      postgres: true,
      extra: `factory: { poll_interval_s: 0.3 }\nbudget: { max_calls_per_issue: ${MAX_CALLS} }`,
    });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await w.newIssue(`Issue number ${i + 1}: retry uploads on path ${i}`));
    const workers = [w.start(["factory", "--json", "--concurrency", "4"]), w.start(["factory", "--json", "--concurrency", "4"])];
    await eventually(async () => {
      const list = JSON.parse((await (w as FactoryWorld).run(["issue", "list", "--json"])).stdout) as { status: string }[];
      return list.filter((i) => i.status === "ready").length === 20;
    }, 180_000);
    for (const { child } of workers) child.kill("SIGTERM");
    const results: CliResult[] = await Promise.all(workers.map((x) => x.done));
    for (const r of results) expect(r.code, r.stderr).toBe(143);

    const lines = results.flatMap((r) => factoryLines(r.stdout));
    const finished = lines.filter((l) => l.event === "finished");
    expect(finished.map((l) => l.issue).sort()).toEqual([...ids].sort()); // each issue finished once, by one worker or the other
    expect(lines.filter((l) => l.event === "failed")).toEqual([]);

    const events = await w.events();
    for (const id of ids) {
      const mine = events.filter((e) => e.issue_id === id);
      const completed = mine.filter((e) => e.type === "AdversarialStageCompleted");
      expect(completed.map((e) => `${e.stage}/${e.cycle}`)).toEqual(STAGES.map((s) => `${s.stage}/1`));
      expect(mine.filter((e) => e.type === "ComplexityGateRouted")).toHaveLength(1);
      const show = await w.show(id);
      expect(show).toMatchObject({ status: "ready", cycle: 1 });
      expect(show.calls).toBeLessThanOrEqual(MAX_CALLS);
      expect(mine.filter((e) => e.type === "ModelCall" && e.cached === false)).toHaveLength(show.calls);
    }
    // The log's order is the order of commits: seq only grows, and every event is there once.
    const seqs = (await w.run(["events", "--json"])).stdout.trim().split("\n");
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it("kill -9 of the worker planning an issue mid-stage: the other worker finishes it within 90 s, without redoing finished stages", async () => {
    // The plan council's tester hangs the first time it is asked: the first worker is killed there.
    w = await factoryWorld((model, n) => (model === "plan.tester" && n === 0 ? { content: "{}", delayMs: 120_000 } : undefined), {
      postgres: true,
      extra: "factory: { poll_interval_s: 0.3 }",
    });
    const id = await w.newIssue("Retry failed uploads");
    // Two machines, as far as the lease can tell, with a lease that expires in seconds (production: 60 s; see settings.test.ts).
    const fast = { DISSENT_LEASE_TTL_MS: "3000", DISSENT_LEASE_RENEW_MS: "1000" };
    const a = w.start(["factory", "--json"], { env: { ...fast, DISSENT_WORKER_HOST: "worker-a" } });
    const b = w.start(["factory", "--json"], { env: { ...fast, DISSENT_WORKER_HOST: "worker-b" } });
    const outputs = new Map([a, b].map((x) => [x, ""]));
    for (const x of [a, b]) x.child.stdout?.on("data", (d: Buffer) => outputs.set(x, (outputs.get(x) ?? "") + d.toString("utf8")));
    await until(() => (w as FactoryWorld).requestsFor("plan.tester") >= 1, 120_000);
    const holder = [a, b].find((x) => /"event":"started"/.test(outputs.get(x) ?? ""));
    const other = holder === a ? b : a;
    expect(holder).toBeDefined();
    const before = await w.events(id);
    expect(before.filter((e) => e.type === "AdversarialStageCompleted").map((e) => e.stage)).toEqual(["discovery_council", "shape_council"]);

    const killedAt = Date.now();
    holder?.child.kill("SIGKILL");
    await eventually(async () => (await w?.show(id))?.status === "ready", 90_000);
    const tookOverIn = Date.now() - killedAt;
    expect(tookOverIn).toBeLessThan(90_000);

    other.child.kill("SIGTERM");
    const r = await other.done;
    await holder?.done;
    const lines = factoryLines(r.stdout).filter((l) => l.issue === id);
    expect(lines.at(-1)).toMatchObject({ event: "finished", status: "ready", cycle: 1 });

    const events: EventJson[] = await w.events(id);
    const completed = events.filter((e) => e.type === "AdversarialStageCompleted");
    expect(completed.map((e) => `${e.stage}/${e.cycle}`)).toEqual(STAGES.map((s) => `${s.stage}/1`)); // one per stage: none redone
    // Finished stages were not redone, and what the dead worker had received came from the shared cache.
    expect(w.requestsFor("discover.brief")).toBe(1);
    expect(w.requestsFor("shape.writer")).toBe(1);
    expect(w.requestsFor("planner")).toBe(1);
    expect(w.requestsFor("plan.tester")).toBe(2);
    expect((await w.show(id)).labels.filter((l) => l.endsWith("-running"))).toEqual([]);
  });
});
