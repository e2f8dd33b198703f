/**
 * `dissent serve`'s JSON API (docs/serve.md) against a store filled by real `issue plan` and
 * `issue merged` runs through a model server on 127.0.0.1: the board, one issue with its stage
 * timeline and concern lineage, the events with `seq`, the wiki, the stats and the runs.
 */
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AuditRun, CostStats, IssuePage, IssueSummary, ServedEvent, WikiEntryView } from "../../src/read-models.js";
import { ADVICE, CRIT, filledWorld, getJson, HIGH, serve, type ServeWorld, type Serving } from "./world.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 300_000 });

let w: ServeWorld;
let s: Serving;
const SECRET = "zebra-quartz-lantern-4417";

beforeAll(async () => {
  w = await filledWorld();
  const run = await w.run(["run", "--audit", "--json", "How large may an upload be?"]);
  expect(run.code, run.stderr).toBe(0);
  // A text the store holds that the server's config names as a secret (a key it learned later): never served.
  const n = await w.newIssue(`Rotate the token ${SECRET}`, `The old token ${SECRET} leaked.`, []);
  expect(n).toBe("4");
  // The server's config names it (as a provider key); the CLI's, which wrote it, did not.
  const text = readFileSync(join(w.dir, "dissent.config.yaml"), "utf8").replace(/(base_url: "[^"]+")/, "$1, api_key_env: SERVE_SECRET");
  w.write("serve.config.yaml", text);
  s = await serve(w, ["--config", "serve.config.yaml"], { SERVE_SECRET: SECRET });
});

afterAll(async () => {
  await s?.stop();
  await w?.close();
});

const allEvents = async (): Promise<ServedEvent[]> => {
  const out: ServedEvent[] = [];
  for (let after = 0; ; ) {
    const { body } = await getJson<{ events: ServedEvent[]; next_after: number }>(s.url, `/api/events?after=${after}&limit=1000`);
    out.push(...body.events);
    if (body.events.length < 1000) return out;
    after = body.next_after;
  }
};

describe("the board", () => {
  it("lists every issue under its state label, with its status, calls and dollars", async () => {
    const { status, body } = await getJson<{ issues: IssueSummary[]; last_seq: number }>(s.url, "/api/issues");
    expect(status).toBe(200);
    const byId = new Map(body.issues.map((i) => [i.id, i]));
    expect(byId.get("1")).toMatchObject({ state: "dissent-fixed", status: "fixed", route: "load_bearing", running: false });
    expect(byId.get("2")).toMatchObject({ state: "dissent-ready", status: "ready", running: false, current_stage: null });
    expect(byId.get("3")).toMatchObject({ state: "dissent-find", status: "new", calls: 0 });
    expect(byId.get("2")?.calls).toBeGreaterThan(15);
    expect(byId.get("2")?.cost_usd).toBeNull(); // a local model without prices: unknown, never $0
    expect(body.last_seq).toBeGreaterThan(0);
  });
});

describe("one issue", () => {
  it("has its stage timeline: every stage with rounds, outcome, calls, tokens, cost and duration, and the calls of each round", async () => {
    const { status, body } = await getJson<IssuePage>(s.url, "/api/issues/1");
    expect(status).toBe(200);
    expect(body.issue).toMatchObject({ id: "1", status: "fixed" });
    expect(body.issue.plan).toContain("planner");
    expect(body.issue.acceptance_criteria.length).toBeGreaterThan(0);
    const [cycle] = body.cycles;
    expect(cycle?.route).toBe("load_bearing");
    expect(cycle?.stages.map((x) => x.stage)).toEqual(["discovery_council", "shape_council", "plan_council", "spec_judge"]);
    for (const stage of cycle?.stages ?? []) {
      expect(stage.status).toBe("finished");
      expect(stage.run?.rounds).toBe(stage.rounds.length);
      // The StageRun's figures are the sum of its calls' ModelCall events.
      expect(stage.run?.calls).toBe(stage.usage.calls);
      expect(stage.run?.input_tokens).toBe(stage.usage.input_tokens);
      expect(stage.run?.output_tokens).toBe(stage.usage.output_tokens);
      expect(stage.run?.duration_ms).toBeGreaterThan(0);
      // A local model has no known price: its dollars are null, never 0.
      expect(stage.run?.cost_usd).toBeNull();
      expect(stage.usage.cost_usd).toBeNull();
      expect(stage.rounds[0]?.calls[0]?.role).toMatch(/brief|writer|planner|ac_generator/);
    }
    expect(cycle?.stages.find((x) => x.stage === "discovery_council")?.run?.outcome).toBe("oscillation");
    expect(cycle?.calls.map((c) => c.role)).toEqual(
      ["complexity_gate", "plan_reviewer"].filter((r) => r !== "complexity_gate" || cycle?.route_source === "model"),
    );
    expect(body.issue.cost_usd).toBeNull(); // issue show's dollars: null when a call had no price
  });

  it("follows every concern from the critic that raised it to the wiki entry and the later issue it was given to", async () => {
    const { body } = await getJson<IssuePage>(s.url, "/api/issues/1");
    const high = body.lineage.find((l) => l.concern === HIGH.concern);
    expect(high).toMatchObject({ raised_by: "spec.judge", severity: "HIGH", status: "shipped", shipped: { pr: 42 } });
    expect(high?.forwarded.map((f) => f.to)).toContain("review");
    expect(high?.wiki?.id).toMatch(/^acceptance-criteria-never-mention/);
    expect(high?.given_to.map((u) => u.issue_id)).toEqual(["2"]);
    const crit = body.lineage.find((l) => l.concern === CRIT.concern);
    expect(crit).toMatchObject({ raised_by: "discovery.problem_sharpener", severity: "CRITICAL", status: "shipped" });
    expect(crit?.given_to.map((u) => u.issue_id)).toEqual(["2"]);
    const advice = body.lineage.find((l) => l.concern === ADVICE.concern);
    expect(advice).toMatchObject({ raised_by: "plan.tester", severity: "MEDIUM", wiki: null, given_to: [] });
  });

  it("answers 404 for an issue that does not exist, 400 for a malformed id", async () => {
    expect((await getJson(s.url, "/api/issues/999")).status).toBe(404);
    expect((await getJson(s.url, "/api/issues/a%20b")).status).toBe(400);
  });
});

describe("events", () => {
  it("are served oldest first with seq, and ?after=SEQ pages through them", async () => {
    const events = await allEvents();
    expect(events.length).toBeGreaterThan(50);
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    const mid = seqs[50] ?? 0;
    const { body } = await getJson<{ events: ServedEvent[]; last_seq: number; next_after: number }>(s.url, `/api/events?after=${mid}&limit=5`);
    expect(body.events.map((e) => e.seq)).toEqual(seqs.slice(51, 56));
    expect(body.next_after).toBe(seqs[55]);
    expect(body.last_seq).toBe(seqs.at(-1));
    const one = await getJson<{ events: ServedEvent[] }>(s.url, "/api/events?issue=2&type=AdversarialStageCompleted");
    expect(one.body.events.map((e) => e.issue_id)).toEqual(["2", "2", "2", "2"]);
    expect((await getJson(s.url, "/api/events?after=-1")).status).toBe(400);
    expect((await getJson(s.url, "/api/events?limit=5000")).status).toBe(400);
  });
});

describe("the wiki, the stats and the runs", () => {
  it("lists the wiki entries with the issues each was given to", async () => {
    const { body } = await getJson<{ entries: WikiEntryView[] }>(s.url, "/api/wiki");
    expect(body.entries).toHaveLength(2);
    for (const e of body.entries) {
      expect(e.prs).toEqual([42]);
      expect(e.given_to.map((u) => u.issue_id)).toEqual(["2"]);
    }
    const one = await getJson<WikiEntryView>(s.url, `/api/wiki/${body.entries[0]?.id ?? ""}`);
    expect(one.body.body).toContain("PR");
  });

  it("sums calls and tokens by role, model and day exactly as the ModelCall events say", async () => {
    const { body } = await getJson<CostStats>(s.url, "/api/stats");
    const calls = (await allEvents()).filter((e): e is Extract<ServedEvent, { type: "ModelCall" }> => e.type === "ModelCall");
    const network = calls.filter((c) => !c.cached);
    expect(body.totals.calls).toBe(network.length);
    expect(body.totals.cached_calls).toBe(calls.length - network.length);
    expect(body.totals.input_tokens).toBe(network.reduce((a, c) => a + c.input_tokens, 0));
    expect(body.totals.unpriced_calls).toBe(network.length);
    expect(body.totals.cost_usd).toBeNull();
    const judge = body.by_role.find((r) => r.key === "spec.judge");
    expect(judge?.calls).toBe(network.filter((c) => c.role === "spec.judge").length);
    expect(body.by_model.map((r) => r.key)).toContain("local:spec.judge");
    expect(body.by_day.map((r) => r.key)).toEqual([new Date().toISOString().slice(0, 10)]);
    expect(body.by_issue[0]?.key).toMatch(/^[12]$/);
  });

  it("lists the audit runs of dissent run with their calls", async () => {
    const { body } = await getJson<{ runs: Omit<AuditRun, "calls">[] }>(s.url, "/api/runs");
    expect(body.runs).toHaveLength(1);
    expect(body.runs[0]).toMatchObject({ audit: true, revised: false, challenger_failed: false, roles: ["executor", "challenger"] });
    const run = await getJson<AuditRun>(s.url, `/api/runs/${body.runs[0]?.run_id ?? ""}`);
    expect(run.body.calls.map((c) => c.role)).toEqual(["executor", "challenger"]);
  });
});

describe("what the server never does", () => {
  it("changes nothing: every method but GET and HEAD is refused", async () => {
    const before = (await allEvents()).length;
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const res = await fetch(new URL("/api/issues", s.url), { method, body: "{}" });
      expect(res.status, method).toBe(405);
    }
    expect((await allEvents()).length).toBe(before);
  });

  it("serves no secret its config names, even one the store holds", async () => {
    const stored = await w.run(["issue", "show", "4", "--json"]);
    expect(stored.stdout).toContain(SECRET); // the CLI's config does not name it
    for (const path of ["/api/issues", "/api/issues/4", "/api/events?issue=4", "/api/events?limit=1000"]) {
      const { text, status } = await getJson(s.url, path);
      expect(status, path).toBe(200);
      expect(text, path).not.toContain(SECRET);
      if (path.startsWith("/api/issues")) expect(text, path).toContain("[redacted]");
    }
  });

  it("answers only requests addressed to this machine by name when it needs no token", async () => {
    const url = new URL("/api/issues", s.url);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host: "attacker.example:5555" } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(421);
  });
});
