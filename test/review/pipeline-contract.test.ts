/**
 * Adversarial review of the issue pipeline against docs/issue.md/§5 and ADR-0064, as a user (or an
 * acceptance suite) sees it: the built CLI against a real HTTP server speaking the OpenAI
 * chat-completions API, every role routed to ONE model and told apart by the persona's `Role:` line.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findings, oneModelWorld, type OneModelWorld } from "./pipeline-review-helpers.js";

let w: OneModelWorld;
beforeEach(async () => {
  w = await oneModelWorld();
});
afterEach(async () => {
  await w.close();
});

interface PlanJson {
  status: string;
  route: string;
  route_reason: string;
  plan: string;
  labels: string[];
  calls: number;
  pending_concerns: { id: string; raised_by: string; severity: string; fingerprint: string; must_address_by: string }[];
  stages: Record<string, unknown>[];
}

describe("outcome rule: hitl (docs/issue.md)", () => {
  it("two pending CRITICALs with distinct fingerprints, each raised by plan.risk_skeptic or assumption_surfacer, → hitl even when another critic raised one of them too", async () => {
    // The surfacer raises A alone; the risk skeptic raises B, and so does the builder. Both oscillate
    // (the planner ignores them) and stay pending: two distinct CRITICALs raised by escalating roles.
    w.handler = (role) => {
      if (role === "assumption_surfacer")
        return findings({ severity: "CRITICAL", category: "assumption", concern: "The plan assumes the upstream service is idempotent" });
      if (role === "plan.risk_skeptic" || role === "plan.builder")
        return findings({ severity: "CRITICAL", category: "rollback", concern: "Nothing undoes a half-applied import" });
      return undefined;
    };
    await w.run("issue", "new", "--title", "Import contacts from a CSV file", "--label", "dissent-load-bearing");
    const out = await w.json<PlanJson>("issue", "plan", "1", "--json");
    const critical = out.pending_concerns.filter((c) => c.severity === "CRITICAL");
    expect(new Set(critical.map((c) => c.fingerprint)).size).toBe(2);
    // Both were raised by an escalating role (the risk skeptic did raise B), so the issue needs a human.
    expect(out.status).toBe("hitl");
    expect(out.labels).toContain("dissent-hitl");
  });
});

describe("ComplexityGate — any doubt → load_bearing (docs/issue.md)", () => {
  it("a model answering 'Not trivial.' is not routed trivial", async () => {
    w.handler = (role) => (role === "complexity_gate" ? "Not trivial." : undefined);
    await w.run("issue", "new", "--title", "Let people pick a display name");
    const out = await w.json<PlanJson>("issue", "plan", "1", "--json");
    expect(w.requestsOf("complexity_gate")).toHaveLength(1); // no label, no keyword: the model decided
    expect(out.route).toBe("load_bearing");
    expect(out.stages).toHaveLength(4);
  });
});

describe("call budget: below the minimum is a configuration error, and the advice in the error works (docs/issue.md, §6)", () => {
  it("11 names the minimum of 19; at 19 every stage and the reviewer run and a plan is made", async () => {
    w.config("budget: { max_calls_per_issue: 11 }");
    const first = await w.run("issue", "new", "--title", "Let people pick a display name", "--label", "dissent-load-bearing");
    expect(first.code).toBe(2);
    expect(first.stderr).toMatch(/^dissent: error: .*budget\.max_calls_per_issue.*19/);

    w.config("budget: { max_calls_per_issue: 19 }");
    await w.run("issue", "new", "--title", "Let people pick a display name", "--label", "dissent-load-bearing");
    const again = await w.run("issue", "plan", "1", "--json");
    expect(again.code).toBe(0);
    const out = JSON.parse(again.stdout) as PlanJson;
    expect(out.plan).toContain("Artifact written by planner");
    expect(w.requestsOf("planner").length).toBeGreaterThan(0);
  });
});

describe("StageRun is the contract's shape (docs/issue.md, §5)", () => {
  const CONTRACT_KEYS = [
    ...["stage", "phase", "rounds", "retries", "outcome", "concerns_raised", "concerns_forwarded", "duration_ms", "calls"],
    // r2
    ...["critic_failures", "ungrounded_findings", "invalid_findings", "input_tokens", "output_tokens", "cost_usd"],
    // issue 21 (docs/serve.md "Cost")
    "cached_input_tokens",
    // r3 (docs/issue.md)
    ...["second_opinions", "second_opinions_skipped", "producer_warnings"],
  ];

  it("the exported StageRun schema accepts a StageRun with exactly the contract's keys", async () => {
    const { StageRun } = (await import("../../dist/index.js")) as { StageRun: { safeParse(v: unknown): { success: boolean } } };
    const run = {
      ...{
        stage: "plan_council",
        phase: "plan",
        rounds: 2,
        retries: 1,
        outcome: "oscillation",
        concerns_raised: 1,
        concerns_forwarded: 1,
        duration_ms: 12,
        calls: 6,
      },
      ...{ critic_failures: 0, ungrounded_findings: 0, invalid_findings: 0, input_tokens: 10, output_tokens: 5, cost_usd: null },
      ...{ second_opinions: 1, second_opinions_skipped: 0, producer_warnings: 0 },
    };
    expect(StageRun.safeParse(run).success).toBe(true);
  });

  it("issue plan --json prints each StageRun with exactly the contract's keys", async () => {
    await w.run("issue", "new", "--title", "Let people pick a display name", "--label", "dissent-load-bearing");
    const out = await w.json<PlanJson>("issue", "plan", "1", "--json");
    expect(out.stages).toHaveLength(4);
    for (const s of out.stages) expect(Object.keys(s).sort()).toEqual([...CONTRACT_KEYS].sort());
  });
});
