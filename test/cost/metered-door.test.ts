/**
 * One call door, metered in one place (issue 21): every network call an `issue plan` makes — the
 * complexity gate's, the producers', the critics', the reviewer's, failed ones included — is counted
 * in its `calls`, so `PlanResult.calls` equals the ModelCall events the run wrote.
 */
import { afterEach, expect, it, vi } from "vitest";
import { dissent, scratch } from "../support/cli.js";
import { bench10, perfect, startRealisticDouble } from "../support/double/index.js";
import { rolesConfig } from "../support/roles-config.js";

vi.setConfig({ testTimeout: 180_000 });

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

it("a complexity gate and a plan reviewer whose provider is down: their failed calls count in the plan's calls, as in the event log", async () => {
  const double = await startRealisticDouble({ seed: 7, quirks: perfect, scenario: bench10, down: ["complexity_gate", "plan_reviewer"] });
  const s = scratch("dissent-metered-");
  open.push({ close: async () => (await double.close(), s.cleanup()) });
  s.write("dissent.config.yaml", rolesConfig(double.url));
  const run = (args: string[]) => dissent(args, { cwd: s.dir, env: { DISSENT_HOME: `${s.dir}/home` }, timeoutMs: 150_000 });
  // No keyword decides its route: the complexity gate is asked.
  const issue = bench10.list.find((i) => /dark mode/i.test(i.title));
  if (!issue) throw new Error("bench10 issue");
  const id = (await run(["issue", "new", "--title", issue.title, "--body", issue.body])).stdout.trim();

  const planned = await run(["issue", "plan", id, "--json"]);
  expect(planned.stdout, planned.stderr).not.toBe("");
  const out = JSON.parse(planned.stdout) as { calls: number; status: string };
  const events = (await run(["events", "--issue", id, "--json"])).stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; role?: string; cached?: boolean; error?: string; attempts?: number });
  const sent = events.filter((e) => e.type === "ModelCall" && !e.cached);
  const failed = sent.filter((e) => e.error !== undefined).map((e) => e.role);
  expect(failed).toEqual(["complexity_gate", "plan_reviewer"]);
  expect(out.calls).toBe(sent.length);
  // A call is one unit of the budget whatever its retries: the server saw each attempt.
  expect(sent.reduce((n, e) => n + (e.attempts ?? 1), 0)).toBe(double.requests.length);
});
