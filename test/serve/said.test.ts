/**
 * Issue 31 item 7: the dashboard shows what was said, not only counts. Through the built CLI and the
 * realistic model double: a plan whose shape stage blocks on a confirmed lone HIGH and is revised,
 * and `dissent run --audit` runs with and without `log_content`. The API serves each stage's rounds
 * (drafts, findings, verdicts, what blocked), each run's prompt, draft, concerns and final answer
 * when its text was recorded — and no secret, even one a prompt carried.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AuditRunPage, CostStats, IssuePage, StageRoundsPage } from "../../src/read-models.js";
import { DOSE, DOSE_DRAFT, getJson, HOLE, LINK, NITPICK, readText, SECRET, saidWorld, serve, type SaidWorld, type Serving } from "./world.js";

vi.setConfig({ testTimeout: 240_000, hookTimeout: 400_000 });

let w: SaidWorld;
let s: Serving;
let issue = "";
const runs: Record<"recorded" | "quiet" | "cached" | "secret", string> = { recorded: "", quiet: "", cached: "", secret: "" };

/** `dissent run --audit --json`: the run's id, once the server has it (it follows the store). */
async function audit(prompt: string, config?: string): Promise<string> {
  const r = await w.run(["run", "--audit", "--json", prompt], config);
  expect(r.code, r.stderr).toBe(0);
  const id = (JSON.parse(r.stdout) as { run: { run_id: string } }).run.run_id;
  await until(async () => (await getJson(s.url, `/api/runs/${id}`)).status === 200);
  return id;
}

/** Polls an async condition every 50 ms (at most 30 s). */
async function until(ok: () => Promise<boolean>): Promise<void> {
  for (const end = Date.now() + 30_000; !(await ok()); ) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  w = await saidWorld();
  const made = await w.run(["issue", "new", "--title", LINK.title, "--body", LINK.body, "--label", "dissent-load-bearing"]);
  expect(made.code, made.stderr).toBe(0);
  issue = made.stdout.trim();
  const plan = await w.run(["issue", "plan", issue, "--json"]);
  expect(plan.code, plan.stderr).toBe(0);
  s = await serve(w);
  runs.recorded = await audit(DOSE.prompt);
  runs.cached = await audit(DOSE.prompt); // the same run again: every call from the reply cache
  runs.quiet = await audit("What is the boiling point of water at sea level?", w.quiet);
  runs.secret = await audit(`Is ${SECRET} a valid key for the staging server?`);
});

afterAll(async () => {
  await s?.stop();
  await w?.close();
});

