/**
 * `issue plan` and `issue show` agree on calls (issue 30, "Faults a real model met"): show had no
 * reviewer row and no total, an interrupted call counted in one and not the other, `show --json`
 * counted only the current cycle without saying so, and the cost column printed `$0` for cached
 * stages and `-` for unpriced ones. Now both print one table — gate, stages, planner, reviewer,
 * total — from the store's events, and the JSON says which cycle it counts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dissent, scratch } from "../support/cli.js";
import { startOpenAIServer, type FakeOpenAI, type Reply } from "../support/openai-server.js";
import { startDissent, until } from "../support/proc.js";
import { agreeableReply, rolesConfig } from "../support/roles-config.js";

let server: FakeOpenAI;
let dir: ReturnType<typeof scratch>;
let handler: (model: string) => Reply | Promise<Reply>;

beforeEach(async () => {
  handler = (model) => ({ content: agreeableReply(model) });
  server = await startOpenAIServer((req) => handler(req.body.model));
  dir = scratch("dissent-calls-");
  dir.write("dissent.config.yaml", rolesConfig(server.url));
});
afterEach(async () => {
  await server.close();
  dir.cleanup();
});

const run = (...args: string[]) => dissent(args, { cwd: dir.dir });
/** The table of an output: from its header line to its `total` line. */
const tableOf = (stdout: string) => {
  const lines = stdout.split("\n");
  const start = lines.findIndex((l) => /^phase\s+stage\s+rounds\s+outcome\s+raised\s+forwarded\s+calls\s+cost\s+time$/.test(l));
  const end = lines.findIndex((l) => l.startsWith("total "));
  return start === -1 || end === -1 ? [] : lines.slice(start, end + 1);
};
const cells = (line: string | undefined) => (line ?? "").split(/\s{2,}/);
interface ShowJson {
  cycle: number;
  calls: number;
  calls_cycle: number;
  calls_total: number;
  steps: { phase: string; stage: string; outcome: string | null; usage: { calls: number; cached_calls: number } }[];
}
const showJson = async (id: string) => JSON.parse((await run("issue", "show", id, "--json")).stdout) as ShowJson;

describe("issue plan and issue show print the same calls", () => {
  it("one table in both — the gate, the four stages, the reviewer and a total — and show --json says which cycle it counts", async () => {
    const id = JSON.parse((await run("issue", "new", "--title", "Add retries to the HTTP client", "--json")).stdout).id as string;
    const planned = await run("issue", "plan", id);
    expect(planned.code, planned.stderr).toBe(0);
    const shown = await run("issue", "show", id);
    const table = tableOf(planned.stdout);
    expect(table.slice(0, -1).map((l) => cells(l).slice(0, 2).join(" "))).toEqual([
      "phase stage",
      "gate complexity_gate",
      "discover discovery_council",
      "shape shape_council",
      "plan plan_council",
      "spec spec_judge",
      "review plan_reviewer",
    ]);
    expect(tableOf(shown.stdout)).toEqual(table);
    expect(cells(table.at(-1))).toEqual(["total", "19", "unpriced", expect.stringMatching(/^\d+\.\ds$/)]);
    // Every row of a model with no known price says so: never `-`, never `$0`.
    for (const row of table.slice(1)) expect(row).toContain("unpriced");
    expect(planned.stdout).toContain("19 network calls in cycle 1");
    expect(shown.stdout).toContain("19 network calls in cycle 1");
    const json = await showJson(id);
    expect(json).toMatchObject({ cycle: 1, calls: 19, calls_cycle: 19, calls_total: 19 });
    expect(json.steps.reduce((n, s) => n + s.usage.calls, 0)).toBe(19);

    // A replan served from the cache: each row is free and says why; the JSON counts the new cycle and the life apart.
    const again = await run("issue", "plan", id, "--replan");
    expect(again.code, again.stderr).toBe(0);
    const cached = tableOf(again.stdout);
    expect(cells(cached.at(-1))).toEqual(["total", "0", "$0.00 (cached)", expect.stringMatching(/s$/)]);
    for (const row of cached.slice(1, -1)) expect(row).toContain("$0.00 (cached)");
    expect(again.stdout).toContain("0 network calls in cycle 2, 19 over the issue's 2 cycles");
    expect(await showJson(id)).toMatchObject({ cycle: 2, calls: 0, calls_cycle: 0, calls_total: 19 });
    expect(tableOf((await run("issue", "show", id)).stdout)).toEqual(cached);
  });

  it("calls interrupted by Ctrl-C count in both: the resumed plan's table and issue show's, with the interrupted stage as a row of its own", async () => {
    const id = JSON.parse((await run("issue", "new", "--title", "Add retries to the HTTP client", "--json")).stdout).id as string;
    handler = (model) =>
      model.startsWith("shape.") && model !== "shape.writer" ? { content: agreeableReply(model), delayMs: 20_000 } : { content: agreeableReply(model) };
    const { child, done } = startDissent(["issue", "plan", id], { cwd: dir.dir });
    await until(() => server.requests.filter((r) => r.body.model.startsWith("shape.") && r.body.model !== "shape.writer").length === 4);
    child.kill("SIGINT");
    expect((await done).code).toBe(130);
    handler = (model) => ({ content: agreeableReply(model) });

    const resumed = await run("issue", "plan", id);
    expect(resumed.code, resumed.stderr).toBe(0);
    const json = await showJson(id);
    // The gate, discover (5), the interrupted shape round (the writer and four critics), the rerun (its writer cached), plan, spec and review.
    expect(json.calls_cycle).toBe(1 + 5 + 5 + 4 + 5 + 2 + 1);
    expect(json.steps.find((s) => s.stage === "shape_council" && s.outcome === "interrupted")?.usage.calls).toBe(5);
    const table = tableOf(resumed.stdout);
    expect(cells(table.at(-1))[1]).toBe(String(json.calls_cycle));
    expect(table.some((l) => /^shape\s+shape_council\s+\S+\s+interrupted\s/.test(l))).toBe(true);
    expect(tableOf((await run("issue", "show", id)).stdout)).toEqual(table);
    expect(resumed.stdout).toContain(`${json.calls_cycle} network calls in cycle 1 (${json.calls_cycle - 11} in this run)`);
  });
});
