import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { BIN, dissent } from "../support/cli.js";
import { council, holdConfig } from "../support/hold.js";
import { GAP_ID, MODULES, mcpFolder, node22, startHttp, type McpFolder } from "../support/mcp.js";
import { startOpenAIServer } from "../support/openai-server.js";

/**
 * The official MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`, a devDependency; it
 * needs Node 22) drives `dissent mcp` as a developer does before wiring it into an agent: it lists
 * the tools with its schema portability check, and calls them — over stdio and over HTTP — with the
 * SDK client's validation of every structured result against its tool's outputSchema.
 */

const INSPECTOR = join(MODULES, "@modelcontextprotocol/inspector/clients/launcher/build/index.js");

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

/** `inspector --cli ARGS` in the folder, on Node 22, with the folder as its home (its catalog and secrets go there). */
function inspector(f: McpFolder, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node22(), [INSPECTOR, "--cli", "--format", "json", ...args], {
      cwd: f.dir,
      env: { PATH: process.env.PATH ?? "", ...f.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The stdio target: dissent as an agent launches it, on the Node that runs the tests. The Inspector
 * passes a server only the environment it is given (`-e`), as agents do: the folder's home goes so.
 */
const stdioIn = (f: McpFolder) => ["-e", `DISSENT_HOME=${f.home}`, process.execPath, BIN, "mcp"];

interface Listed {
  result: { tools: { name: string; outputSchema?: unknown }[] };
}
interface Called {
  result: { isError?: boolean; structuredContent: Record<string, unknown>; content: { type: string; text?: string }[] };
}

async function folder(): Promise<McpFolder> {
  const models = await startOpenAIServer(council());
  open.push(models);
  const f = await mcpFolder(holdConfig(models.url), { gap: true });
  open.push({ close: async () => f.cleanup() });
  return f;
}

describe("the MCP Inspector CLI", () => {
  test("lists the six tools over stdio, each with an output schema, and its portability check finds nothing", async () => {
    const f = await folder();
    const r = await inspector(f, [...stdioIn(f), "--method", "tools/list", "--strict"]);
    expect(r.code, r.stderr).toBe(0);
    const listed = JSON.parse(r.stdout) as Listed;
    expect(listed.result.tools.map((t) => t.name).sort()).toEqual(["audit", "challenge", "issue_status", "known_gaps", "plan_issue", "resolve_concern"]);
    for (const t of listed.result.tools) expect(t.outputSchema, t.name).toMatchObject({ type: "object" });
    // --strict exits 6 on an error-severity problem and prints each problem; the count line says none.
    expect(r.stderr).not.toMatch(/Warning: tool|Error: tool/);
  });

  test("calls challenge and issue_status over stdio, the issue id sent as a number", async () => {
    const f = await folder();
    const created = await dissent(["issue", "new", "--title", "Retry failed uploads", "--body", "Uploads fail."], { cwd: f.dir, env: f.env });
    expect(created.code, created.stderr).toBe(0);

    const challenged = await inspector(f, [
      ...stdioIn(f),
      "--method",
      "tools/call",
      "--tool-name",
      "challenge",
      "--tool-args-json",
      JSON.stringify({ prompt: "What is 2 + 2?", draft: "The answer is 4." }),
    ]);
    expect(challenged.code, challenged.stderr).toBe(0);
    expect((JSON.parse(challenged.stdout) as Called).result.structuredContent).toMatchObject({ verdict: "pass", challenger_status: "ok", concerns: [] });

    const status = await inspector(f, [...stdioIn(f), "--method", "tools/call", "--tool-name", "issue_status", "--tool-args-json", '{"issue": 1}']);
    expect(status.code, status.stderr).toBe(0);
    const shown = (JSON.parse(status.stdout) as Called).result;
    expect(shown.isError).toBeFalsy();
    expect(shown.structuredContent).toMatchObject({ issue: "1", title: "Retry failed uploads", status: "new", artifacts: [] });
  });

  test("calls known_gaps over Streamable HTTP", async () => {
    const f = await folder();
    const server = await startHttp(f);
    open.push(server);
    const r = await inspector(f, [
      server.url,
      "--method",
      "tools/call",
      "--tool-name",
      "known_gaps",
      "--tool-args-json",
      JSON.stringify({ text: "Retry a failed upload after a timeout" }),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const called = (JSON.parse(r.stdout) as Called).result;
    expect((called.structuredContent.gaps as { id: string }[]).map((g) => g.id)).toEqual([GAP_ID]);
    expect(called.content[0]?.text).toContain("Upload retries store duplicate files");
  });
});
