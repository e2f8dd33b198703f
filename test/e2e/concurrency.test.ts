/**
 * Issue #9 defects 1–3, as a user meets them: several dissent processes on one home at once, and a
 * planner killed with -9 at seeded random points. Real processes, a real SQLite file, a model server on 127.0.0.1.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { canonicalJson } from "../../src/hash.js";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { dissent, scratch, type CliResult } from "../support/cli.js";
import { mulberry32 } from "../support/double/prng.js";
import { startOpenAIServer, type ChatRequest, type FakeOpenAI, type Reply } from "../support/openai-server.js";
import { startDissent, until } from "../support/proc.js";
import { agreeableReply, rolesConfig } from "../support/roles-config.js";

vi.setConfig({ testTimeout: 180_000 });

/**
 * Kill -9 points are drawn by a seeded PRNG (mulberry32): the seed is in the test's name and in every
 * assertion message, so a failure replays exactly; DISSENT_KILL_SEED=<n> draws another set.
 */
const SEED = process.env.DISSENT_KILL_SEED !== undefined ? Number(process.env.DISSENT_KILL_SEED) >>> 0 : 0x5eed0009;
const KILLS = 5;

interface World {
  dir: string;
  server: FakeOpenAI;
  run(args: string[]): Promise<CliResult>;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function world(answer: (req: ChatRequest) => Reply | Promise<Reply>, extra = ""): Promise<World> {
  const s = scratch("dissent-conc-");
  const server = await startOpenAIServer(answer);
  s.write("dissent.config.yaml", rolesConfig(server.url, extra));
  const w: World = {
    dir: s.dir,
    server,
    run: (args) => dissent(args, { cwd: s.dir, env: { DISSENT_HOME: `${s.dir}/home` }, timeoutMs: 150_000 }),
    close: async () => {
      await server.close();
      s.cleanup();
    },
  };
  cleanups.push(w.close);
  return w;
}

const events = async (w: World, id: string) =>
  (await w.run(["events", "--issue", id, "--json"])).stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; cached?: boolean; stage?: string; cycle?: number });

describe("parallel processes on one home (issue #9 defect 2)", () => {
  it("50 parallel `issue new` all succeed, with 50 distinct ids", async () => {
    const w = await world((req) => ({ content: agreeableReply(req.body.model) }));
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => w.run(["issue", "new", "--title", `Issue number ${i}`])));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect(new Set(results.map((r) => r.stdout.trim())).size).toBe(50);
    const list = JSON.parse((await w.run(["issue", "list", "--json"])).stdout) as { id: string }[];
    expect(list).toHaveLength(50);
  });

  it("8 parallel plans on 8 issues all succeed", async () => {
    const w = await world(async (req) => ({ content: agreeableReply(req.body.model), delayMs: 20 }));
    for (let i = 0; i < 8; i++) await w.run(["issue", "new", "--title", `Add retries number ${i}`, "--label", "dissent-load-bearing"]);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => w.run(["issue", "plan", String(i + 1), "--json"])));
    for (const r of results) {
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { status: string }).status).toBe("ready");
    }
  });
});

describe("one planner per issue (issue #9 defect 1, docs/issue.md lease)", () => {
  it("4 parallel plans on one issue: exactly one plans; the others exit 1 naming the holder; the budget is never crossed", async () => {
    // Slow enough that the winner still holds the lease while the others start.
    const w = await world(async (req) => ({ content: agreeableReply(req.body.model), delayMs: 250 }));
    await w.run(["issue", "new", "--title", "Add retries to the client", "--label", "dissent-load-bearing"]);
    const results = await Promise.all(Array.from({ length: 4 }, () => w.run(["issue", "plan", "1", "--json"])));
    const won = results.filter((r) => r.code === 0);
    const lost = results.filter((r) => r.code !== 0);
    expect(won).toHaveLength(1);
    for (const r of lost) {
      expect(r.code).toBe(1);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^dissent: error: issue 1 is being planned by another dissent \(host \S+, pid \d+, since \S+\)/);
    }
    // Every request belongs to the one planning run: the budget (30) is never crossed, each stage completed once.
    expect(w.server.requests.length).toBeLessThanOrEqual(30);
    const completed = (await events(w, "1")).filter((e) => e.type === "AdversarialStageCompleted");
    expect(completed.map((e) => e.stage)).toEqual(["discovery_council", "shape_council", "plan_council", "spec_judge"]);
  });
});

