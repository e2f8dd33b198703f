/**
 * Councils that read the code (issue 30), through the built CLI and the realistic model double: a
 * plan whose defect only the repository shows — it adds a `beforeRequest` hook that mints a new id,
 * and the code says those hooks run again on every retry — is blocked when `project.repo` names the
 * checkout, and goes through as MEDIUM advice ("I cannot see the code") when it does not. The critic
 * quotes the code; the quote grounds there and names the file; the second opinion gets the same code.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { makeRepo, shopFiles, type Repo } from "../code/repos.js";
import { dissent, scratch } from "../support/cli.js";
import { frontier, startRealisticDouble, type Defect, type RealisticDouble } from "../support/double/index.js";
import type { ChatRequest } from "../support/openai-server.js";
import { rolesConfig } from "../support/roles-config.js";

vi.setConfig({ testTimeout: 240_000 });

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

const TITLE = "Send one request id per logical request";
const BODY =
  "Every request should carry an `x-request-id` header so the server logs can join a request's retries. Add it through the HttpClient's `beforeRequest` hook; a retry must keep the id of the request it retries.";

/** The defect: right as prose, wrong against `withRetry`'s stated contract in src/http/retry.ts. */
const RETRY_ID: Defect = {
  id: "RID-PLAN-1",
  stage: "plan",
  line: "Register a beforeRequest hook that sets a fresh x-request-id on the request it is given.",
  fix: "Mint the x-request-id once in send(), before withRetry, and have the hook copy that id onto every attempt.",
  lanes: ["plan.risk_skeptic"],
  severity: "HIGH",
  category: "correctness",
  inCode: "Contract: `beforeRequest` hooks run again on every attempt, so a hook that signs a request signs each retry anew.",
  wordings: [
    "The hook runs again on every retry, so each retry gets a new id and the retries of one request can no longer be joined.",
    "A fresh id per hook call gives every retry its own id, which defeats the point of the header.",
    "Because hooks re-run per attempt, minting the id inside the hook splits one request into several ids.",
  ],
};

async function world(repo: Repo | undefined) {
  const double: RealisticDouble = await startRealisticDouble({ seed: 11, quirks: frontier, scenario: { issues: { [TITLE]: [RETRY_ID] } } });
  const s = scratch("dissent-code-councils-");
  const extra = ["call_timeout_ms: 20000", ...(repo ? [`project:\n  repo: ${JSON.stringify(repo.root)}`] : [])].join("\n");
  s.write("dissent.config.yaml", rolesConfig(double.url, extra));
  const run = (args: string[]) => dissent(args, { cwd: s.dir, env: { DISSENT_HOME: `${s.dir}/home` }, timeoutMs: 200_000 });
  open.push({ close: async () => (await double.close(), s.cleanup()) });
  const r = await run(["issue", "new", "--title", TITLE, "--body", BODY, "--label", "dissent-load-bearing"]);
  expect(r.code, r.stderr).toBe(0);
  return { double, run, id: r.stdout.trim() };
}

const userText = (r: ChatRequest) => r.body.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n\n");
const codeOf = (r: ChatRequest) => readDataBlocks(userText(r)).find((b) => b.kind === "code")?.text;

interface PlanOut {
  status: string;
  stages: { phase: string; rounds: number; outcome: string; code_context?: { roles: string[]; tokens: number; items: { path: string }[] }[] }[];
  pending_concerns: {
    concern: string;
    severity: string;
    raised_severity?: string;
    evidence_in_code?: { path: string; start_line: number; end_line: number };
  }[];
}

