import { describe, expect, it } from "vitest";
import { ProviderAuthError, ProviderError, RunError } from "../../src/errors.js";
import { TRANSIENT_LABELS } from "../../src/pipeline/labels.js";
import { STAGES } from "../../src/pipeline/stages.js";
import { agreeable, scriptedWorld, type SeenCall } from "../support/world.js";

const findings = (...f: object[]) => JSON.stringify({ findings: f });
const LOAD_BEARING = ["dissent-load-bearing"];
const noTransient = (labels: string[]) => expect(labels.filter((l) => (TRANSIENT_LABELS as readonly string[]).includes(l))).toEqual([]);

describe("issue pipeline scenarios (ADR-0064, CONTRACT §4)", () => {
  it("everything converges: four stages of one round each, then the reviewer, status ready", async () => {
    const w = scriptedWorld(agreeable);
    const id = await w.newIssue("Add retries to the HTTP client", "Retry 503s three times", LOAD_BEARING);
    const r = await w.plan(id);
    expect(r.status).toBe("ready");
    expect(r.route).toBe("load_bearing");
    expect(r.stages.map((s) => [s.phase, s.rounds, s.outcome])).toEqual([
      ["discover", 1, "converged"],
      ["shape", 1, "converged"],
      ["plan", 1, "converged"],
      ["spec", 1, "converged"],
    ]);
    expect(r.plan).toContain("Artifact written by planner");
    expect(r.acceptance_criteria).toEqual(["A user sees the retry succeed", "A third failure is reported as an error"]);
    expect(r.pending_concerns).toEqual([]);
    // gate decided by label: no gate call; 4 stages (5+5+5+2) + reviewer
    expect(w.callsOf("complexity_gate")).toHaveLength(0);
    expect(r.calls).toBe(18);
    expect(r.labels).toEqual(["dissent-load-bearing", "dissent-ready"]);
    noTransient(await w.labels(id));
  });

  it("a trivial label skips all four stages: planner then reviewer, no gate call", async () => {
    const w = scriptedWorld(agreeable);
    const id = await w.newIssue("Fix typo in README", "teh → the", ["dissent-typo"]);
    const r = await w.plan(id);
    expect(r.route).toBe("trivial");
    expect(r.stages).toEqual([]);
    expect(w.calls.map((c) => c.role)).toEqual(["planner", "plan_reviewer"]);
    expect(r.status).toBe("ready");
  });

  it("the ComplexityGate asks the model only when labels and keywords do not decide, and doubt means load-bearing", async () => {
    for (const [answer, route] of [["TRIVIAL", "trivial"], ["LOAD-BEARING", "load_bearing"], ["I am not sure", "load_bearing"]] as const) {
      const w = scriptedWorld((c) => (c.role === "complexity_gate" ? answer : agreeable(c)));
      const id = await w.newIssue("Update the onboarding email copy", "Make the greeting friendlier");
      const r = await w.plan(id);
      expect(r.route).toBe(route);
      expect(w.callsOf("complexity_gate")).toHaveLength(1);
      const routed = w.eventsOf(id).find((e) => e.type === "ComplexityGateRouted");
      expect(routed).toMatchObject({ route, source: answer === "I am not sure" ? "fallback" : "model" });
    }
    const failing = scriptedWorld((c) => (c.role === "complexity_gate" ? new Error("boom") : agreeable(c)));
    const id = await failing.newIssue("Update the onboarding email copy", "Make the greeting friendlier");
    expect((await failing.plan(id)).route).toBe("load_bearing");
  });

  it("a critic objecting once: the planner re-runs with the concern attached and the stage converges in round 2", async () => {
    const w = scriptedWorld((c) => {
      if (c.role === "planner") return c.n === 0 ? "# Plan v1\n\nShip it." : "# Plan v2\n\nShip it, with a retry test.";
      if (c.role === "plan.tester" && c.prompt.includes("Plan v1")) return findings({ severity: "CRITICAL", concern: "No test covers the retry path", category: "tests" });
      return agreeable(c);
    });
    const id = await w.newIssue("Add retries", "Retry on 503", LOAD_BEARING);
    const r = await w.plan(id);
    const plan = r.stages.find((s) => s.phase === "plan");
    expect(plan).toMatchObject({ rounds: 2, retries: 1, outcome: "converged", concerns_raised: 1, concerns_forwarded: 0 });
    const second = w.callsOf("planner")[1] as SeenCall;
    expect(second.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(second.messages[1]?.text).toContain("Plan v1");
    expect(second.messages[2]?.text).toContain("No test covers the retry path");
    expect(r.plan).toContain("Plan v2");
    expect(r.status).toBe("ready");
  });

  it("the same CRITICAL every round oscillates after 2 rounds, is forwarded, and the reviewer sees it as a must-address constraint", async () => {
    const w = scriptedWorld((c) =>
      c.role === "shape.challenger" ? findings({ severity: "CRITICAL", concern: "The shape has no rollback story", category: "risk" }) : agreeable(c),
    );
    const id = await w.newIssue("Migrate sessions to Redis", "", LOAD_BEARING);
    const r = await w.plan(id);
    const shape = r.stages.find((s) => s.phase === "shape");
    expect(shape).toMatchObject({ rounds: 2, outcome: "oscillation", concerns_forwarded: 1 });
    expect(w.eventsOf(id).filter((e) => e.type === "OscillationDetected")).toHaveLength(1);
    const concern = r.pending_concerns.find((c) => c.concern === "The shape has no rollback story");
    expect(concern).toMatchObject({ phase: "shape", raised_by: "shape.challenger", severity: "CRITICAL", must_address_by: "implement" });
    // forwarded to the plan phase: the planner was given it …
    expect(w.callsOf("planner")[0]?.prompt).toContain(concern?.id);
    // … and the reviewer saw it as a must-address constraint
    expect(w.callsOf("plan_reviewer")[0]?.prompt).toContain(concern?.id);
    expect(r.status).toBe("ready");
  });

  it("a lone HIGH in a council is kept as advisory MEDIUM and never dropped", async () => {
    const w = scriptedWorld((c) =>
      c.role === "plan.builder" ? findings({ severity: "HIGH", concern: "Step 3 does not name the file it edits", category: "clarity" }) : agreeable(c),
    );
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    const r = await w.plan(id);
    expect(r.stages.find((s) => s.phase === "plan")).toMatchObject({ rounds: 1, outcome: "converged", concerns_forwarded: 1 });
    expect(r.pending_concerns).toEqual([expect.objectContaining({ severity: "MEDIUM", raised_by: "plan.builder", must_address_by: "implement" })]);
  });

  it("two critics raising the same HIGH (paraphrased) block the stage", async () => {
    const w = scriptedWorld((c) => {
      if (c.role === "plan.builder") return findings({ severity: "HIGH", concern: "Missing test for the retry path.", category: "tests" });
      if (c.role === "plan.tester") return findings({ severity: "HIGH", concern: "missing tests for retry path", category: "tests" });
      return agreeable(c);
    });
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    const r = await w.plan(id);
    const plan = r.stages.find((s) => s.phase === "plan");
    expect(plan?.outcome).toBe("oscillation");
    expect(r.pending_concerns.filter((c) => c.severity === "HIGH")).toHaveLength(1);
  });

  it("a crashing critic contributes nothing; the rest of the council still decides", async () => {
    const w = scriptedWorld((c) => (c.role === "plan.risk_skeptic" ? new Error("model exploded") : agreeable(c)));
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    const r = await w.plan(id);
    expect(r.stages.find((s) => s.phase === "plan")).toMatchObject({ rounds: 1, outcome: "converged" });
    expect(r.status).toBe("ready");
  });

  it("every critic of a stage failing three rounds in a row ends it as crashed with one synthetic HIGH concern", async () => {
    const w = scriptedWorld((c) => (c.role === "spec.judge" ? "not json at all" : agreeable(c)));
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    const r = await w.plan(id);
    const spec = r.stages.find((s) => s.phase === "spec");
    expect(spec).toMatchObject({ rounds: 3, outcome: "crashed" });
    const synthetic = r.pending_concerns.filter((c) => c.phase === "spec");
    expect(synthetic).toEqual([expect.objectContaining({ severity: "HIGH", raised_by: "council" })]);
  });

  it("an auth error aborts the run with a clear error and leaves no transient label", async () => {
    const w = scriptedWorld((c) => (c.role === "shape.tech_lead" ? Object.assign(new Error("Incorrect API key"), { name: "AI_APICallError", statusCode: 401 }) : agreeable(c)));
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    await expect(w.plan(id)).rejects.toSatisfy((e) => ProviderAuthError.isInstance(e));
    noTransient(await w.labels(id));
  });

  it("a producer that cannot be reached fails the run (exit 1) and the transient label is removed", async () => {
    const w = scriptedWorld((c) => (c.role === "shape.writer" ? Object.assign(new Error("Cannot connect to API: connect ECONNREFUSED"), { code: "ECONNREFUSED" }) : agreeable(c)));
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    await expect(w.plan(id)).rejects.toSatisfy((e) => ProviderError.isInstance(e));
    const labels = await w.labels(id);
    noTransient(labels);
    expect(labels).toContain("dissent-plan");
  });

  it("the call budget is a hard ceiling: a round that could cross it is not started", async () => {
    const w = scriptedWorld(agreeable, { maxCalls: 8 });
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    await expect(w.plan(id)).rejects.toSatisfy((e) => RunError.isInstance(e) && /no plan could be made/.test((e as Error).message));
    expect(w.calls.length).toBe(5); // discover ran (1 + 4); shape (1 + 4 more) could cross 8
    const stages = w.eventsOf(id).flatMap((e) => (e.type === "AdversarialStageCompleted" ? [e.stage_run] : []));
    expect(stages.map((s) => [s.phase, s.outcome])).toEqual([["discover", "converged"], ["shape", "budget"]]);
    noTransient(await w.labels(id));
  });

  it("a budget big enough for the plan but not the reviewer ends needs_replan with the gap recorded", async () => {
    const w = scriptedWorld(agreeable, { maxCalls: 17 });
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    const r = await w.plan(id);
    expect(r.calls).toBe(17);
    expect(r.status).toBe("needs_replan");
    expect(r.pending_concerns).toEqual([expect.objectContaining({ category: "review_unavailable", must_address_by: "plan" })]);
  });

  it("a reviewer rejection leaves the label on dissent-plan and hands the finding to the next planner", async () => {
    let replan = false;
    const w = scriptedWorld((c) => {
      if (c.role === "plan_reviewer" && !replan) return findings({ severity: "HIGH", dimension: "edge_cases", concern: "Nothing handles a 429 with Retry-After" });
      if (c.role === "planner" && replan) {
        const id = /"id": "(REVIEW-[^"]+)"/.exec(c.prompt)?.[1];
        return JSON.stringify({ artifact: "# Plan v2\n\nHonour Retry-After on 429.", addressed: [{ concern_id: id, resolution_kind: "addressed-in-code", note: "step 4" }] });
      }
      return agreeable(c);
    });
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    const first = await w.plan(id);
    expect(first.status).toBe("needs_replan");
    expect(first.labels).toContain("dissent-plan");
    const finding = first.pending_concerns.find((c) => c.raised_by === "plan_reviewer");
    expect(finding).toMatchObject({ phase: "review", severity: "HIGH", must_address_by: "plan" });

    replan = true;
    const second = await w.plan(id);
    const planners = w.callsOf("planner");
    expect(planners.at(-1)?.prompt).toContain(finding?.id);
    expect(second.status).toBe("ready");
    expect(second.pending_concerns.find((c) => c.id === finding?.id)).toBeUndefined();
    const addressed = w.eventsOf(id).filter((e) => e.type === "ConcernAddressed");
    expect(addressed).toEqual([expect.objectContaining({ resolution: expect.objectContaining({ concern_id: finding?.id, resolution_kind: "addressed-in-code", resolved_by: "planner" }) })]);
    expect(second.labels).toContain("dissent-ready");
  });

  it("two distinct CRITICALs from the assumption surfacer and risk skeptic escalate to hitl", async () => {
    const w = scriptedWorld((c) => {
      if (c.role === "assumption_surfacer" && c.prompt.includes("Plan under review"))
        return findings({ severity: "CRITICAL", concern: "Assumes the upstream API is idempotent", category: "assumption" });
      if (c.role === "plan.risk_skeptic") return findings({ severity: "CRITICAL", concern: "Retrying payments can double charge", category: "risk" });
      return agreeable(c);
    });
    const id = await w.newIssue("Retry payment calls", "", LOAD_BEARING);
    const r = await w.plan(id);
    expect(r.status).toBe("hitl");
    expect(r.labels).toContain("dissent-hitl");
    noTransient(r.labels);
  });

  it("a human_required concern escalates to hitl", async () => {
    const w = scriptedWorld((c) =>
      c.role === "shape.product_strategist"
        ? findings({ severity: "MEDIUM", concern: "Whether free users get retries is a pricing decision", category: "product", human_required: true })
        : agreeable(c),
    );
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    expect((await w.plan(id)).status).toBe("hitl");
  });

  it("an interrupted cycle resumes at the first unfinished stage: finished stages are not redone", async () => {
    let broken = true;
    const w = scriptedWorld((c) => (c.role === "planner" && broken ? Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) : agreeable(c)));
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    await expect(w.plan(id)).rejects.toThrow();
    broken = false;
    const r = await w.plan(id);
    expect(r.status).toBe("ready");
    expect(w.callsOf("discover.brief")).toHaveLength(1);
    expect(w.callsOf("shape.writer")).toHaveLength(1);
    expect(r.stages.map((s) => s.phase)).toEqual(STAGES.map((s) => s.phase));
    // one gate decision for the cycle
    expect(w.eventsOf(id).filter((e) => e.type === "ComplexityGateRouted")).toHaveLength(1);
  });

  it("labels move find → plan → ready, each transient label set on entry and removed on exit, every change an event", async () => {
    const w = scriptedWorld(agreeable);
    const id = await w.newIssue("Add retries", "", LOAD_BEARING);
    await w.plan(id);
    const changes = w.eventsOf(id).flatMap((e) => (e.type === "LabelChanged" ? [[...e.added.map((l) => `+${l}`), ...e.removed.map((l) => `-${l}`)].join(" ")] : []));
    expect(changes).toEqual([
      "+dissent-plan -dissent-find",
      "+dissent-adv-discover-running",
      "-dissent-adv-discover-running",
      "+dissent-adv-shape-running",
      "-dissent-adv-shape-running",
      "+dissent-adv-plan-running",
      "-dissent-adv-plan-running",
      "+dissent-ready -dissent-plan",
    ]);
  });

  it("identical inputs give identical results and events (bar times and ids); the second run is served from the cache", async () => {
    const script = (c: SeenCall) => (c.role === "plan.tester" ? findings({ severity: "LOW", concern: "Name the test file", category: "tests" }) : agreeable(c));
    const a = scriptedWorld(script);
    const b = scriptedWorld(script);
    const ia = await a.newIssue("Add retries", "Retry 503s", LOAD_BEARING);
    const ib = await b.newIssue("Add retries", "Retry 503s", LOAD_BEARING);
    const ra = await a.plan(ia);
    const rb = await b.plan(ib);
    const strip = (r: typeof ra) => JSON.parse(JSON.stringify(r, (k, v: unknown) => (k === "raised_at" || k === "duration_ms" ? undefined : v)));
    expect(strip(ra)).toEqual(strip(rb));
    const shape = (id: string, w: typeof a) => w.eventsOf(id).map((e) => JSON.stringify(e, (k, v: unknown) => (["at", "raised_at", "latency_ms", "duration_ms"].includes(k) ? undefined : v)));
    expect(shape(ia, a)).toEqual(shape(ib, b));
    // re-planning the same issue in the same store: every call is a cache hit
    const again = await a.plan(ia);
    expect(again.calls).toBe(0);
    expect(strip({ ...again, stages: [], calls: 0 })).toEqual(strip({ ...ra, stages: [], calls: 0 }));
  });
});

