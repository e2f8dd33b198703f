/**
 * One rule for every route prefix (issue 30, "Faults a real model met"): `shape:` also routed the
 * producer `shape.writer`, while `discovery:` and `plan:` caught only critics. A dotted prefix routes
 * the critics under it, never a producer (docs/configuration.md "How a role finds its route").
 */
import { afterEach, describe, expect, it } from "vitest";
import { MockLanguageModelV3 } from "ai/test";
import { loadConfig } from "../../src/config/load.js";
import { configRouter, fixedRouter, PRODUCER_ROLES, roleChain } from "../../src/models/router.js";
import { STAGES } from "../../src/pipeline/stages.js";
import { dissent, scratch } from "../support/cli.js";
import { errorLine } from "../support/e2e.js";
import { startOpenAIServer, type FakeOpenAI } from "../support/openai-server.js";
import { agreeableReply } from "../support/roles-config.js";

let s: ReturnType<typeof scratch> | undefined;
let server: FakeOpenAI | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  s?.cleanup();
  s = undefined;
});

const config = (routes: string[], url = "http://127.0.0.1:9/v1") =>
  ["providers:", `  local: { type: openai-compatible, base_url: "${url}" }`, "routes:", '  default: { primary: "local:default-model" }', ...routes, ""].join(
    "\n",
  );

describe("a route prefix routes critics only", () => {
  it("the producers are the stage table's, and each looks up only its own name, then default", () => {
    expect([...PRODUCER_ROLES].sort()).toEqual([...new Set(STAGES.map((st) => st.producer))].sort());
    expect(roleChain("shape.writer")).toEqual(["shape.writer", "default"]);
    expect(roleChain("discover.brief")).toEqual(["discover.brief", "default"]);
    expect(roleChain("spec.ac_generator")).toEqual(["spec.ac_generator", "default"]);
    expect(roleChain("shape.tech_lead")).toEqual(["shape.tech_lead", "shape", "default"]);
    expect(roleChain("spec.judge")).toEqual(["spec.judge", "spec", "default"]);
    expect(roleChain("discovery.problem_sharpener")).toEqual(["discovery.problem_sharpener", "discovery", "default"]);
  });

  it("shape: and spec: route their councils' critics, not the shape writer or the criteria writer — as discovery: and plan: do", () => {
    s = scratch("dissent-prefix-");
    s.write("dissent.config.yaml", config(['  shape: { primary: "local:shape-model" }', '  spec: { primary: "local:spec-model" }']));
    const router = configRouter(loadConfig({ env: {}, cwd: s.dir }), {});
    expect(router("shape.tech_lead").primary.model).toBe("shape-model");
    expect(router("shape.writer").primary.model).toBe("default-model");
    expect(router("spec.judge").primary.model).toBe("spec-model");
    expect(router("spec.ac_generator").primary.model).toBe("default-model");
    // A producer's own name still routes it.
    s.write("dissent.config.yaml", config(['  shape: { primary: "local:shape-model" }', '  shape.writer: { primary: "local:writer-model" }']));
    expect(configRouter(loadConfig({ env: {}, cwd: s.dir }), {})("shape.writer").primary.model).toBe("writer-model");
  });

  it("the library's models by role follow the same rule", () => {
    const m = (id: string) => new MockLanguageModelV3({ provider: "mock", modelId: id });
    const router = fixedRouter({ default: m("default-model"), shape: m("shape-model") });
    expect(router("shape.user_advocate").primary.model).toBe("shape-model");
    expect(router("shape.writer").primary.model).toBe("default-model");
  });

  it("discover: — a prefix of a producer only — routes nothing, so it is a configuration error that says why", async () => {
    s = scratch("dissent-prefix-");
    s.write("dissent.config.yaml", config(['  discover: { primary: "local:brief-model" }']));
    const r = await dissent(["doctor"], { cwd: s.dir, env: { DISSENT_HOME: `${s.dir}/home` } });
    expect(r.code).toBe(2);
    expect(errorLine(r)).toBe(
      "dissent: error: dissent.config.yaml:5: routes.discover routes no role: a prefix routes critics only, and discover.brief is a producer — route it by its full name, or did you mean 'discovery'? (the roles are listed in docs/configuration.md)",
    );
  });

  it("issue plan with shape: set: the shape writer's requests go to default, every shape critic's to shape", async () => {
    server = await startOpenAIServer((req) => {
      const text = req.body.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
      return { content: agreeableReply(/^Role: (\S+)/m.exec(text)?.[1] ?? "") };
    });
    s = scratch("dissent-prefix-");
    s.write("dissent.config.yaml", config(['  shape: { primary: "local:shape-model" }'], server.url));
    const cli = (args: string[]) => dissent(args, { cwd: s?.dir ?? "", env: { DISSENT_HOME: `${s?.dir}/home` } });
    const id = (await cli(["issue", "new", "--title", "Add retries", "--label", "dissent-load-bearing"])).stdout.trim();
    const r = await cli(["issue", "plan", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const roleOf = (text: string) => /^Role: (\S+)/m.exec(text)?.[1];
    const modelOf = (role: string) =>
      new Set(
        server?.requests
          .filter((q) => roleOf(q.body.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n")) === role)
          .map((q) => q.body.model),
      );
    expect(modelOf("shape.writer")).toEqual(new Set(["default-model"]));
    for (const critic of STAGES.find((st) => st.phase === "shape")?.critics ?? []) expect(modelOf(critic)).toEqual(new Set(["shape-model"]));
  });
});
