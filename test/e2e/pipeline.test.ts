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
  dir = scratch();
  dir.write("dissent.config.yaml", rolesConfig(server.url));
});
afterEach(async () => {
  await server.close();
  dir.cleanup();
});

const run = (...args: string[]) => dissent(args, { cwd: dir.dir });
const show = async (id: string) =>
  JSON.parse((await run("issue", "show", id, "--json")).stdout) as { labels: string[]; status: string; stages: { phase: string }[] };
const requestsFor = (model: string) => server.requests.filter((r) => r.body.model === model).length;

describe("dissent issue (CLI, end to end)", () => {
  it("new → plan --json prints the contract's object; show, list and events agree", async () => {
    const created = await run("issue", "new", "--title", "Add retries to the HTTP client", "--body", "Retry 503s", "--json");
    expect(created.code).toBe(0);
    const { id } = JSON.parse(created.stdout) as { id: string };
    const planned = await run("issue", "plan", id, "--json");
    expect(planned.code).toBe(0);
    const out = JSON.parse(planned.stdout) as Record<string, unknown>;
    expect(Object.keys(out).sort()).toEqual(
      ["issue", "route", "route_reason", "status", "plan", "acceptance_criteria", "pending_concerns", "stages", "labels", "calls"].sort(),
    );
    // no label or keyword decides this issue: the gate asks the model once (1 + 18 stage and review calls)
    expect(out).toMatchObject({ issue: id, route: "load_bearing", status: "ready", labels: ["dissent-ready"], calls: 19 });
    expect(requestsFor("complexity_gate")).toBe(1);
    const stages = out.stages as Record<string, unknown>[];
    expect(stages).toHaveLength(4);
    for (const s of stages) {
      for (const k of ["stage", "phase", "rounds", "retries", "outcome", "concerns_raised", "concerns_forwarded", "duration_ms", "calls"])
        expect(s).toHaveProperty(k);
    }
    expect((await show(id)).status).toBe("ready");
    const list = JSON.parse((await run("issue", "list", "--json")).stdout) as { id: string; status: string }[];
    expect(list).toEqual([expect.objectContaining({ id, status: "ready" })]);
    const events = (await run("events", "--issue", id, "--json")).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; issue_id: string });
    expect(events.every((e) => e.issue_id === id)).toBe(true);
    expect(new Set(events.map((e) => e.type))).toEqual(
      new Set(["LabelChanged", "ComplexityGateRouted", "AdversarialStageStarted", "AdversarialStageCompleted", "ModelCall"]),
    );
    // every request of the pipeline: temperature 0, the seed, no tools
    expect(server.requests.every((r) => r.body.temperature === 0 && r.body.seed === 7 && r.body.tools === undefined)).toBe(true);
  });

  it("human output is a readable stage table", async () => {
    await run("issue", "new", "--title", "Add retries to the API client");
    const r = await run("issue", "plan", "1");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/phase\s+stage\s+rounds\s+outcome/);
    expect(r.stdout).toMatch(/discover\s+discovery_council\s+1\s+converged/);
    expect(r.stdout).toContain("status: ready");
  });

  it("an unknown issue is a one-line error, exit 1", async () => {
    const r = await run("issue", "plan", "42");
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^dissent: error: no issue 42/);
  });

  it("a budget below what one load-bearing issue needs is a configuration error naming the minimum (docs/issue.md)", async () => {
    dir.write("dissent.config.yaml", rolesConfig(server.url, "budget: { max_calls_per_issue: 6 }"));
    const r = await run("issue", "list");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dissent: error: .*budget\.max_calls_per_issue.*19/);
    expect(server.requests).toHaveLength(0);
  });

  it("Ctrl-C mid-stage exits 130 and leaves no transient label", async () => {
    await run("issue", "new", "--title", "Add retries to the API client");
    handler = async (model) =>
      model.startsWith("shape.") && model !== "shape.writer" ? { content: agreeableReply(model), delayMs: 20_000 } : { content: agreeableReply(model) };
    const { child, done } = startDissent(["issue", "plan", "1"], { cwd: dir.dir });
    await until(() => requestsFor("shape.challenger") > 0);
    expect((await show("1")).labels).toContain("dissent-adv-shape-running");
    child.kill("SIGINT");
    const r = await done;
    expect(r.code).toBe(130);
    const after = await show("1");
    expect(after.labels.filter((l) => l.endsWith("-running"))).toEqual([]);
    expect(after.status).toBe("planning");
  });

  it("SIGTERM mid-stage also clears the transient label", async () => {
    await run("issue", "new", "--title", "Add retries to the API client");
    handler = async (model) => (model === "plan.tester" ? { content: agreeableReply(model), delayMs: 20_000 } : { content: agreeableReply(model) });
    const { child, done } = startDissent(["issue", "plan", "1"], { cwd: dir.dir });
    await until(() => requestsFor("plan.tester") > 0);
    child.kill("SIGTERM");
    expect((await done).code).toBe(143);
    expect((await show("1")).labels.filter((l) => l.endsWith("-running"))).toEqual([]);
  });

  it("kill -9 mid-stage, then plan again: resumes at the first unfinished stage and clears the stale label", async () => {
    await run("issue", "new", "--title", "Add retries to the API client");
    handler = async (model) => (model === "shape.tech_lead" ? { content: agreeableReply(model), delayMs: 20_000 } : { content: agreeableReply(model) });
    const { child, done } = startDissent(["issue", "plan", "1"], { cwd: dir.dir });
    await until(() => requestsFor("shape.tech_lead") > 0);
    child.kill("SIGKILL");
    await done;
    expect((await show("1")).labels).toContain("dissent-adv-shape-running");

    handler = (model) => ({ content: agreeableReply(model) });
    const r = await run("issue", "plan", "1", "--json");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { status: string; labels: string[]; stages: { phase: string }[] };
    expect(out.status).toBe("ready");
    expect(out.labels).toEqual(["dissent-ready"]);
    expect(out.stages.map((s) => s.phase)).toEqual(["discover", "shape", "plan", "spec"]);
    expect(requestsFor("discover.brief")).toBe(1); // discover finished before the kill: not redone
  });
});