describe("concern ids", () => {
  it("are never reused: every concern of an issue, across stages and cycles, has its own id", async () => {
    let cycle = 0;
    const w = scriptedWorld((c) => {
      // each critic of each stage raises a concern of its own, different in every cycle
      if (c.role !== "plan_reviewer" && c.role !== "complexity_gate" && !["discover.brief", "shape.writer", "planner", "spec.ac_generator"].includes(c.role))
        return findings({ severity: "LOW", concern: `${c.role} remark number ${cycle}`, category: "note" });
      if (c.role === "plan_reviewer" && cycle === 0) return findings({ severity: "HIGH", dimension: "correctness", concern: "Rejected once" });
      // a new plan in the second cycle: its critics are asked afresh and raise new concerns
      if (c.role === "planner") return `# Plan version ${cycle}`;
      return agreeable(c);
    });
    const id = await w.newIssue("Add retries", "", ["dissent-load-bearing"]);
    const first = await w.plan(id);
    cycle = 1;
    const second = await w.plan(id);
    const ids = [...first.pending_concerns, ...second.pending_concerns].map((c) => `${c.id} ${c.fingerprint}`);
    const byId = new Map<string, Set<string>>();
    for (const entry of ids) {
      const [cid, fp] = entry.split(" ") as [string, string];
      byId.set(cid, (byId.get(cid) ?? new Set()).add(fp));
    }
    for (const fps of byId.values()) expect(fps.size).toBe(1);
    expect(second.pending_concerns.length).toBeGreaterThan(first.pending_concerns.length);
  });
});

