/**
 * Cost in dollars end to end (docs/serve.md): every call record and ModelCall event, every StageRun,
 * `run --json`'s run and `issue show --json`'s issue carry `cost_usd`; an unknown price is null,
 * never 0; `budget.max_usd_per_issue` stops a plan before it is crossed.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ISSUES, serveWorld, type ServeWorld } from "../serve/world.js";

vi.setConfig({ testTimeout: 120_000 });

let w: ServeWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

interface CallJson {
  role: string;
  cached: boolean;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
  stage?: string;
  type?: string;
  issue_id?: string | null;
}
const micro = (x: number) => Math.round(x * 1e6) / 1e6;
const PRICES = { in: 3, out: 15 };
const priceOf = (c: CallJson) => micro((c.input_tokens * PRICES.in + c.output_tokens * PRICES.out) / 1e6);

async function pricedWorld(priced: boolean, budget?: string): Promise<ServeWorld> {
  w = await serveWorld({
    ...(priced ? { provider: `prices: { input_per_mtok: ${PRICES.in}, output_per_mtok: ${PRICES.out} }` } : {}),
    ...(budget ? { budget } : {}),
  });
  return w;
}

async function modelCalls(world: ServeWorld, issue?: string): Promise<CallJson[]> {
  const r = await world.run(["events", "--json", ...(issue ? ["--issue", issue] : [])]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as CallJson)
    .filter((e) => e.type === "ModelCall");
}

describe("dissent run", () => {
  it("prices every call from prices:, and the run as their sum", async () => {
    const world = await pricedWorld(true);
    const r = await world.run(["run", "--audit", "--json", "How large may an upload be?"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { run: { calls: CallJson[]; cost_usd: number | null } };
    expect(out.run.calls).toHaveLength(2);
    for (const c of out.run.calls) {
      expect(c.input_tokens).toBeGreaterThan(0);
      expect(c.cost_usd).toBe(priceOf(c));
    }
    expect(out.run.cost_usd).toBe(micro(out.run.calls.reduce((a, c) => a + priceOf(c), 0)));
    const events = await modelCalls(world);
    expect(events.map((e) => e.cost_usd)).toEqual(out.run.calls.map((c) => c.cost_usd));
    // The same run again comes from the cache: free.
    const again = JSON.parse((await world.run(["run", "--audit", "--json", "How large may an upload be?"])).stdout) as {
      run: { calls: CallJson[]; cost_usd: number };
    };
    expect(again.run.calls.every((c) => c.cached && c.cost_usd === 0)).toBe(true);
    expect(again.run.cost_usd).toBe(0);
  });

  it("gives null, never 0, for a model of unknown price: on each call and on the run", async () => {
    const world = await pricedWorld(false);
    const out = JSON.parse((await world.run(["run", "--audit", "--json", "How large may an upload be?"])).stdout) as {
      run: { calls: CallJson[]; cost_usd: number | null };
    };
    expect(out.run.calls.map((c) => c.cost_usd)).toEqual([null, null]);
    expect(out.run.cost_usd).toBeNull();
    expect((await modelCalls(world)).map((e) => e.cost_usd)).toEqual([null, null]);
  });
});

describe("dissent issue plan and issue show", () => {
  it("prices each StageRun as the sum of its calls, and the issue as the sum of all its calls", async () => {
    const world = await pricedWorld(true);
    const id = await world.newIssue(ISSUES.shipped.title, ISSUES.shipped.body);
    const plan = await world.run(["issue", "plan", id, "--json"]);
    expect(plan.code, plan.stderr).toBe(0);
    const stages = (JSON.parse(plan.stdout) as { stages: { stage: string; cost_usd: number | null; calls: number }[] }).stages;
    const calls = await modelCalls(world, id);
    for (const s of stages) {
      const mine = calls.filter((c) => c.stage === s.stage && !c.cached);
      expect(mine).toHaveLength(s.calls);
      expect(s.cost_usd).toBe(micro(mine.reduce((a, c) => a + priceOf(c), 0)));
      expect(s.cost_usd).toBeGreaterThan(0);
    }
    const show = JSON.parse((await world.run(["issue", "show", id, "--json"])).stdout) as { cost_usd: number | null; calls: number };
    expect(show.calls).toBe(calls.length);
    expect(show.cost_usd).toBeCloseTo(
      calls.reduce((a, c) => a + priceOf(c), 0),
      6,
    );
  });

  it("gives null StageRun and issue dollars when the model's price is unknown", async () => {
    const world = await pricedWorld(false);
    const id = await world.newIssue(ISSUES.waiting.title, ISSUES.waiting.body);
    const plan = await world.run(["issue", "plan", id, "--json"]);
    expect(plan.code, plan.stderr).toBe(0);
    const stages = (JSON.parse(plan.stdout) as { stages: { cost_usd: number | null }[] }).stages;
    expect(stages.map((s) => s.cost_usd)).toEqual([null, null, null, null]);
    const show = JSON.parse((await world.run(["issue", "show", id, "--json"])).stdout) as { cost_usd: number | null };
    expect(show.cost_usd).toBeNull();
  });
});

describe("budget.max_usd_per_issue", () => {
  const EXPENSIVE = { in: 1_000, out: 1_000 };

  it("stops a plan before its dollars would cross the ceiling", async () => {
    // What the whole plan costs without a ceiling.
    const free = await serveWorld({ provider: `prices: { input_per_mtok: ${EXPENSIVE.in}, output_per_mtok: ${EXPENSIVE.out} }, max_tokens: 200` });
    w = free;
    const freeId = await free.newIssue(ISSUES.waiting.title, ISSUES.waiting.body);
    expect((await free.run(["issue", "plan", freeId, "--json"])).code).toBe(0);
    const full = (await modelCalls(free, freeId)).reduce((a, c) => a + (c.cost_usd ?? 0), 0);
    await free.close();

    const ceiling = Math.round(full * 0.4 * 100) / 100;
    const world = await serveWorld({
      provider: `prices: { input_per_mtok: ${EXPENSIVE.in}, output_per_mtok: ${EXPENSIVE.out} }, max_tokens: 200`,
      budget: `{ max_calls_per_issue: 60, max_usd_per_issue: ${ceiling} }`,
    });
    w = world;
    const id = await world.newIssue(ISSUES.waiting.title, ISSUES.waiting.body);
    const plan = await world.run(["issue", "plan", id, "--json"]);
    const calls = await modelCalls(world, id);
    const spent = calls.reduce((a, c) => a + (c.cost_usd ?? 0), 0);
    expect(calls.length).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(ceiling);
    expect(spent).toBeLessThan(full);
    if (plan.code === 0) {
      const out = JSON.parse(plan.stdout) as { stages: { outcome: string }[] };
      expect(out.stages.some((s) => s.outcome === "budget")).toBe(true);
    } else {
      expect(plan.code).toBe(1);
      expect(plan.stderr).toMatch(/budget/);
    }
  });

  it("is a configuration error (exit 2) when a route's model has no known price", async () => {
    const world = await pricedWorld(false, "{ max_calls_per_issue: 60, max_usd_per_issue: 5 }");
    const id = await world.newIssue(ISSUES.waiting.title, ISSUES.waiting.body);
    const plan = await world.run(["issue", "plan", id]);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(/^dissent: error: .*budget\.max_usd_per_issue is set, but the price of local:.* is unknown/);
    expect(world.server.requests).toHaveLength(0);
  });
});
