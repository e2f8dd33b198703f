/**
 * Councils that dissent (issue 18), through the built CLI as a user runs it and the realistic model
 * double: a lone grounded HIGH gets a second opinion; known gaps block; what changed a severity is
 * shown; a replan reuses the cache; the issue's life has ceilings. Seeded and deterministic.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { dissent, scratch, type CliResult } from "../support/cli.js";
import { frontier, startRealisticDouble, type Defect, type Quirks, type RealisticDouble, type Scenario } from "../support/double/index.js";
import type { ChatRequest } from "../support/openai-server.js";
import type { ConcernJson, PlanJson, StageRunJson } from "../support/pipeline-e2e.js";
import { rolesConfig } from "../support/roles-config.js";

vi.setConfig({ testTimeout: 240_000 });

interface Concern extends ConcernJson {
  phase: string;
  severity_change?: string;
  second_opinion?: { verdict: string; reason: string; by: string };
  known_gap?: string;
  also_raised_by?: string[];
}
interface Stage extends StageRunJson {
  second_opinions: number;
  second_opinions_skipped: number;
  producer_warnings: number;
}
type Plan = Omit<PlanJson, "pending_concerns" | "stages"> & { pending_concerns: Concern[]; stages: Stage[] };
interface EventJson {
  type: string;
  role?: string;
  error?: string;
  stage?: string;
  round?: number;
  cached?: boolean;
  concern?: Concern;
  ceiling?: string;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function world(scenario: Scenario, opts: { quirks?: Partial<Quirks>; down?: string[]; extra?: string } = {}) {
  const double: RealisticDouble = await startRealisticDouble({ seed: 7, quirks: opts.quirks ?? frontier, scenario, ...(opts.down ? { down: opts.down } : {}) });
  const s = scratch("dissent-councils-");
  s.write("dissent.config.yaml", rolesConfig(double.url, ["call_timeout_ms: 20000", opts.extra ?? ""].join("\n")));
  const run = (args: string[]) => dissent(args, { cwd: s.dir, env: { DISSENT_HOME: `${s.dir}/home` }, timeoutMs: 200_000 });
  open.push({ close: async () => (await double.close(), s.cleanup()) });
  const newIssue = async (title: string, body: string) => {
    const r = await run(["issue", "new", "--title", title, "--body", body, "--label", "dissent-load-bearing"]);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  };
  const plan = async (id: string, ...flags: string[]): Promise<{ out: Plan; r: CliResult }> => {
    const r = await run(["issue", "plan", id, "--json", ...flags]);
    expect(r.code, r.stderr).toBe(0);
    return { out: JSON.parse(r.stdout) as Plan, r };
  };
  const events = async (id: string) =>
    (await run(["events", "--issue", id, "--json"])).stdout
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as EventJson);
  return { double, run, newIssue, plan, events };
}

const userText = (r: ChatRequest) => r.body.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n\n");
const blockOf = (r: ChatRequest, kind: string) => readDataBlocks(userText(r)).find((b) => b.kind === kind)?.text;
const stage = (out: Plan, phase: string) => out.stages.find((s) => s.phase === phase) as Stage;

/** A real hole only the tech lead sees (next-auth #4625, the real model's 0107), and a nitpick only the user advocate raises. */
const HOLE: Defect = {
  id: "LINK-SHAPE-1",
  stage: "shape",
  line: "Find the existing user by the profile's email and sign them in as that user.",
  fix: "Link only when both the provider and the existing user have verified the email.",
  lanes: ["shape.tech_lead"],
  severity: "HIGH",
  category: "risk",
  wordings: [
    "The guard never checks that the existing user's email was verified, so whoever registered the address first takes the account over.",
    "Linking by an unverified existing email lets an attacker pre-register a victim's address and capture the account.",
    "Without checking the existing user's verification, automatic linking is a pre-account-takeover.",
  ],
};
const NITPICK: Defect = {
  id: "LINK-SHAPE-2",
  stage: "shape",
  line: "List the linked providers on the account page.",
  fix: "List the linked providers on the account page, newest first.",
  lanes: ["shape.user_advocate"],
  severity: "HIGH",
  category: "user_impact",
  nitpick: true,
  wordings: [
    "The linked providers should be ordered newest first so users notice a new one.",
    "An unordered provider list makes a new link easy to miss.",
    "Sort the provider list by date added.",
  ],
};
/** A plan-stage nitpick: refuted, it goes on as advice and is still pending when the cycle ends. */
const PLAN_NIT: Defect = {
  id: "LINK-PLAN-1",
  stage: "plan",
  line: "Name the option allowEmailLinking.",
  fix: "Name the option allowDangerousEmailAccountLinking.",
  lanes: ["plan.builder"],
  severity: "HIGH",
  category: "buildability",
  nitpick: true,
  wordings: ["The option name should warn that linking by email is dangerous.", "b", "c"],
};
const LINK_TITLE = "Link OAuth accounts that share an email";
const LINK_BODY = "Users who sign in with a second provider using the same email are refused; let trusted providers link to the existing account.";