describe("councils that read the code", () => {
  it("with project.repo, the critic quotes the code that shows the defect: the HIGH grounds there, the verifier (given the same code) confirms it, and the planner revises", async () => {
    const repo = makeRepo(shopFiles());
    open.push({ close: async () => repo.remove() });
    const w = await world(repo);
    const r = await w.run(["issue", "plan", w.id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as PlanOut;
    const plan = out.stages.find((s) => s.phase === "plan");
    // Blocked in round 1 on the code, fixed in round 2.
    expect(plan).toMatchObject({ rounds: 2, outcome: "converged" });
    const planner = w.double.byRole("planner");
    expect(planner).toHaveLength(2);
    expect(readDataBlocks(userText(planner[1] as ChatRequest)).find((b) => b.kind === "blocking_concerns")?.text).toContain(RETRY_ID.wordings[0]);

    // The stage reads one code block, holding withRetry's contract: the planner, every critic of both
    // rounds and the second opinion were given the same bytes, right after the issue (so a provider's
    // prompt cache holds them from the stage's first request on).
    const reviewing = (q: ChatRequest) => readDataBlocks(userText(q)).find((b) => b.kind === "under_review")?.name === "plan";
    const round1 = w.double.byRole("plan.risk_skeptic").find(reviewing) as ChatRequest;
    const code = codeOf(round1) ?? "";
    expect(code).toContain("### src/http/retry.ts:");
    expect(code).toContain("`beforeRequest` hooks run again on every");
    const critics = ["plan.builder", "plan.tester", "plan.risk_skeptic", "assumption_surfacer"].flatMap((role) => w.double.byRole(role).filter(reviewing));
    expect(critics.length).toBeGreaterThanOrEqual(8);
    // The second opinion reads the code its critic read.
    const verifier = w.double.byRole("verifier").filter(reviewing);
    expect(verifier.length).toBeGreaterThan(0);
    const stage = [...planner, ...critics, ...verifier];
    for (const q of stage) expect(codeOf(q), q.body.model).toBe(code);
    for (const q of stage)
      expect(
        readDataBlocks(userText(q))
          .map((b) => b.kind)
          .slice(0, 2),
        q.body.model,
      ).toEqual(["issue", "code"]);

    // What the stage read is on its record.
    const ctx = plan?.code_context ?? [];
    expect(ctx.flatMap((c) => c.roles)).toEqual(expect.arrayContaining(["planner", "plan.risk_skeptic", "verifier"]));
    expect(ctx.flatMap((c) => c.items.map((i) => i.path))).toContain("src/http/retry.ts");

    // The concern names the file and lines it quotes (from the events: it was resolved in round 2).
    const ev = await w.run(["events", "--issue", w.id, "--json"]);
    const blocked = ev.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; concern?: PlanOut["pending_concerns"][number] })
      .find((e) => e.type === "ConcernBlocked" && e.concern?.concern === RETRY_ID.wordings[0]);
    expect(blocked?.concern).toMatchObject({ severity: "HIGH", evidence_in_code: { path: "src/http/retry.ts" } });
    // issue show --context says what each stage read, and why.
    const shown = await w.run(["issue", "show", w.id, "--context"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^plan · plan_council$/m);
    expect(shown.stdout).toMatch(/read by .*plan\.risk_skeptic/);
    expect(shown.stdout).toMatch(/excerpt +src\/http\/retry\.ts:\d+-\d+ \(~\d+\) — /);
    const asJson = JSON.parse((await w.run(["issue", "show", w.id, "--context", "--json"])).stdout) as { stages: { phase: string; code_context: unknown[] }[] };
    expect(asJson.stages.find((x) => x.phase === "plan")?.code_context).toEqual(plan?.code_context);
    const at = blocked?.concern?.evidence_in_code;
    expect(
      repo && at
        ? shopFiles()
            ["src/http/retry.ts"]?.split("\n")
            .slice((at.start_line ?? 1) - 1, at.end_line)
            .join("\n")
        : "",
    ).toContain("hooks run again on every");
  });

  it("without a repository the same critic cannot see the code: its finding is MEDIUM advice and the plan goes through in one round", async () => {
    const w = await world(undefined);
    const r = await w.run(["issue", "plan", w.id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as PlanOut;
    const plan = out.stages.find((s) => s.phase === "plan");
    expect(plan).toMatchObject({ rounds: 1, outcome: "converged" });
    expect(plan?.code_context).toBeUndefined();
    for (const q of w.double.requests) expect(codeOf(q)).toBeUndefined();
    const advice = out.pending_concerns.find((c) => c.concern.startsWith(RETRY_ID.wordings[0] ?? "-"));
    expect(advice).toMatchObject({ severity: "MEDIUM" });
    expect(advice?.evidence_in_code).toBeUndefined();
    const shown = await w.run(["issue", "show", w.id, "--context"]);
    expect(shown.stdout).toContain("No request of this cycle carried code");
  });
});
