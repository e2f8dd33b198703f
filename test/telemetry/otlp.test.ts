/**
 * Telemetry (docs/serve.md): with an endpoint set, `issue plan` and `run --audit` export OTLP/HTTP
 * traces following the GenAI semantic conventions to a local receiver — a workflow span, a span per
 * stage and round, a `chat {model}` span per call, `gen_ai.evaluation.result` events for the
 * challenger's verdict and each critic's vote — with no prompt or reply text unless log_content.
 * A collector that does not answer costs one warning, never the run.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { closedPort } from "../support/e2e.js";
import { ISSUES, serveWorld, type ServeWorld } from "../serve/world.js";
import { startReceiver, type Receiver, type Span } from "./receiver.js";

vi.setConfig({ testTimeout: 120_000 });

let w: ServeWorld | undefined;
let r: Receiver | undefined;
afterEach(async () => {
  await w?.close();
  await r?.close();
  w = undefined;
  r = undefined;
});

const PROMPT = "How large may an upload be on the zebra-quartz profile page?";

async function tracedWorld(extra = ""): Promise<{ w: ServeWorld; r: Receiver }> {
  const receiver = await startReceiver();
  const world = await serveWorld({
    extraConfig: `telemetry: { otlp_endpoint: "${receiver.url}", service_name: dissent-test }\n${extra}`,
    provider: "max_tokens: 512",
  });
  w = world;
  r = receiver;
  return { w: world, r: receiver };
}

const named = (spans: Span[], name: string) => spans.filter((s) => s.name === name);

describe("traces of issue plan", () => {
  it("a workflow span, a span per stage and round, a chat span per call with the convention's attributes, and each critic's vote", async () => {
    const { w, r } = await tracedWorld();
    const id = await w.newIssue(ISSUES.shipped.title, ISSUES.shipped.body);
    const plan = await w.run(["issue", "plan", id, "--json"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).not.toMatch(/telemetry/);
    const spans = r.spans();
    expect(r.contentTypes.every((c) => c.startsWith("application/json"))).toBe(true);

    const [root, ...others] = named(spans, "invoke_workflow dissent.issue_plan");
    expect(others).toHaveLength(0);
    expect(root?.attrs).toMatchObject({
      "gen_ai.operation.name": "invoke_workflow",
      "gen_ai.workflow.name": "dissent.issue_plan",
      "dissent.issue.id": id,
      "dissent.plan.status": "ready",
    });
    expect(root?.resource["service.name"]).toBe("dissent-test");
    expect(spans.every((s) => s.traceId === root?.traceId)).toBe(true);

    const stages = spans.filter((s) => s.name.startsWith("stage "));
    expect(stages.map((s) => s.name).sort()).toEqual(["stage discovery_council", "stage plan_council", "stage shape_council", "stage spec_judge"]);
    for (const st of stages) {
      expect(st.parentSpanId).toBe(root?.spanId);
      expect(st.attrs["dissent.stage.outcome"]).toMatch(/converged|oscillation|exhausted/);
    }
    const rounds = spans.filter((s) => s.name.startsWith("round "));
    expect(rounds.length).toBeGreaterThanOrEqual(4);
    for (const rd of rounds) expect(stages.map((s) => s.spanId)).toContain(rd.parentSpanId);

    const chats = spans.filter((s) => s.name.startsWith("chat "));
    const calls = w.server.requests.length;
    expect(chats).toHaveLength(calls); // one client span per model call
    for (const c of chats) {
      expect(c.kind).toBe(3); // SPAN_KIND_CLIENT
      expect(c.name).toBe(`chat ${String(c.attrs["gen_ai.request.model"])}`);
      expect(c.attrs).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "local",
        "gen_ai.request.seed": 7,
        "gen_ai.request.temperature": 0,
        "gen_ai.request.max_tokens": 512,
      });
      expect(c.attrs["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
      expect(c.attrs["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
      expect(c.attrs["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
      expect(c.attrs["error.type"]).toBeUndefined();
    }
    // A critic's call sits under its round; the gate and the reviewer under the workflow.
    const judge = chats.find((c) => c.attrs["dissent.role"] === "spec.judge");
    expect(rounds.map((x) => x.spanId)).toContain(judge?.parentSpanId);
    expect(chats.find((c) => c.attrs["dissent.role"] === "plan_reviewer")?.parentSpanId).toBe(root?.spanId);

    // Every critic's vote: a gen_ai.evaluation.result event named after the role, labelled by severity.
    const votes = rounds.flatMap((x) => x.events.filter((e) => e.name === "gen_ai.evaluation.result"));
    const critics = chats.filter(
      (c) => /council|judge/.test(String(c.attrs["dissent.stage"])) && !/brief|writer|planner|generator/.test(String(c.attrs["dissent.role"])),
    );
    expect(votes).toHaveLength(critics.length);
    const sharpener = votes.filter((v) => v.attrs["gen_ai.evaluation.name"] === "discovery.problem_sharpener");
    expect(sharpener[0]?.attrs).toMatchObject({
      "gen_ai.evaluation.score.label": "CRITICAL",
      "gen_ai.evaluation.score.value": 1,
      "gen_ai.evaluation.explanation": "1 CRITICAL",
    });
    const quiet = votes.find((v) => v.attrs["gen_ai.evaluation.name"] === "shape.challenger");
    expect(quiet?.attrs).toMatchObject({ "gen_ai.evaluation.score.label": "NONE", "gen_ai.evaluation.score.value": 0 });
  });

  it("carries no prompt or reply text by default, and both with log_content: true", async () => {
    const { w, r } = await tracedWorld();
    const id = await w.newIssue("Quartz zebra uploads", "The zebra-quartz upload page needs a size limit.");
    expect((await w.run(["issue", "plan", id, "--json"])).code).toBe(0);
    expect((await w.run(["run", "--audit", PROMPT])).code).toBe(0);
    const all = r.bodies.join("\n");
    expect(all).toContain("gen_ai.usage.input_tokens");
    expect(all).not.toContain("zebra-quartz");
    expect(all).not.toContain("Uploads over 10 MB"); // the executor's reply
    expect(all).not.toContain("gen_ai.input.messages");
    await w.close();
    await r.close();

    const traced = await tracedWorld("log_content: true");
    expect((await traced.w.run(["run", "--audit", PROMPT])).code).toBe(0);
    const withContent = traced.r.bodies.join("\n");
    expect(withContent).toContain("zebra-quartz");
    expect(withContent).toContain("Uploads over 10 MB");
    const exec = traced.r.spans().find((s) => s.attrs["dissent.role"] === "executor");
    expect(JSON.parse(String(exec?.attrs["gen_ai.input.messages"]))).toEqual([
      { role: "user", parts: [{ type: "text", content: expect.stringContaining("zebra-quartz") }] },
    ]);
  });
});

describe("traces of run", () => {
  it("a workflow span with the executor's and the challenger's chat spans, and the challenger's verdict as an evaluation event", async () => {
    const { w, r } = await tracedWorld();
    const run = await w.run(["run", "--audit", "--json", PROMPT]);
    expect(run.code, run.stderr).toBe(0);
    const runId = (JSON.parse(run.stdout) as { run: { run_id: string } }).run.run_id;
    const spans = r.spans();
    const root = named(spans, "invoke_workflow dissent.run")[0];
    expect(root?.attrs).toMatchObject({ "gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "dissent.run", "dissent.run.id": runId });
    expect(spans.filter((s) => s.parentSpanId === root?.spanId).map((s) => s.name)).toEqual(["chat executor", "chat challenger"]);
    const verdict = root?.events.find((e) => e.name === "gen_ai.evaluation.result");
    expect(verdict?.attrs).toMatchObject({
      "gen_ai.evaluation.name": "challenger",
      "gen_ai.evaluation.score.label": "pass",
      "gen_ai.evaluation.score.value": 0,
    });
  });

  it("marks a failed call with error.type and a failed challenger on its verdict", async () => {
    const { w, r } = await tracedWorld();
    w.failModel("challenger");
    const run = await w.run(["run", "--audit", "--json", PROMPT]);
    expect(run.code, run.stderr).toBe(0); // the challenger fails open (docs/run.md)
    expect(JSON.parse(run.stdout)).toMatchObject({ audit_meta: { challenger_status: "failed" } });
    const spans = r.spans();
    const challenger = spans.find((s) => s.name === "chat challenger");
    expect(challenger?.attrs["error.type"]).toBeTruthy();
    // One span for the call, its retries counted on it: the server saw every attempt as a request.
    const asked = w.server.requests.filter((q) => q.body.model === "challenger").length;
    expect(asked).toBeGreaterThan(1);
    expect(challenger?.attrs["dissent.attempts"]).toBe(asked);
    expect(spans.filter((s) => s.name === "chat challenger")).toHaveLength(1);
    expect(spans.find((s) => s.name === "chat executor")?.attrs["dissent.attempts"]).toBe(1);
    expect(challenger?.status?.code).toBe(2); // STATUS_CODE_ERROR
    const root = named(spans, "invoke_workflow dissent.run")[0];
    expect(root?.events.find((e) => e.name === "gen_ai.evaluation.result")?.attrs).toMatchObject({
      "gen_ai.evaluation.name": "challenger",
      "gen_ai.evaluation.score.label": "failed",
      "error.type": "challenger_failed",
    });
  });
});

describe("a collector that does not answer", () => {
  it("costs one warning line and never the run; the CLI still exits promptly", async () => {
    const port = await closedPort();
    const world = await serveWorld({ extraConfig: `telemetry: { otlp_endpoint: "http://127.0.0.1:${port}" }` });
    w = world;
    const id = await world.newIssue(ISSUES.waiting.title, ISSUES.waiting.body);
    const started = Date.now();
    const plan = await world.run(["issue", "plan", id, "--json"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ status: "ready" });
    const warnings = plan.stderr.split("\n").filter((l) => /telemetry/.test(l));
    expect(warnings, plan.stderr).toHaveLength(1);
    expect(warnings[0]).toMatch(/^dissent: warning: telemetry: sending traces to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed/);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("OTEL_EXPORTER_OTLP_ENDPOINT turns it on too", async () => {
    const receiver = await startReceiver();
    r = receiver;
    const world = await serveWorld();
    w = world;
    const run = await world.run(["run", "--audit", PROMPT], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    expect(run.code, run.stderr).toBe(0);
    expect(named(receiver.spans(), "invoke_workflow dissent.run")).toHaveLength(1);
  });
});
