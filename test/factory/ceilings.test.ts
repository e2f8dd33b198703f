/**
 * The factory honours the ceilings of an issue's life (docs/issue.md): an issue past
 * `budget.max_cycles_per_issue` or `budget.max_calls_per_issue` is recorded once (IssuePlanFailed
 * naming the setting), said in one line, and not retried — by this process or the next — until the
 * setting is raised.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { factoryLines, factoryWorld, type FactoryWorld } from "../support/factory-world.js";

vi.setConfig({ testTimeout: 180_000 });

let w: FactoryWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

/** A planned issue a person sent back to the factory (its state label → find). */
async function sentBack(world: FactoryWorld, state = "dissent-ready"): Promise<string> {
  const id = await world.newIssue("Retry failed uploads");
  const first = await world.run(["factory", "--once", "--json"]);
  expect(first.code, first.stderr).toBe(0);
  const relabel = await world.run(["issue", "label", id, "--remove", state, "--add", "dissent-find"]);
  expect(relabel.code, relabel.stderr).toBe(0);
  return id;
}

describe("dissent factory and the ceilings of an issue's life", () => {
  it("past budget.max_cycles_per_issue: one IssuePlanFailed naming the setting, one line, exit 1 — and the next factory does not try again", async () => {
    w = await factoryWorld(undefined, { extra: "budget: { max_cycles_per_issue: 1 }" });
    const id = await sentBack(w);
    const before = w.server.requests.length;

    const r = await w.run(["factory", "--once", "--json"]);
    expect(r.code).toBe(1);
    const lines = factoryLines(r.stdout).filter((l) => l.issue === id);
    expect(lines).toEqual([
      expect.objectContaining({ event: "started", cycle: 2 }),
      expect.objectContaining({ event: "ceiling", cycle: 2, setting: "budget.max_cycles_per_issue", error: expect.stringContaining("raise it") }),
    ]);
    const failed = (await w.events(id)).filter((e) => e.type === "IssuePlanFailed");
    expect(failed).toEqual([expect.objectContaining({ cycle: 2, ceiling: { setting: "budget.max_cycles_per_issue", max: 1 }, retry_at: null })]);
    expect(w.server.requests.length).toBe(before);

    // A new process says it once more, and plans nothing.
    const again = await w.run(["factory", "--once"]);
    expect(again.code).toBe(1);
    expect(again.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(
        new RegExp(`#${id} not planned: .*budget\\.max_cycles_per_issue \\(1\\).* · not retried until budget\\.max_cycles_per_issue is raised$`),
      ),
    ]);
    expect((await w.events(id)).filter((e) => e.type === "IssuePlanFailed")).toHaveLength(1);
    expect(w.server.requests.length).toBe(before);
  });

  it("past budget.max_calls_per_issue over its cycles: the replan that cannot finish is recorded once and not retried", async () => {
    // The first cycle (19 calls) ends needs_replan: the reviewer rejects the plan once.
    const reject = JSON.stringify({
      findings: [{ evidence: "Artifact written by planner", severity: "HIGH", dimension: "correctness", concern: "Retries duplicate uploads" }],
    });
    w = await factoryWorld((model, n) => (model === "plan_reviewer" && n === 0 ? { content: reject } : undefined), {
      extra: "budget: { max_calls_per_issue: 20 }",
    });
    // Sent back, the replan's planner has the reviewer's finding: new requests, more calls than the one left.
    const id = await sentBack(w, "dissent-plan");
    const r = await w.run(["factory", "--once", "--json"]);
    expect(r.code).toBe(1);
    const line = factoryLines(r.stdout).find((l) => l.issue === id && l.event === "ceiling");
    expect(line).toMatchObject({ setting: "budget.max_calls_per_issue" });
    const network = (await w.events(id)).filter((e) => e.type === "ModelCall" && e.cached === false);
    expect(network.length).toBeLessThanOrEqual(20);
    const again = await w.run(["factory", "--once", "--json"]);
    expect(
      factoryLines(again.stdout)
        .filter((l) => l.issue === id)
        .map((l) => l.event),
    ).toEqual(["ceiling"]);
    expect((await w.events(id)).filter((e) => e.type === "IssuePlanFailed")).toHaveLength(1);
  });
});
