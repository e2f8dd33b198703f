/**
 * The factory implements (issue 22, docs/implement.md): with `factory.implement: true`, two workers on
 * PostgreSQL plan three new issues and then implement each ready plan with the scripted coding agent —
 * the same leases and pg-boss queue, each issue planned once and implemented once.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CliResult } from "../support/cli.js";
import { factoryLines } from "../support/factory-world.js";
import { gitIn, implementWorld, type ImplementWorld } from "../support/implement-world.js";
import { freshDatabase } from "../support/postgres.js";
import { startDissent } from "../support/proc.js";

vi.setConfig({ testTimeout: 300_000 });

let w: ImplementWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

interface EventJson {
  type: string;
  issue_id: string | null;
  stage?: string;
  attempt?: number;
}

describe("dissent factory with factory.implement on PostgreSQL", () => {
  it("two workers plan, then implement, three issues: each planned once, implemented once, its review recorded and labelled dissent-review", async () => {
    const url = await freshDatabase();
    w = await implementWorld({
      mode: "good",
      extra: ["store: { type: postgres }", "factory: { implement: true, poll_interval_s: 0.3 }"].join("\n"),
      env: { DISSENT_DATABASE_URL: url },
    });
    const world = w;
    const ids: string[] = [];
    for (const title of ["Add a sum function", "Sum two numbers", "Make sum(a, b) add"]) {
      const r = await world.run(["issue", "new", "--title", title, "--body", "sum(a, b) in src/sum.js returns a + b; test.js checks it."]);
      expect(r.code, r.stderr).toBe(0);
      ids.push(r.stdout.trim());
    }
    const env = { DISSENT_HOME: world.home, DISSENT_DATABASE_URL: url, AGENT_MODE: "good", AGENT_LOG: world.agentLog };
    const workers = ["worker-a", "worker-b"].map((host) =>
      startDissent(["factory", "--json", "--concurrency", "2"], { cwd: world.dir, env: { ...env, DISSENT_WORKER_HOST: host } }),
    );
    const labelsOf = async () => JSON.parse((await world.run(["issue", "list", "--json"])).stdout) as { id: string; labels: string[] }[];
    const end = Date.now() + 240_000;
    while (!(await labelsOf()).every((i) => i.labels.includes("dissent-review"))) {
      if (Date.now() > end) throw new Error(`not every issue reached dissent-review: ${JSON.stringify(await labelsOf())}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    for (const { child } of workers) child.kill("SIGTERM");
    const results: CliResult[] = await Promise.all(workers.map((x) => x.done));
    for (const r of results) expect(r.code, r.stderr).toBe(143);

    const lines = results.flatMap((r) => factoryLines(r.stdout));
    expect(lines.filter((l) => l.event === "failed")).toEqual([]);
    expect(
      lines
        .filter((l) => l.event === "finished")
        .map((l) => l.issue)
        .sort(),
    ).toEqual([...ids].sort());
    const implemented = lines.filter((l) => l.event === "implemented");
    expect(implemented.map((l) => l.issue).sort()).toEqual([...ids].sort());
    expect(implemented.every((l) => l.status === "review" && l.attempts === 1)).toBe(true);

    const events = (await world.run(["events", "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as EventJson);
    for (const id of ids) {
      const mine = events.filter((e) => e.issue_id === id);
      expect(mine.filter((e) => e.type === "ImplementAttempt")).toHaveLength(1);
      expect(mine.filter((e) => e.type === "PullRequestOpened")).toHaveLength(1);
      expect(mine.filter((e) => e.type === "AdversarialStageCompleted" && e.stage === "implementation_review")).toHaveLength(1);
      expect(gitIn(world.repo, "show", `dissent/issue-${id}:src/sum.js`)).toContain("return a + b;");
    }
    // The agent ran once per issue.
    const runs = (await import("node:fs"))
      .readFileSync(world.agentLog, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("attempt "));
    expect(runs).toHaveLength(3);
  });
});
