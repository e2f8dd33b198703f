/**
 * The factory's implement rounds under faults (docs/implement.md#resuming, docs/factory.md): a worker
 * killed with `kill -9` in the middle of an agent attempt is taken over by the next worker, which
 * resumes at that attempt; a round whose review's model provider is down is recorded as a failed
 * round (ImplementFailed, with when it is tried again) and retried — without running the agent of
 * the attempt already recorded again.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { IMPLEMENT_ROLES } from "../../src/implement/roles.js";
import type { CliResult } from "../support/cli.js";
import { factoryLines } from "../support/factory-world.js";
import { agentProcesses, gitIn, implementWorld, type ImplementWorld } from "../support/implement-world.js";
import { type Started, startDissent, stopAll, until } from "../support/proc.js";

vi.setConfig({ testTimeout: 240_000 });

interface EventJson {
  type: string;
  attempt?: number;
  final?: boolean;
  retry_at?: string | null;
  error?: string;
}

let w: ImplementWorld | undefined;
const started: Started[] = [];
afterEach(async () => {
  await stopAll(started); // a failed assertion leaves workers (and their waiting agents) running
  await w?.close();
  w = undefined;
});

const agentRuns = (world: ImplementWorld) =>
  existsSync(world.agentLog)
    ? readFileSync(world.agentLog, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("attempt "))
        .map((l) => l.split(" ").slice(0, 2).join(" "))
    : [];
async function eventsOf(world: ImplementWorld, id: string): Promise<EventJson[]> {
  return (await world.run(["events", "--issue", id, "--json"])).stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EventJson);
}
async function labelsOf(world: ImplementWorld, id: string): Promise<string[]> {
  return (JSON.parse((await world.run(["issue", "show", id, "--json"])).stdout) as { labels: string[] }).labels;
}
function factory(world: ImplementWorld, host: string, mode: string) {
  const x = startDissent(["factory", "--json"], {
    cwd: world.dir,
    env: { DISSENT_HOME: world.home, AGENT_MODE: mode, AGENT_LOG: world.agentLog, DISSENT_WORKER_HOST: host },
  });
  started.push(x);
  return x;
}
async function eventually(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not in time`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("the factory's implement rounds under faults", () => {
  it("a worker killed with kill -9 in the middle of attempt 2: the next worker resumes the round at attempt 2, attempt 1 is not run again", async () => {
    w = await implementWorld({ mode: "pause-second", extra: "factory: { implement: true, poll_interval_s: 0.3 }" });
    const world = w;
    const id = await world.readyIssue();
    const first = factory(world, "worker-a", "pause-second");
    await until(() => existsSync(world.agentLog) && /paused \d+/.test(readFileSync(world.agentLog, "utf8")), 120_000);
    first.child.kill("SIGKILL");
    await first.done;
    // bubblewrap's --die-with-parent: the agent went with its worker (implement-orphans.test.ts: unsandboxed, the takeover stops it).
    await until(() => agentProcesses(world.agentLog).length === 0, 15_000);
    expect(await labelsOf(world, id)).toContain("dissent-implementing");
    writeFileSync(`${world.agentLog}.release`, "");

    // Same host name, new process: the dead worker's lease is taken over at once (its pid is gone).
    const second = factory(world, "worker-a", "pause-second");
    await eventually(async () => (await labelsOf(world, id)).includes("dissent-review"), 180_000, "the issue in review");
    second.child.kill("SIGTERM");
    const r: CliResult = await second.done;
    expect(r.code, r.stderr).toBe(143);
    const lines = factoryLines(r.stdout);
    expect(lines.filter((l) => l.event === "implemented")).toEqual([expect.objectContaining({ issue: id, status: "review", attempts: 2 })]);
    expect(agentRuns(world)).toEqual(["attempt 1", "attempt 2", "attempt 2"]);
    const log = await eventsOf(world, id);
    expect(log.filter((e) => e.type === "ImplementAttempt").map((e) => e.attempt)).toEqual([1, 2]);
    expect(log.filter((e) => e.type === "ImplementAttemptStarted").map((e) => e.attempt)).toEqual([1, 2, 2]);
    expect(gitIn(world.repo, "show", `dissent/issue-${id}:src/sum.js`)).toContain("return a + b;");
  });

  it("the review's provider down: the round fails with ImplementFailed and a retry time; once it is back, the retry implements the issue without running the recorded attempt's agent again", async () => {
    const down: string[] = [];
    w = await implementWorld({ mode: "good", down, extra: "factory: { implement: true, poll_interval_s: 2, max_attempts: 5 }" });
    const world = w;
    const id = await world.readyIssue();
    down.push(...IMPLEMENT_ROLES);
    const x = factory(world, "worker-a", "good");
    await eventually(async () => (await eventsOf(world, id)).some((e) => e.type === "ImplementFailed"), 120_000, "a failed round");
    down.length = 0;
    await eventually(async () => (await labelsOf(world, id)).includes("dissent-review"), 120_000, "the issue in review");
    x.child.kill("SIGTERM");
    const r: CliResult = await x.done;
    expect(r.code, r.stderr).toBe(143);

    const lines = factoryLines(r.stdout);
    const failed = lines.filter((l) => l.event === "failed");
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed[0]).toMatchObject({ issue: id, attempt: 1 });
    expect(typeof failed[0]?.retry_at).toBe("string");
    expect(lines.filter((l) => l.event === "implemented")).toEqual([expect.objectContaining({ issue: id, status: "review", attempts: 1 })]);
    const log = await eventsOf(world, id);
    const recorded = log.filter((e) => e.type === "ImplementFailed");
    expect(recorded[0]).toMatchObject({ final: false, attempt: 1 });
    expect(recorded[0]?.retry_at).toEqual(expect.any(String));
    expect(recorded[0]?.error).toMatch(/^every critic of the review failed in round 1 \(last: .*unavailable\), so attempt 1 of issue \d+ was never reviewed/);
    // The agent ran once: the retry replayed attempt 1 from its commit.
    expect(agentRuns(world)).toEqual(["attempt 1"]);
    expect(log.filter((e) => e.type === "ImplementAttempt")).toHaveLength(1);
  });
});
