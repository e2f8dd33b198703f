import { afterEach, describe, expect, it } from "vitest";
import { byRole, errorLine, requestsOf, world, type World } from "../support/e2e.js";

/**
 * docs/configuration.md: transport retries — including "a call that outlives call_timeout_ms, which
 * bounds each attempt" — are "at most 2 per call". Each of the 3 attempts should therefore
 * be a request the provider sees. The per-attempt timer starts once the AI SDK and the
 * provider package are loaded (issue #9, defect 21): before that fix, with a short
 * call_timeout_ms, a first attempt could time out while still loading modules, never reach
 * the server, and use up one of the two retries.
 */
let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("call_timeout_ms bounds each attempt (docs/configuration.md)", () => {
  it("an executor that never answers in time is asked exactly 3 times, then exit 1", async () => {
    // 1.5 s is long enough for every request to reach the server on a loaded machine, and far shorter than its 60 s.
    w = await world(byRole({ executor: { delayMs: 60_000, content: "too late" } }), { callTimeoutMs: 1_500 });
    const r = await w.run(["run", "What is the answer?"]);
    expect(r.code).toBe(1);
    expect(errorLine(r)).toMatch(/timed out/);
    expect(requestsOf(w.server, "executor")).toHaveLength(3);
  });
});
