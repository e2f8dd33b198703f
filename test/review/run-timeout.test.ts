import { afterEach, describe, expect, it } from "vitest";
import { byRole, errorLine, requestsOf, world, type World } from "../support/e2e.js";

/**
 * CONTRACT §2: transport retries — including "a call that outlives call_timeout_ms, which
 * bounds each attempt" — are "at most 2 per call". Each of the 3 attempts should therefore
 * be a request the provider sees. Today the per-attempt timer starts before the AI SDK and
 * the provider package are lazily imported (generateOnce: `await import("ai")`,
 * `target.load()`), so with a short call_timeout_ms the executor's first attempt times out
 * while still loading modules: it never reaches the server, yet it uses up one of the two
 * retries. (With call_timeout_ms 100 and an instant server the ModelCall event shows
 * `attempts: 2`.)
 */
let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("call_timeout_ms bounds each attempt (CONTRACT §2)", () => {
  it("an executor that never answers in time is asked exactly 3 times, then exit 1", async () => {
    w = await world(byRole({ executor: { delayMs: 2_000, content: "too late" } }), { callTimeoutMs: 100 });
    const r = await w.run(["run", "What is the answer?"]);
    expect(r.code).toBe(1);
    expect(errorLine(r)).toMatch(/timed out/);
    expect(requestsOf(w.server, "executor")).toHaveLength(3);
  });
});
