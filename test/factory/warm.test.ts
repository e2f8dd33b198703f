/**
 * The factory loads what a round needs before it takes the first one (src/factory/warm.ts, docs/factory.md
 * "What it costs"): the warm-up runs beside the first poll, no round is taken before it ends, and a
 * part that fails to load is left to the round that needs it — the factory itself carries on.
 */
import { describe, expect, it } from "vitest";
import { configFromObject } from "../../src/config/load.js";
import { runFactory } from "../../src/factory/factory.js";
import { localQueue } from "../../src/factory/local-queue.js";
import type { WorkQueue } from "../../src/factory/queue.js";
import type { Planner } from "../../src/factory/run-job.js";
import { factorySettings } from "../../src/factory/settings.js";
import { warmUp } from "../../src/factory/warm.js";
import { PIPELINE_ROLES } from "../../src/pipeline/stages.js";
import { memoryStore } from "../../src/store/sqlite.js";
import { localTracker } from "../../src/trackers/local.js";

const config = (providers: Record<string, unknown>, routes: Record<string, unknown>) => configFromObject({ providers, routes }, { env: {}, cwd: "/" });

/** A planner that must never be called: these factories find no round they could run. */
const idle: Planner = {
  planIssue: () => Promise.reject(new Error("no round should run")),
  merge: () => Promise.reject(new Error("no merge should run")),
};

describe("the factory's warm-up", () => {
  it("starts with the first poll, and the first round is taken only once it has ended", async () => {
    const store = await memoryStore();
    const tracker = localTracker(store);
    const order: string[] = [];
    let endWarm: () => void = () => undefined;
    const inner = localQueue(store);
    const queue: WorkQueue = {
      ...inner,
      async take() {
        order.push("take");
        return inner.take();
      },
    };
    const run = runFactory({
      planner: idle,
      store,
      tracker: { ...tracker, list: async () => (order.push("poll"), tracker.list()) },
      queue,
      settings: factorySettings(config({ local: { type: "openai-compatible", base_url: "http://127.0.0.1:9/v1" } }, {}), { once: true }, {}),
      line: () => undefined,
      warn: () => undefined,
      signal: new AbortController().signal,
      interrupt: () => undefined,
      // The warm-up ends on the next timer after the poll: a factory that did not wait for it would take a round before (microtasks first).
      commands: async () => void setTimeout(() => endWarm(), 0),
      warm: () => {
        order.push("warm started");
        return new Promise<void>((resolve) => {
          endWarm = () => {
            order.push("warm ended");
            resolve();
          };
        });
      },
    });
    // The poll goes ahead while the warm-up runs; nothing is taken until it ends.
    const result = await run;
    expect(order).toEqual(["warm started", "poll", "warm ended", "take"]);
    expect(result).toMatchObject({ planned: 0, failed: 0 });
    expect(result.fatal).toBeUndefined();
    await store.close();
  });

  it("never fails: a provider without its key or a local model is left to the round (which reports it), and nothing is called", async () => {
    let requests = 0;
    const { createServer } = await import("node:http");
    const server = createServer((_req, res) => {
      requests++;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      const c = config(
        {
          net: { type: "openai-compatible", base_url: `http://127.0.0.1:${port}/v1` },
          local: { type: "llama-cpp", model: "/nowhere/model.gguf" },
          claude: { type: "anthropic" },
        },
        { default: { primary: "net:m" }, planner: { primary: "local:m" }, "plan.tester": { primary: "claude:claude-sonnet-4-5" } },
      );
      await expect(warmUp(c, {}, PIPELINE_ROLES, false)).resolves.toBeUndefined();
      expect(requests).toBe(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
