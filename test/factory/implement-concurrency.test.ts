/**
 * `implement.max_concurrency` in the factory (docs/implement.md): coding agents at once, across every
 * worker sharing the store. Two worker processes, three ready issues, the scripted agent in mode
 * `slots:3` — each running agent holds a marker file and waits for the test's go (or for all three
 * markers at once: the bound broken). No timing: the test gives the first go only once `bound` agents
 * run and the factory has said every other issue waits for a slot; the agents log the most markers
 * they saw.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CliResult } from "../support/cli.js";
import { factoryLines } from "../support/factory-world.js";
import { gitIn, implementWorld, type ImplementWorld } from "../support/implement-world.js";
import { freshDatabase } from "../support/postgres.js";
import { type Started, startDissent, stopAll } from "../support/proc.js";

vi.setConfig({ testTimeout: 300_000 });

let w: ImplementWorld | undefined;
const started: Started[] = [];
afterEach(async () => {
  await stopAll(started); // a failed assertion leaves workers (and their waiting agents) running
  await w?.close();
  w = undefined;
});

const ISSUES = 3;

async function boundedFactory(bound: number, postgres: boolean): Promise<void> {
  const url = postgres ? await freshDatabase() : undefined;
  w = await implementWorld({
    mode: `slots:${ISSUES}`,
    implement: `  max_concurrency: ${bound}`,
    extra: [...(url ? ["store: { type: postgres }"] : []), "factory: { implement: true, poll_interval_s: 0.3 }"].join("\n"),
    ...(url ? { env: { DISSENT_DATABASE_URL: url } } : {}),
  });
  const world = w;
  const ids: string[] = [];
  for (let i = 0; i < ISSUES; i++) ids.push(await world.readyIssue());
  const slots = `${world.agentLog}.slots`;
  const env = {
    DISSENT_HOME: world.home,
    AGENT_MODE: `slots:${ISSUES}`,
    AGENT_LOG: world.agentLog,
    // Renewed every second; a lease (an issue's, an agent slot's) outlives a busy machine's late renewal.
    // No worker dies here: slots and issues are released, never left to expire.
    DISSENT_LEASE_TTL_MS: "20000",
    DISSENT_LEASE_RENEW_MS: "1000",
    ...(url ? { DISSENT_DATABASE_URL: url } : {}),
  };
  const workers = ["worker-a", "worker-b"].map((host) =>
    startDissent(["factory", "--json", "--concurrency", "2"], { cwd: world.dir, env: { ...env, DISSENT_WORKER_HOST: host } }),
  );
  started.push(...workers);
  // What the workers printed so far (each chunk whole lines or a part: joined per worker before parsing).
  const out = workers.map(() => [] as string[]);
  workers.forEach((x, k) => {
    x.child.stdout?.on("data", (d: Buffer) => void out[k]?.push(d.toString("utf8")));
  });
  const running = () => (existsSync(slots) ? readdirSync(slots).filter((f) => f.endsWith(".running")) : []).map((f) => f.replace(/\.running$/, ""));
  const printed = () => out.flatMap((chunks) => factoryLines(chunks.join("").replace(/[^\n]*$/, "")));
  const waiting = () =>
    new Set(
      printed()
        .filter((l) => l.event === "skipped" && /implement\.max_concurrency/.test(String(l.reason)))
        .map((l) => l.issue),
    );
  const labels = async () => JSON.parse((await world.run(["issue", "list", "--json"])).stdout) as { id: string; labels: string[] }[];

  // The first go: `bound` agents run and every other issue has been told to wait for a slot.
  let released = false;
  const end = Date.now() + 240_000;
  for (;;) {
    const now = running();
    if (now.length > bound) throw new Error(`${now.length} agents at once with implement.max_concurrency ${bound}: ${now.join(", ")}`);
    if (!released) {
      const others = ids.filter((id) => !now.includes(id));
      if (now.length === bound && others.every((id) => waiting().has(id))) released = true;
    }
    if (released) for (const id of now) if (!existsSync(join(slots, `${id}.go`))) writeFileSync(join(slots, `${id}.go`), "");
    if ((await labels()).every((i) => i.labels.includes("dissent-review"))) break;
    if (Date.now() > end) throw new Error(`not done: running ${now.join(",")}; waiting ${[...waiting()].join(",")}; ${JSON.stringify(await labels())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const { child } of workers) child.kill("SIGTERM");
  const results: CliResult[] = await Promise.all(workers.map((x) => x.done));
  for (const r of results) expect(r.code, r.stderr).toBe(143);

  // Each agent saw at most `bound` agents running (itself included); together they reached it.
  const saw = readFileSync(world.agentLog, "utf8")
    .split("\n")
    .map((l) => /^slots issue (\S+) saw (\d+)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ issue: m[1], most: Number(m[2]) }));
  expect(saw.map((s) => s.issue).sort()).toEqual([...ids].sort());
  expect(Math.max(...saw.map((s) => s.most))).toBe(bound);
  const all = results.flatMap((r) => factoryLines(r.stdout));
  expect(all.filter((l) => l.event === "failed")).toEqual([]);
  const implemented = all.filter((l) => l.event === "implemented");
  expect(implemented.map((l) => l.issue).sort()).toEqual([...ids].sort());
  for (const id of ids) expect(gitIn(world.repo, "show", `dissent/issue-${id}:src/sum.js`)).toContain("return a + b;");
}

describe("implement.max_concurrency bounds coding agents at once across the factory's workers", () => {
  it("SQLite, two workers, max_concurrency 1: one agent at a time", async () => {
    await boundedFactory(1, false);
  });
  it("SQLite, two workers, max_concurrency 2: two at once, never three", async () => {
    await boundedFactory(2, false);
  });
  it("PostgreSQL, two workers, max_concurrency 1: one agent at a time", async () => {
    await boundedFactory(1, true);
  });
  it("PostgreSQL, two workers, max_concurrency 2: two at once, never three", async () => {
    await boundedFactory(2, true);
  });
});
