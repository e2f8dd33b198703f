/**
 * Issue 32: a summary's count of calls says what they were — `local` for the in-process engine,
 * `network` for providers across the network, `model` when the roles mix both.
 */
import { describe, expect, it } from "vitest";
import { callKind, callsText } from "../../src/cli/common.js";
import type { Config } from "../../src/contracts/config.js";

const providers: Config["providers"] = {
  tiny: { type: "llama-cpp", model: "./tiny.gguf" },
  far: { type: "openai-compatible", base_url: "http://127.0.0.1:9/v1" },
};
const routes = (r: Record<string, string>): Config["routes"] => Object.fromEntries(Object.entries(r).map(([role, primary]) => [role, { primary }]));

describe("what a summary calls its calls", () => {
  it("local, network or model, from the roles' routes (secondaries included)", () => {
    expect(callKind({ providers, routes: routes({ default: "tiny:m" }) }, ["planner", "plan.builder"])).toBe("local");
    expect(callKind({ providers, routes: routes({ default: "far:m" }) }, ["planner", "plan.builder"])).toBe("network");
    expect(callKind({ providers, routes: routes({ default: "tiny:m", "plan.builder": "far:m" }) }, ["planner", "plan.builder"])).toBe("model");
    const withSecondary: Config["routes"] = { default: { primary: "tiny:m", secondary: "far:m" } };
    expect(callKind({ providers, routes: withSecondary }, ["planner"])).toBe("model");
    expect(callsText(1, "local")).toBe("1 local call");
    expect(callsText(19, "network")).toBe("19 network calls");
  });
});
