import { readFileSync } from "node:fs";
import type { Client, Tool } from "@modelcontextprotocol/client";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { afterEach, describe, expect, test } from "vitest";
import { council, findings, holdConfig } from "../support/hold.js";
import { GAP_ID, httpClient, mcpFolder, startHttp, stdioClient } from "../support/mcp.js";
import { startOpenAIServer } from "../support/openai-server.js";

/**
 * Every tool's result is what its `outputSchema` declares (docs/mcp.md "Tools"), checked as a client
 * checks it: the official SDK client lists the tools, calls each one, and validates the structured
 * result with its own JSON Schema validator — over stdio and over Streamable HTTP. Issue ids go as
 * numbers, as the Inspector and many agents send them.
 */

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

/** A real frontier model's audit of a draft that breaks its policy (shared/real-model/gate/0087): a grounded CRITICAL with a suggested fix. */
const REAL = "/work/shared/real-model/gate/0087";
const realRequest = JSON.parse(readFileSync(`${REAL}.txt`, "utf8").split("===== user =====\n")[1] ?? "{}") as {
  prompt: string;
  executor_output: string;
  policies: string[];
};
const REAL_AUDIT = readFileSync(`${REAL}.reply.txt`, "utf8");

/** The plan tester's advisory finding, left pending after the plan: what resolve_concern resolves. */
const MEDIUM = {
  severity: "MEDIUM",
  category: "test_strategy",
  concern: "No test covers a retry after a timeout.",
  evidence: "A plain, stable draft from planner",
};

async function serverFor(transport: "stdio" | "http"): Promise<Client> {
  const models = await startOpenAIServer(council({ challenger: REAL_AUDIT, "plan.tester": findings([MEDIUM]) }));
  open.push(models);
  const f = await mcpFolder(holdConfig(models.url), { gap: true });
  open.push({ close: async () => f.cleanup() });
  if (transport === "stdio") {
    const s = await stdioClient(f);
    open.push(s);
    return s.client;
  }
  const server = await startHttp(f);
  open.push(server);
  const client = await httpClient(server.url);
  open.push(client);
  return client;
}

describe.each(["stdio", "http"] as const)("every tool over %s", (transport) => {
  test("returns structured content its declared outputSchema accepts, as the SDK client's own validator checks it", async () => {
    const client = await serverFor(transport);
    const { tools } = await client.listTools();
    const validator = new AjvJsonSchemaValidator();
    const results = new Map<string, Record<string, unknown>>();
    const call = async (tool: Tool, args: Record<string, unknown>) => {
      // The client itself validates structuredContent against the listed outputSchema: an invalid result throws here.
      const r = await client.callTool({ name: tool.name, arguments: args }, { timeout: 60_000 });
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      expect(tool.outputSchema, `${tool.name} declares an outputSchema`).toBeDefined();
      const checked = validator.getValidator(tool.outputSchema ?? {})(r.structuredContent);
      expect(checked.errorMessage, `${tool.name}: ${JSON.stringify(r.structuredContent)}`).toBeUndefined();
      expect(checked.valid).toBe(true);
      results.set(tool.name, r.structuredContent as Record<string, unknown>);
      return r.structuredContent as Record<string, unknown>;
    };
    const byName = new Map(tools.map((t) => [t.name, t]));
    const tool = (name: string) => {
      const t = byName.get(name);
      if (!t) throw new Error(`no tool ${name} in tools/list`);
      return t;
    };

    const challenged = await call(tool("challenge"), {
      prompt: realRequest.prompt,
      draft: realRequest.executor_output,
      policies: realRequest.policies,
    });
    expect(challenged).toMatchObject({ verdict: "needs_work", challenger_status: "ok" });
    expect(challenged.concerns).toEqual([
      expect.objectContaining({
        category: "policy_compliance",
        severity: "critical",
        suggested_fix: expect.stringContaining("Remove the stock recommendation"),
      }),
    ]);
    await call(tool("audit"), { prompt: "What is 2 + 2?" });
    const gaps = await call(tool("known_gaps"), { text: "Retry a failed upload after a timeout" });
    expect((gaps.gaps as { id: string }[]).map((g) => g.id)).toEqual([GAP_ID]);
    const planned = await call(tool("plan_issue"), {
      title: "Retry failed uploads",
      body: "Uploads fail on flaky networks.",
      labels: ["dissent-load-bearing"],
    });
    expect(planned).toMatchObject({ issue: "1", status: "ready" });
    const status = await call(tool("issue_status"), { issue: 1 });
    const pending = status.pending_concerns as { id: string; concern: string }[];
    const medium = pending.find((c) => c.concern === MEDIUM.concern);
    expect(medium, JSON.stringify(pending)).toBeDefined();
    const resolved = await call(tool("resolve_concern"), { issue: 1, concern: medium?.id, kind: "deferred", note: "tracked in #99" });
    expect(resolved).toMatchObject({
      concern_id: medium?.id,
      resolution_kind: "deferred",
      resolved_by: "human",
      fingerprint: expect.stringMatching(/^[0-9a-f]{16,}$/),
    });

    // Every listed tool was called: a new tool without a case here fails this test.
    expect([...results.keys()].sort()).toEqual(tools.map((t) => t.name).sort());
  });
});

describe("tool descriptions", () => {
  test("each is one or two plain sentences, with no ADR numbers and no misspelt plurals", async () => {
    const client = await serverFor("stdio");
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(6);
    for (const t of tools) {
      const d = t.description ?? "";
      expect(d, t.name).toMatch(/^[A-Z].*\.$/s);
      expect(d.split(/(?<=\.)\s+(?=[A-Z])/).length, `${t.name}: ${d}`).toBeLessThanOrEqual(3);
      expect(d, t.name).not.toMatch(/ADR-?\d|policys|\(ADR/);
      for (const [name, p] of Object.entries((t.inputSchema.properties ?? {}) as Record<string, { description?: string }>))
        expect(p.description ?? "", `${t.name}.${name}`).not.toMatch(/policys|constraintss/);
    }
  });
});