describe("a stage's rounds (GET /api/issues/:id/stages/:cycle/:stage)", () => {
  it("each round's draft, what each critic said (grounded or not), the verifier's verdicts and what blocked; the next round's draft is the revision", async () => {
    const { status, body } = await getJson<StageRoundsPage>(s.url, `/api/issues/${issue}/stages/1/shape_council`);
    expect(status).toBe(200);
    expect(body.absent).toBeUndefined();
    expect(body.rounds.map((r) => r.round)).toEqual([1, 2]);
    const [one, two] = body.rounds;
    // Round 1: the draft carries the hole; the tech lead quotes it; the verifier confirms; it blocks.
    expect(one?.draft).toContain(HOLE.line);
    const lead = one?.critics.find((c) => c.role === "shape.tech_lead");
    const hole = lead?.findings.find((f) => f.concern === HOLE.wordings[0]);
    expect(hole).toMatchObject({ severity: "HIGH", grounded: true });
    expect(one?.draft.toLowerCase()).toContain((hole?.evidence ?? "").toLowerCase().replace(/[*_`]/g, "").slice(0, 20));
    const confirmed = one?.second_opinions.find((o) => o.concern === HOLE.wordings[0]);
    expect(confirmed).toMatchObject({ outcome: "confirmed", by: "verifier", raised_by: "shape.tech_lead" });
    expect(confirmed?.reason).toBeTruthy();
    expect(one?.second_opinions.find((o) => o.concern === NITPICK.wordings[0])).toMatchObject({ outcome: "refuted" });
    expect(one?.blocking).toEqual([{ id: confirmed?.concern_id, severity: "HIGH", concern: HOLE.wordings[0], raised_by: "shape.tech_lead" }]);
    // Every critic of the council is there, each with what it said.
    expect(one?.critics.map((c) => c.role).sort()).toEqual(["shape.challenger", "shape.product_strategist", "shape.tech_lead", "shape.user_advocate"]);
    // Round 2: the writer's revision — the hole replaced by its fix — and nothing blocked it.
    expect(two?.draft).toContain(HOLE.fix);
    expect(two?.draft).not.toContain(HOLE.line);
    expect(two?.blocking).toEqual([]);
  });

  it("the same rounds for a stage that converged at once, and 'not recorded' for a stage the issue never ran", async () => {
    const plan = await getJson<StageRoundsPage>(s.url, `/api/issues/${issue}/stages/1/discovery_council`);
    expect(plan.body.rounds.length).toBeGreaterThanOrEqual(1);
    expect(plan.body.rounds[0]?.critics.length).toBeGreaterThan(0);
    const none = await getJson<StageRoundsPage>(s.url, `/api/issues/${issue}/stages/2/shape_council`);
    expect(none.body).toMatchObject({ rounds: [], absent: "not_recorded" });
    expect((await getJson(s.url, `/api/issues/${issue}/stages/0/shape_council`)).status).toBe(400);
    expect((await getJson(s.url, `/api/issues/${issue}/stages/1/Shape%20Council`)).status).toBe(400);
  });
});

describe("a run (GET /api/runs/:id)", () => {
  it("with log_content: the prompt, the draft, the challenger's grounded concerns with their evidence, and the revised final answer", async () => {
    const { body } = await getJson<AuditRunPage>(s.url, `/api/runs/${runs.recorded}`);
    expect(body.text).not.toBeNull();
    const t = body.text;
    expect(t?.prompt).toBe(DOSE.prompt);
    expect(t?.draft).toBe(DOSE_DRAFT);
    expect(t?.verdict).toBe("needs_work");
    expect(t?.concerns.map((c) => [c.severity, c.concern])).toEqual([
      ["critical", DOSE.concern1],
      ["high", DOSE.concern2],
    ]);
    for (const c of t?.concerns ?? []) expect(DOSE_DRAFT.toLowerCase()).toContain(c.evidence.toLowerCase().replace(/[*_`]/g, "").slice(0, 12));
    expect(t?.revised).toBe(true);
    expect(t?.final).not.toContain(DOSE.bad1);
    expect(t?.final).toContain("Always read the label");
  });

  it("a run served from the reply cache: no network call, its tokens counted as the cache's (not 0 in / 0 out), its text the same", async () => {
    const { body } = await getJson<AuditRunPage>(s.url, `/api/runs/${runs.cached}`);
    expect(body.usage).toMatchObject({ calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 });
    expect(body.usage.cached_calls).toBe(body.calls.length);
    expect(body.usage.reply_cache_input_tokens).toBe(body.calls.reduce((n, c) => n + c.input_tokens, 0));
    expect(body.usage.reply_cache_input_tokens).toBeGreaterThan(0);
    expect(body.usage.reply_cache_output_tokens).toBeGreaterThan(0);
    expect(body.text?.prompt).toBe(DOSE.prompt);
  });

  it("without log_content no text is kept: text is null (the page says why), the calls are still there", async () => {
    const { body } = await getJson<AuditRunPage>(s.url, `/api/runs/${runs.quiet}`);
    expect(body.text).toBeNull();
    expect(body.calls.map((c) => c.role)).toEqual(["executor", "challenger"]);
  });

  it("a secret a prompt carried is never served: not in the run's text, its calls, or the event log", async () => {
    const page = await getJson<AuditRunPage>(s.url, `/api/runs/${runs.secret}`);
    expect(page.body.text?.prompt).toContain("[redacted]");
    expect(page.text).not.toContain(SECRET);
    const log = await getJson(s.url, "/api/events?limit=1000");
    expect(log.text).not.toContain(SECRET);
  });
});

describe("costs of unknown price", () => {
  it("are estimated from their tokens at a named price (serve.estimate_at, openai:gpt-4o-mini by default), never added to the priced dollars", async () => {
    const { body } = await getJson<CostStats>(s.url, "/api/stats");
    const t = body.totals;
    expect(t.unpriced_calls).toBe(t.calls); // the double's models have no price
    expect(t.known_usd).toBe(0);
    expect(t.cost_usd).toBeNull();
    expect(t.estimated_calls).toBe(t.unpriced_calls);
    expect(t.estimated_usd).toBeGreaterThan(0);
    expect(t.estimate_from).toEqual(["openai:gpt-4o-mini: $0.15 in / $0.6 out per M tokens"]);
    const page = await getJson<IssuePage>(s.url, `/api/issues/${issue}`);
    const call = page.body.cycles[0]?.stages[0]?.rounds[0]?.calls[0];
    expect(call?.cost_usd).toBeNull();
    expect(call?.estimate?.from).toContain("openai:gpt-4o-mini");
  });

  it("a serve.estimate_at the price table does not know stops dissent serve with one line naming the setting, exit 2", async () => {
    const bad = w.write("bad-estimate.config.yaml", `${readText(w.quiet)}\nserve: { estimate_at: "nowhere:no-such-model" }\n`);
    const r = await w.run(["serve", "--port", "0"], bad);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^dissent: error: serve\.estimate_at 'nowhere:no-such-model' names no model of the price table/),
    ]);
  });
});