describe("a lone HIGH gets a second opinion (issue plan, the verifier role)", () => {
  it("two personas each raising a different grounded lone HIGH: both go to the verifier; the confirmed one blocks and the producer revises, the refuted one is MEDIUM with the reason, shown so everywhere", async () => {
    const w = await world({ issues: { [LINK_TITLE]: [HOLE, NITPICK, PLAN_NIT] } });
    const id = await w.newIssue(LINK_TITLE, LINK_BODY);
    const { out } = await w.plan(id);

    const shape = stage(out, "shape");
    expect(shape).toMatchObject({ rounds: 2, outcome: "converged", second_opinions: 3, second_opinions_skipped: 0 });
    const asked = w.double
      .byRole("verifier")
      .filter((r) => readDataBlocks(userText(r)).find((b) => b.kind === "under_review")?.name === "shape")
      .map((r) => JSON.parse(blockOf(r, "finding") ?? "{}") as { concern: string });
    // Asked in parallel (any order at the server): round 1 both lone HIGHs, round 2 the nitpick again.
    expect(asked.map((f) => f.concern).sort()).toEqual([HOLE.wordings[0], NITPICK.wordings[0], NITPICK.wordings[0]].sort());
    // The producer is re-run with the confirmed HIGH only.
    const writer = w.double.byRole("shape.writer");
    expect(writer).toHaveLength(2);
    const blocking = blockOf(writer[1] as ChatRequest, "blocking_concerns") ?? "";
    expect(blocking).toContain(HOLE.wordings[0]);
    expect(blocking).not.toContain(NITPICK.wordings[0]);
    const refuted = (await w.events(id)).find((e) => e.type === "ConcernForwarded" && e.concern?.concern === NITPICK.wordings[0])?.concern;
    expect(refuted).toMatchObject({
      severity: "MEDIUM",
      raised_severity: "HIGH",
      severity_change: "refuted",
      second_opinion: { verdict: "refute", by: "verifier" },
    });
    expect(out.pending_concerns.some((c) => c.concern === HOLE.wordings[0])).toBe(false); // resolved inside the stage

    // Shown to a user: issue show and issue plan (the pending list), events (every forward).
    const nit = out.pending_concerns.find((c) => c.concern === PLAN_NIT.wordings[0]);
    expect(nit).toMatchObject({ severity: "MEDIUM", severity_change: "refuted" });
    const reason = nit?.second_opinion?.reason ?? "";
    const show = await w.run(["issue", "show", id]);
    expect(show.stdout).toContain(`MEDIUM (raised HIGH, refuted: ${reason})`);
    const again = await w.run(["issue", "plan", id, "--replan"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`MEDIUM (raised HIGH, refuted: ${reason})`);
    const log = (await w.run(["events", "--issue", id])).stdout;
    expect(log).toMatch(/ConcernBlocked\s+\S+\s+SHAPE-TECH_LEAD-\d{3} HIGH \(confirmed by verifier\) blocked shape_council round 1/);
    expect(log).toContain(`MEDIUM (raised HIGH, refuted: ${refuted?.second_opinion?.reason}) → plan (advisory)`);
    const resolved = (await w.events(id)).find((e) => e.type === "ConcernAddressed");
    expect(resolved).toBeDefined();
  });

  it("a verifier that fails: the HIGH stays MEDIUM (raised HIGH, not corroborated), one warning line, and the failure on its ModelCall event", async () => {
    const w = await world({ issues: { [LINK_TITLE]: [HOLE] } }, { down: ["verifier"] });
    const id = await w.newIssue(LINK_TITLE, LINK_BODY);
    const { out, r } = await w.plan(id);
    expect(stage(out, "shape")).toMatchObject({ rounds: 1, outcome: "converged", second_opinions: 1 });
    const forwarded = (await w.events(id)).filter((e) => e.type === "ConcernForwarded" && e.concern?.concern === HOLE.wordings[0]);
    expect(forwarded[0]?.concern).toMatchObject({ severity: "MEDIUM", raised_severity: "HIGH", severity_change: "not_corroborated" });
    const warnings = r.stderr.split("\n").filter((l) => l.includes("verifier failed on"));
    expect(warnings).toEqual([
      expect.stringMatching(/^dissent: warning: verifier failed on SHAPE-TECH_LEAD-\d{3} in shape_council round 1, so the HIGH stays MEDIUM: /),
    ]);
    const calls = (await w.events(id)).filter((e) => e.type === "ModelCall" && e.role === "verifier");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.error).toMatch(/503|unavailable/);
    expect((await w.run(["events", "--issue", id])).stdout).toContain("MEDIUM (raised HIGH, not corroborated) → plan (advisory)");
  });

  it("4 lone HIGHs in one round: 3 second opinions, the 4th kept MEDIUM and counted as skipped", async () => {
    const title = "Rework the plan's cleanup steps";
    const nit = (n: number, line: string): Defect => ({
      id: `NIT-${n}`,
      stage: "plan",
      line,
      fix: `${line} (reworded)`,
      lanes: ["plan.builder"],
      severity: "HIGH",
      category: "buildability",
      nitpick: true,
      wordings: [`Nitpick number ${["one", "two", "three", "four"][n]} about the wording of this step.`, "b", "c"],
    });
    const lines = ["Remove the old flag.", "Rename the cleanup job.", "Drop the unused index.", "Tidy the log messages."];
    const w = await world({ issues: { [title]: lines.map((l, i) => nit(i, l)) } });
    const id = await w.newIssue(title, "Clean up after the migration.");
    const { out } = await w.plan(id);
    expect(stage(out, "plan")).toMatchObject({ rounds: 1, second_opinions: 3, second_opinions_skipped: 1 });
    expect(w.double.byRole("verifier")).toHaveLength(3);
    // The four nits (another lane's overflagged MEDIUM, a frontier quirk, may sit beside them).
    const nits = out.pending_concerns.filter((c) => c.phase === "plan" && c.raised_by === "plan.builder");
    expect(nits.map((c) => c.severity_change)).toEqual(["refuted", "refuted", "refuted", "not_corroborated"]);
  });
});

