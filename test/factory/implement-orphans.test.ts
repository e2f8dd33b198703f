/**
 * Issue 32: after `kill -9` of a factory worker on PostgreSQL in the middle of an agent attempt, the
 * worker that takes the issue over (another host name, the same machine) never runs a second agent
 * beside the orphan: under bubblewrap the orphan died with its worker; unsandboxed, the takeover
 * stops it — its process group and mark are on the record — before its own attempt starts. With
 * `implement.max_concurrency: 1` there is never more than one agent. The hostile survivor
 * (test/fixtures/agents/hostile-survivor.sh) ignores SIGTERM and ticks until it is killed.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { factoryLines } from "../support/factory-world.js";
import { agentProcesses, HOSTILE_AGENT, implementWorld, type ImplementWorld } from "../support/implement-world.js";
import { freshDatabase } from "../support/postgres.js";
import { type Started, startDissent, stopAll, until } from "../support/proc.js";

vi.setConfig({ testTimeout: 300_000 });

let w: ImplementWorld | undefined;
const started: Started[] = [];
afterEach(async () => {
  await stopAll(started);
  await w?.close();
  w = undefined;
});

describe.each(["bubblewrap", "none"] as const)("a factory worker killed with -9 mid-attempt, implement.sandbox: %s", (sandbox) => {
  it("PostgreSQL, two workers, max_concurrency 1: the orphaned agent is gone before the takeover's attempt; never two agents", async () => {
    const url = await freshDatabase();
    w = await implementWorld({
      mode: "unused",
      command: `sh ${HOSTILE_AGENT}`,
      sandbox,
      implement: "  max_concurrency: 1",
      extra: "store: { type: postgres }\nfactory: { implement: true, poll_interval_s: 0.3 }",
      env: { DISSENT_DATABASE_URL: url, HOSTILE: "survivor" },
    });
    const world = w;
    const id = await world.readyIssue();
    const ticks = `${world.agentLog}.ticks-${id}`;
    const env = {
      DISSENT_HOME: world.home,
      DISSENT_DATABASE_URL: url,
      HOSTILE: "survivor",
      AGENT_LOG: world.agentLog,
      DISSENT_LEASE_TTL_MS: "3000",
      DISSENT_LEASE_RENEW_MS: "1000",
    };
    const a = startDissent(["factory", "--json"], { cwd: world.dir, env: { ...env, DISSENT_WORKER_HOST: "worker-a" } });
    started.push(a);
    await until(() => existsSync(ticks) && readFileSync(ticks, "utf8").includes("tick"), 120_000);
    const b = startDissent(["factory", "--json"], { cwd: world.dir, env: { ...env, DISSENT_WORKER_HOST: "worker-b" } });
    started.push(b);
    a.child.kill("SIGKILL");
    await a.done;
    if (sandbox === "bubblewrap") await until(() => agentProcesses(world.agentLog).length === 0, 15_000);
    else {
      const seen = readFileSync(ticks, "utf8").length;
      await until(() => readFileSync(ticks, "utf8").length > seen, 15_000); // the orphan goes on
    }
    writeFileSync(`${world.agentLog}.release-${id}`, "");
    // worker-b takes the issue and the agent slot once worker-a's leases have expired.
    await until(() => readFileSync(ticks, "utf8").includes("start "), 120_000);
    const lines = readFileSync(ticks, "utf8").trim().split("\n");
    const start = lines.findIndex((l) => l.startsWith("start "));
    expect(lines.slice(start + 1).filter((l) => l.startsWith("tick "))).toEqual([]);
    const labels = async () => (JSON.parse((await world.run(["issue", "show", id, "--json"])).stdout) as { labels: string[] }).labels;
    for (const end = Date.now() + 180_000; !(await labels()).includes("dissent-review"); ) {
      if (Date.now() > end) throw new Error(`issue ${id} never reached dissent-review: ${(await labels()).join(", ")}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    b.child.kill("SIGTERM");
    const r = await b.done;
    expect(r.code, r.stderr).toBe(143);
    expect(factoryLines(r.stdout).filter((l) => l.event === "implemented")).toEqual([expect.objectContaining({ issue: id, status: "review" })]);
    const events = (await world.run(["events", "--issue", id, "--json"])).stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; command?: string });
    expect(events.filter((e) => e.type === "ImplementProcessStarted" && e.command === "agent")).toHaveLength(2);
    expect(agentProcesses(world.agentLog)).toEqual([]);
  });
});