describe("decisions a person made stay made", () => {
  it("a human_required concern resolved by hand does not escalate again when the next plan raises it anew", async () => {
    const w = scriptedWorld((c) =>
      c.role === "shape.product_strategist"
        ? findings({ severity: "MEDIUM", concern: "Whether free users get retries is a pricing decision", category: "product", human_required: true })
        : agreeable(c),
    );
    const id = await w.newIssue("Add retries", "", ["dissent-load-bearing"]);
    const first = await w.plan(id);
    expect(first.status).toBe("hitl");
    const concern = first.pending_concerns.find((c) => c.human_required);
    const { resolveConcern } = await import("../../src/carryover/merge.js");
    const { loadState } = await import("../../src/store/state.js");
    resolveConcern(id, concern?.id ?? "", "deferred", "free users get retries too", { events: w.events, state: (i) => loadState(w.db, i) });
    const second = await w.plan(id);
    expect(second.status).toBe("ready");
    expect(second.pending_concerns.some((c) => c.human_required)).toBe(false);
  });
});

describe("determinism of the event log", () => {
  it("critics' ModelCall events are logged in council order, however the replies race", async () => {
    // the first critic of the council answers last
    const slowFirst = scriptedWorld(async (c) => {
      if (c.role === "assumption_surfacer") await new Promise((r) => setTimeout(r, 50));
      return agreeable(c);
    });
    const id = await slowFirst.newIssue("Add retries", "", ["dissent-load-bearing"]);
    await slowFirst.plan(id);
    const answered = slowFirst.calls.filter((c) => c.role.startsWith("discovery.") || c.role === "assumption_surfacer").map((c) => c.role);
    expect(answered.indexOf("assumption_surfacer")).toBe(0); // it was asked first …
    const order = slowFirst
      .eventsOf(id)
      .flatMap((e) => (e.type === "ModelCall" && e.stage === "discovery_council" && e.round === 1 ? [e.role] : []));
    expect(order).toEqual(["discover.brief", "assumption_surfacer", "discovery.problem_sharpener", "discovery.existing_solution_hunter", "discovery.cheapest_test_advocate"]);
  });
});
