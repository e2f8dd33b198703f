/**
 * The issue's ceilings hold for the implement phase (docs/implement.md#budget-and-ceilings), through
 * the built CLI: agent attempts and the agent's wall time over the issue's whole life
 * (`implement.max_attempts_per_issue`, `implement.max_agent_ms_per_issue` — a hanging agent's
 * time counts), and the review's model calls against `budget.max_calls_per_issue` with the planning
 * cycles' calls.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BudgetExceeded, createDissent } from "../../src/index.js";
import { implementWorld, type ImplementWorld } from "../support/implement-world.js";

vi.setConfig({ testTimeout: 240_000 });

interface ImplementJson {
  status: "review" | "hitl";
  attempts: { attempt: number; outcome: string; test_exit_code: number | null }[];
  stage: { outcome: string };
  labels: string[];
}

const worlds: ImplementWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});
async function world(mode: string, o: { implement?: string; attemptTimeoutMs?: number } = {}) {
  const w = await implementWorld({ mode, ...o });
  worlds.push(w);
  return w;
}
const agentRuns = (w: ImplementWorld) =>
  existsSync(w.agentLog)
    ? readFileSync(w.agentLog, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("attempt "))
    : [];
const errorLines = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("dissent: error:"));
async function labelsOf(w: ImplementWorld, id: string): Promise<string[]> {
  return (JSON.parse((await w.run(["issue", "show", id, "--json"])).stdout) as { labels: string[] }).labels;
}

describe("issue implement within the issue's ceilings", () => {
  it("implement.max_attempts_per_issue: the retry the failing tests ask for is not started; the review goes out with the failure, and a later run exits 1 naming the setting without running the agent", async () => {
    const w = await world("bug-then-fix", { implement: "  max_attempts_per_issue: 1" });
    const id = await w.readyIssue();
    const first = await w.run(["issue", "implement", id, "--json"]);
    expect(first.code, first.stderr).toBe(0);
    const out = JSON.parse(first.stdout) as ImplementJson;
    expect(out.attempts.map((a) => [a.attempt, a.test_exit_code])).toEqual([[1, 1]]);
    expect(out.stage.outcome).toBe("budget");
    expect(out.status).toBe("hitl"); // the failing tests are a CRITICAL left
    expect(agentRuns(w)).toHaveLength(1);

    const again = await w.run(["issue", "implement", id]);
    expect(again.code).toBe(1);
    expect(errorLines(again.stderr)).toHaveLength(1);
    expect(errorLines(again.stderr)[0]).toMatch(/1 agent attempts.*implement\.max_attempts_per_issue \(1\).*raise it/);
    expect(agentRuns(w)).toHaveLength(1);
  });

  it("implement.max_agent_ms_per_issue: a hanging agent's time counts — once it is spent, no further attempt starts, and a later run exits 1 naming the setting", async () => {
    const w = await world("hang", { attemptTimeoutMs: 1_500, implement: "  max_agent_ms_per_issue: 1000" });
    const id = await w.readyIssue();
    const first = await w.run(["issue", "implement", id, "--json"]);
    expect(first.code, first.stderr).toBe(0);
    const out = JSON.parse(first.stdout) as ImplementJson;
    expect(out.attempts.map((a) => a.outcome)).toEqual(["timed_out"]);
    expect(out.stage.outcome).toBe("budget");
    expect(agentRuns(w)).toHaveLength(1);

    const again = await w.run(["issue", "implement", id]);
    expect(again.code).toBe(1);
    expect(errorLines(again.stderr)).toHaveLength(1);
    expect(errorLines(again.stderr)[0]).toMatch(/implement\.max_agent_ms_per_issue \(1 s\).*raise it/);
    expect(agentRuns(w)).toHaveLength(1);
  });

  it("budget.max_calls_per_issue: the review's calls count with the plan's — with too few left for a review, no attempt starts, the issue stays dissent-ready, exit 1 naming the setting", async () => {
    const w = await world("good");
    const id = await w.readyIssue();
    const planned = JSON.parse((await w.run(["issue", "show", id, "--json"])).stdout) as { calls: number };
    expect(planned.calls).toBeGreaterThan(0);
    // Room for three more calls: a review needs the four critics and a second opinion.
    const config = join(w.dir, "dissent.config.yaml");
    writeFileSync(config, `${readFileSync(config, "utf8")}\nbudget: { max_calls_per_issue: ${planned.calls + 3} }\n`);
    const r = await w.run(["issue", "implement", id]);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toHaveLength(1);
    expect(errorLines(r.stderr)[0]).toMatch(/budget\.max_calls_per_issue/);
    expect(agentRuns(w)).toHaveLength(0);
    expect(await labelsOf(w, id)).toContain("dissent-ready");
    expect(await labelsOf(w, id)).not.toContain("dissent-implementing");

    // Raised: the same issue is implemented, and its review's calls are added to the plan's.
    writeFileSync(config, readFileSync(config, "utf8").replace(/max_calls_per_issue: \d+/, `max_calls_per_issue: ${planned.calls + 40}`));
    const done = await w.run(["issue", "implement", id, "--json"]);
    expect(done.code, done.stderr).toBe(0);
    expect((JSON.parse(done.stdout) as ImplementJson).status).toBe("review");
    const after = JSON.parse((await w.run(["issue", "show", id, "--json"])).stdout) as { calls: number };
    expect(after.calls).toBeGreaterThanOrEqual(planned.calls + 4);
  });

  it("budget.max_usd_per_issue: the plan's dollars count — an issue whose life has spent its dollars gets no attempt, exit 1 naming the setting", async () => {
    const w = await world("good");
    // Priced like a mid-range hosted model (USD per million tokens), so every call has dollars.
    const config = join(w.dir, "dissent.config.yaml");
    writeFileSync(
      config,
      readFileSync(config, "utf8").replace(/base_url: "([^"]+)" \}/, 'base_url: "$1", prices: { input_per_mtok: 3, output_per_mtok: 15 } }'),
    );
    const id = await w.readyIssue();
    const planned = JSON.parse((await w.run(["issue", "show", id, "--json"])).stdout) as { cost_usd: number | null };
    expect(planned.cost_usd).toBeGreaterThan(0);
    writeFileSync(config, `${readFileSync(config, "utf8")}\nbudget: { max_usd_per_issue: ${((planned.cost_usd ?? 0) * 0.99).toFixed(8)} }\n`);
    const r = await w.run(["issue", "implement", id]);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toHaveLength(1);
    expect(errorLines(r.stderr)[0]).toMatch(/budget\.max_usd_per_issue/);
    expect(agentRuns(w)).toHaveLength(0);
    expect(await labelsOf(w, id)).toContain("dissent-ready");
  });

  it("a library caller is told each agent ceiling in its own unit: the agent's time in ms, its attempts in attempts", async () => {
    const w = await world("hang", { attemptTimeoutMs: 1_500, implement: "  max_agent_ms_per_issue: 1000\n  max_attempts_per_issue: 2" });
    const id = await w.readyIssue();
    expect((await w.run(["issue", "implement", id])).code).toBe(0); // one attempt, timed out: its 1.5 s spend the agent's time
    const config = join(w.dir, "dissent.config.yaml");
    const refusal = async () => {
      const d = createDissent({ config, env: { DISSENT_HOME: w.home, PATH: process.env.PATH }, cwd: w.dir });
      try {
        return await d.implementIssue(id).then(
          () => undefined,
          (e: unknown) => e,
        );
      } finally {
        await d.close();
      }
    };
    const time = await refusal();
    expect(BudgetExceeded.isInstance(time)).toBe(true);
    expect(time).toMatchObject({ unit: "ms", max: 1000, setting: "implement.max_agent_ms_per_issue" });
    expect((time as BudgetExceeded).used).toBeGreaterThanOrEqual(1000);

    writeFileSync(
      config,
      readFileSync(config, "utf8")
        .replace("max_agent_ms_per_issue: 1000", "max_agent_ms_per_issue: 600000")
        .replace("max_attempts_per_issue: 2", "max_attempts_per_issue: 1"),
    );
    expect(await refusal()).toMatchObject({ name: "BudgetExceeded", unit: "attempts", max: 1, used: 1, setting: "implement.max_attempts_per_issue" });
    expect(agentRuns(w)).toHaveLength(1);
  });
});