describe("known gaps block (the assumption surfacer ties a finding to a wiki entry)", () => {
  it("a plan repeating a gap that shipped blocks at once, with no second opinion, and the concern names the gap", async () => {
    const shipped: Defect = {
      id: "SESS-PLAN-1",
      stage: "plan",
      line: "Reuse the cache's default Redis user for session data.",
      fix: "Give sessions their own Redis user.",
      lanes: ["plan_reviewer"],
      severity: "HIGH",
      category: "security",
      wordings: ["Session data under the cache's shared Redis user is readable by every service that uses the cache.", "b", "c"],
    };
    const again: Defect = {
      ...shipped,
      id: "TOKENS-PLAN-1",
      line: "Keep the API tokens under the cache's default Redis user.",
      fix: "Keep the API tokens under a Redis user of their own.",
      lanes: ["assumption_surfacer"],
      wordings: ["Assumes the shared cache Redis user is private, as the session work did before.", "b", "c"],
      gap: "shared Redis user is readable by every service",
    };
    const first = "Move sessions to the Redis cache cluster";
    const second = "Store API tokens in the Redis cache cluster";
    const w = await world({ issues: { [first]: [shipped], [second]: [again] } });
    const a = await w.newIssue(first, "Sessions live in memory; move them to the Redis cache cluster we run for caching.");
    const planned = await w.plan(a);
    expect(planned.out.status).toBe("needs_replan");
    const merged = await w.run(["issue", "merged", a, "--pr", "12", "--json"]);
    expect(merged.code, merged.stderr).toBe(0);
    const [entry] = (JSON.parse(merged.stdout) as { wiki_entries: string[] }).wiki_entries;
    expect(entry).toBeDefined();

    const b = await w.newIssue(second, "Keep the API tokens in the Redis cache cluster, next to the session data.");
    const { out } = await w.plan(b);
    const surfacer = w.double.byRole("assumption_surfacer").filter((r) => blockOf(r, "under_review")?.includes("API tokens under"));
    expect(blockOf(surfacer[0] as ChatRequest, "known_gaps")).toContain(`[${entry}] HIGH`);
    const blocked = (await w.events(b)).filter((e) => e.type === "ConcernBlocked").map((e) => e.concern);
    expect(blocked).toEqual([expect.objectContaining({ severity: "HIGH", known_gap: entry, raised_by: "assumption_surfacer" })]);
    expect(stage(out, "plan")).toMatchObject({ rounds: 2, outcome: "converged", second_opinions: 0 });
    expect(w.double.byRole("verifier").filter((r) => blockOf(r, "finding")?.includes("private"))).toEqual([]);
  });
});