/** A council that blocks once in the plan stage, so a kill can land in a retry round. */
function retryingCouncil(req: ChatRequest): Reply {
  const role = req.body.model;
  const text = req.body.messages.map((m) => m.content).join("\n");
  if (role === "planner") {
    const retry = req.body.messages.some((m) => m.role === "assistant");
    return {
      content: retry ? "# Plan v2\n\nStep one retries 503s and a test covers the retry path." : "# Plan v1\n\nStep one retries 503s with no test at all.",
    };
  }
  if (role === "plan.tester" || role === "plan.risk_skeptic") {
    const plan = readDataBlocks(text).find((b) => b.kind === "under_review")?.text ?? "";
    if (plan.includes("Plan v1"))
      return {
        content: JSON.stringify({
          findings: [
            {
              evidence: "Step one retries 503s with no test at all.",
              severity: "CRITICAL",
              concern: `${role} says the retry path is untested`,
              category: "test_gap",
            },
          ],
        }),
      };
  }
  return { content: agreeableReply(role) };
}

/**
 * Kill points (a kill lands once the server has seen that many requests), drawn from `seed`: one in
 * each of KILLS − 1 equal bands of 1..total−1 (the last request is left out: a kill there may come
 * after the run has ended), and one in `retryRound` (1-based, inclusive), never twice the same.
 */
function killPoints(seed: number, total: number, retryRound: [number, number]): number[] {
  const rng = mulberry32(seed);
  const span = total - 1;
  const bands = KILLS - 1;
  const points: number[] = [];
  for (let b = 0; b < bands; b++) {
    const lo = 1 + Math.floor((b * span) / bands);
    const hi = Math.floor(((b + 1) * span) / bands);
    points.push(lo + rng.int(hi - lo + 1));
  }
  const [from, to] = retryRound;
  const free = Array.from({ length: to - from + 1 }, (_, i) => from + i).filter((k) => !points.includes(k));
  points.push(free.length > 0 ? rng.pick(free) : from);
  return points.sort((a, b) => a - b);
}

describe("kill -9 at random points, then resume (issue #9 defect 3)", () => {
  it(`kill -9 at ${KILLS} points drawn by seed ${SEED} (early to late, one in the retry round): a resumed cycle sends byte-identical requests to an uninterrupted one, and every budget unit spent has its ModelCall event`, async () => {
    // The reference: one uninterrupted plan.
    const ref = await world((req) => retryingCouncil(req));
    await ref.run(["issue", "new", "--title", "Add retries to the client", "--label", "dissent-load-bearing"]);
    const planned = await ref.run(["issue", "plan", "1", "--json"]);
    expect(planned.code, planned.stderr).toBe(0);
    const key = (r: ChatRequest) => canonicalJson({ model: r.body.model, messages: r.body.messages });
    const expected = new Set(ref.server.requests.map(key));

    // Where the reference's plan stage retried: from the planner's revision to the last plan-stage request before the spec stage.
    const models = ref.server.requests.map((r) => r.body.model);
    const retryStart = ref.server.requests.findIndex((r) => r.body.model === "planner" && r.body.messages.some((m) => m.role === "assistant"));
    expect(retryStart, `seed ${SEED}: the reference plan stage never retried: ${models.join(", ")}`).toBeGreaterThan(0);
    const specStart = models.findIndex((m, i) => i > retryStart && m.startsWith("spec."));
    expect(specStart, `seed ${SEED}: the reference never reached the spec stage after its retry: ${models.join(", ")}`).toBeGreaterThan(retryStart);
    const total = ref.server.requests.length;
    const points = killPoints(SEED, total, [retryStart + 1, specStart]);
    const at = (k: number) => `seed ${SEED}, kill points [${points.join(", ")}] of ${total} requests, killed after ${k}`;
    expect(new Set(points).size, at(0)).toBe(KILLS);

    for (const killAfter of points) {
      const w = await world(async (req) => ({ ...retryingCouncil(req), delayMs: 40 }));
      await w.run(["issue", "new", "--title", "Add retries to the client", "--label", "dissent-load-bearing"]);
      const { child, done } = startDissent(["issue", "plan", "1"], { cwd: w.dir, env: { DISSENT_HOME: `${w.dir}/home` } });
      await until(() => w.server.requests.length >= killAfter, 60_000);
      child.kill("SIGKILL");
      // The kill landed mid-run: the planner had not finished on its own.
      expect((await done).signal, `${at(killAfter)}: the planner was not killed`).toBe("SIGKILL");
      const resumed = await w.run(["issue", "plan", "1", "--json"]);
      expect(resumed.code, `${at(killAfter)}: ${resumed.stderr}`).toBe(0);
      const sent = new Set(w.server.requests.map(key));
      for (const k of sent) expect(expected.has(k), `${at(killAfter)}: a request the uninterrupted run never sent`).toBe(true);
      expect(sent.size, at(killAfter)).toBe(expected.size);
      // The store's budget count is its network ModelCall events: nothing spent goes unrecorded.
      const show = JSON.parse((await w.run(["issue", "show", "1", "--json"])).stdout) as { calls: number };
      const network = (await events(w, "1")).filter((e) => e.type === "ModelCall" && e.cached === false).length;
      expect(show.calls, at(killAfter)).toBe(network);
      expect(network, at(killAfter)).toBeLessThanOrEqual(w.server.requests.length);
    }
  });
});
