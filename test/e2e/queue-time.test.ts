import { afterEach, describe, expect, it } from "vitest";
import { dissent, scratch } from "../support/cli.js";
import { startOpenAIServer, type FakeOpenAI } from "../support/openai-server.js";
import { agreeableReply } from "../support/roles-config.js";
import { ROLES } from "../support/world.js";

// docs/run.md "Call times": latency_ms is the request's own time; the wait for a slot of the
// provider's max_concurrency is queue_ms, recorded apart in call records and ModelCall events.

const HOLD_MS = 150;
let server: FakeOpenAI | undefined;
let s: ReturnType<typeof scratch> | undefined;
afterEach(async () => {
  await server?.close();
  s?.cleanup();
});

describe("queue_ms apart from latency_ms", () => {
  it("four critics behind max_concurrency 1: each call records its wait for the slot as queue_ms", async () => {
    server = await startOpenAIServer((req) => ({ content: agreeableReply(req.body.model), delayMs: HOLD_MS }));
    s = scratch("dissent-queue-");
    s.write(
      "dissent.config.yaml",
      [
        "providers:",
        `  local: { type: openai-compatible, base_url: "${server.url}", max_concurrency: 1 }`,
        "routes:",
        '  default: { primary: "local:default" }',
        ...ROLES.map((r) => `  ${r}: { primary: "local:${r}" }`),
        "",
      ].join("\n"),
    );
    const run = (args: string[]) => dissent(args, { cwd: s?.dir ?? "", env: { DISSENT_HOME: `${s?.dir}/home` }, timeoutMs: 60_000 });
    const created = await run(["issue", "new", "--title", "Retry failed webhooks", "--body", "Webhooks that fail are lost.", "--json"]);
    const { id } = JSON.parse(created.stdout) as { id: string };
    const plan = await run(["issue", "plan", id, "--json"]);
    expect(plan.code, plan.stderr).toBe(0);
    const calls = (await run(["events", "--issue", id, "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; stage?: string; round?: number; latency_ms?: number; queue_ms?: number; cached?: boolean })
      .filter((e) => e.type === "ModelCall");
    expect(calls.length).toBeGreaterThan(10);
    for (const c of calls) {
      expect(typeof c.queue_ms).toBe("number");
      // The server held every request HOLD_MS: a request's own time is at least that.
      expect(c.latency_ms).toBeGreaterThanOrEqual(HOLD_MS - 5);
    }
    // The first round's four critics were started together and sent one at a time: the last one
    // waited for at least three others, each held HOLD_MS by the server.
    const round = calls.filter((c) => c.stage === "discovery_council" && c.round === 1);
    expect(round.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...round.map((c) => c.queue_ms ?? 0))).toBeGreaterThanOrEqual(3 * HOLD_MS - 5);
  });
});