describe("a replan and the issue's life", () => {
  /** A plan defect only the reviewer sees: the first cycle ends needs_replan, the replan's planner fixes it. */
  const MISSED: Defect = {
    id: "RETRY-PLAN-1",
    stage: "plan",
    line: "Retry every failed payment call three times.",
    fix: "Retry only the idempotent payment reads, with an idempotency key on every write.",
    lanes: ["plan_reviewer"],
    severity: "HIGH",
    category: "correctness",
    wordings: ["Retrying payment writes can charge a customer twice.", "b", "c"],
  };
  /** An advisory of discovery that goes on to the shape writer: its id is in the writer's request. */
  const VAGUE: Defect = {
    id: "RETRY-DISC-1",
    stage: "discover",
    line: "Payment calls fail now and then.",
    fix: "About 1 in 200 payment calls fails during the provider's deploys.",
    lanes: ["discovery.problem_sharpener"],
    severity: "MEDIUM",
    category: "problem",
    wordings: ["How often payment calls fail is not stated, so nobody can tell when it is fixed.", "b", "c"],
  };
  const TITLE = "Retry failed payment calls";
  const BODY = "Payment calls fail now and then during provider deploys; retry them.";

  it("a replan after needs_replan makes no network call for discover and shape: their requests are byte-identical, served from the cache", async () => {
    const w = await world({ issues: { [TITLE]: [VAGUE, MISSED] } });
    const id = await w.newIssue(TITLE, BODY);
    const first = await w.plan(id);
    expect(first.out.status).toBe("needs_replan");
    const given = blockOf(w.double.byRole("shape.writer")[0] as ChatRequest, "pending_concerns") ?? "";
    expect(given).toContain(VAGUE.wordings[0]);
    const before = w.double.requests.length;
    const second = await w.plan(id);
    expect(second.out.status).toBe("ready");
    const replanned = w.double.requests.slice(before);
    const asked = replanned.map((r) => `${r.body.model}:${readDataBlocks(userText(r)).find((b) => b.kind === "under_review")?.name ?? ""}`);
    // Only the stages whose inputs changed: the plan (its planner has the reviewer's finding), the criteria, the reviewer.
    expect(asked.filter((a) => /^(discover\.|discovery\.|shape\.)/.test(a) || a.endsWith(":brief") || a.endsWith(":shape"))).toEqual([]);
    expect(asked).toContain("planner:");
    expect(asked).toContain("plan_reviewer:plan");
    const early = (await w.events(id)).filter((e) => e.type === "ModelCall" && (e.stage === "discovery_council" || e.stage === "shape_council"));
    expect(early.filter((e) => !e.cached)).toHaveLength(early.length / 2); // cycle 1 asked; cycle 2 read the cache
    // The same finding kept its id in both cycles (so the shape writer's request was the same bytes).
    const forwarded = (await w.events(id)).filter((e) => e.type === "ConcernForwarded" && e.concern?.concern === VAGUE.wordings[0]).map((e) => e.concern?.id);
    expect(forwarded.length).toBeGreaterThanOrEqual(2);
    expect(new Set(forwarded).size).toBe(1);
  });

  it("issue plan on a ready issue without --replan exits 2 with a line naming --replan; with it, a new cycle starts", async () => {
    const w = await world({ issues: {} });
    const id = await w.newIssue(TITLE, BODY);
    expect((await w.plan(id)).out.status).toBe("ready");
    const refused = await w.run(["issue", "plan", id]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split("\n")).toEqual([
      `dissent: error: issue ${id} is ready (its plan was reviewed); to plan it again, run dissent issue plan ${id} --replan`,
    ]);
    const shown = await w.run(["issue", "show", id, "--json"]);
    expect((JSON.parse(shown.stdout) as { cycle: number }).cycle).toBe(1);
    const again = await w.plan(id, "--replan");
    expect(again.out.calls).toBe(0); // nothing changed: every request is served from the cache
    expect((JSON.parse((await w.run(["issue", "show", id, "--json"])).stdout) as { cycle: number }).cycle).toBe(2);
  });

  it("a fourth cycle is refused: exit 1 naming budget.max_cycles_per_issue, and nothing is asked of a model", async () => {
    const w = await world({ issues: {} });
    const id = await w.newIssue(TITLE, BODY);
    for (let i = 0; i < 3; i++) await w.plan(id, "--replan");
    const before = w.double.requests.length;
    const fourth = await w.run(["issue", "plan", id, "--replan"]);
    expect(fourth.code).toBe(1);
    expect(fourth.stderr).toMatch(/^dissent: error: issue \d+ has had 3 planning cycles, the most budget\.max_cycles_per_issue \(3\) allows; raise it/);
    expect(w.double.requests.length).toBe(before);
  });

  it("max_calls_per_issue counts every cycle: a replan past it exits 1 naming budget.max_calls_per_issue", async () => {
    const w = await world({ issues: { [TITLE]: [MISSED] } }, { extra: "budget: { max_calls_per_issue: 19 }" });
    const id = await w.newIssue(TITLE, BODY);
    const first = await w.plan(id);
    expect(first.out.calls).toBeLessThanOrEqual(19);
    const second = await w.run(["issue", "plan", id]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("budget.max_calls_per_issue");
    const network = (await w.events(id)).filter((e) => e.type === "ModelCall" && !e.cached);
    expect(network.length).toBeLessThanOrEqual(19);
  });
});
