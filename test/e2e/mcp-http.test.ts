import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, test } from "vitest";
import { BIN, dissent, scratch } from "../support/cli.js";
import { council, holdConfig } from "../support/hold.js";
import { httpClient, mcpFolder, startHttp } from "../support/mcp.js";
import { startOpenAIServer } from "../support/openai-server.js";

/** `dissent mcp --http` (docs/mcp.md): the Streamable HTTP transport behind `serve`'s token rule. */

const TOKEN = "mcp-test-token-4f1c9a";
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

/** A folder with a config and one known gap in its wiki. */
async function folder() {
  const models = await startOpenAIServer(council());
  const s = scratch("dissent-mcp-http-");
  open.push({ close: async () => (await models.close(), s.cleanup()) });
  s.write("dissent.config.yaml", holdConfig(models.url));
  const env = { DISSENT_HOME: join(s.dir, "home") };
  mkdirSync(join(s.dir, "entries"));
  writeFileSync(
    join(s.dir, "entries", "upload-retries-duplicate-files-0123456789abcdef.md"),
    [
      "---",
      "title: Upload retries store duplicate files when the first attempt succeeded late",
      "confidence: high",
      "stale: false",
      "pr: 7",
      'issue: "1"',
      "source: shipped-with-known-gap",
      "fingerprint: 0123456789abcdef",
      "severity: HIGH",
      "---",
      "# Upload retries store duplicate files when the first attempt succeeded late",
      "",
      "Retrying an upload whose first attempt timed out client-side stores the file twice.",
      "",
    ].join("\n"),
  );
  const imported = await dissent(["wiki", "import", "entries"], { cwd: s.dir, env });
  expect(imported.code, imported.stderr).toBe(0);
  return { dir: s.dir, env };
}

/** Starts `dissent mcp ARGS` and resolves with its URL once it prints it on stderr. */
function start(dir: string, args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, "mcp", ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: dir, ...env }, stdio: "pipe" });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  open.push({
    close: async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
  });
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString("utf8");
      const url = /^dissent mcp: (http:\/\/\S+)/m.exec(stderr)?.[1];
      if (url) resolve({ child, url, exited });
    });
    void exited.then((code) => reject(new Error(`dissent mcp exited ${String(code)}: ${stderr}`)));
  });
}

describe("dissent mcp --http", () => {
  test("refuses a non-loopback address without a token: one line, exit 2, nothing served", async () => {
    const { dir, env } = await folder();
    const r = await dissent(["mcp", "--http", "0.0.0.0:0"], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^dissent: error: --http 0\.0\.0\.0 is not a loopback address: set DISSENT_MCP_TOKEN to a secret first/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    const named = await dissent(["mcp", "--http", "0.0.0.0:0", "--token-env", "MY_MCP_TOKEN"], { cwd: dir, env });
    expect(named.stderr).toMatch(/set MY_MCP_TOKEN to a secret first/);
  });

  test("with a token, every request needs it; the SDK's HTTP client that sends it gets the known gap; SIGTERM exits 143", async () => {
    const { dir, env } = await folder();
    const { child, url, exited } = await start(dir, ["--http", "127.0.0.1:0"], { ...env, DISSENT_MCP_TOKEN: TOKEN });
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(initialize),
      });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: "Bearer wrong" })).status).toBe(401);

    const client = new Client({ name: "dissent-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    const r = await client.callTool({ name: "known_gaps", arguments: { text: "Retry a failed upload after a timeout" } });
    expect(r.isError).toBeFalsy();
    const gaps = (r.structuredContent as { gaps: { id: string; severity: string; prs: number[] }[] }).gaps;
    expect(gaps.map((g) => g.id)).toEqual(["upload-retries-duplicate-files-0123456789abcdef"]);
    expect(gaps[0]).toMatchObject({ severity: "HIGH", prs: [7] });
    const none = await client.callTool({ name: "known_gaps", arguments: { text: "Change the colour of the login button" } });
    expect(none.structuredContent).toEqual({ gaps: [] });
    await client.close();

    child.kill("SIGTERM");
    expect(await exited).toBe(143);
  });

  test("on loopback without a token, a request naming another host is refused (DNS rebinding)", async () => {
    const { dir, env } = await folder();
    const { url } = await start(dir, ["--http", "127.0.0.1:0"], env);
    const port = new URL(url).port;
    const { request } = await import("node:http");
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { host: `evil.example:${port}`, "content-type": "application/json" } },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.on("error", reject);
      req.end("{}");
    });
    expect(status).toBe(421);
  });

  test("plan_issue's progress names each model call as it ends, and a warning reaches the client as a log message", async () => {
    const models = await startOpenAIServer(council({ challenger: { status: 503 } }));
    open.push(models);
    const f = await mcpFolder(holdConfig(models.url));
    open.push({ close: async () => f.cleanup() });
    const server = await startHttp(f);
    open.push(server);
    const client = await httpClient(server.url);
    open.push(client);
    const logged: { level: string; data: unknown }[] = [];
    client.setNotificationHandler("notifications/message", (n) => void logged.push({ level: n.params.level, data: n.params.data }));

    const said: string[] = [];
    const r = await client.callTool(
      { name: "plan_issue", arguments: { title: "Retry failed uploads", body: "Uploads fail.", labels: ["dissent-load-bearing"] } },
      { onprogress: (p) => void said.push(p.message ?? ""), timeout: 60_000 },
    );
    expect(r.isError).toBeFalsy();
    expect(said).toContain("shape stage, round 1: shape.writer answered");
    // One per model call, but the plan reviewer's, whose answer is the result.
    expect(said.filter((m) => / answered$/.test(m))).toHaveLength(models.requests.length - 1);
    expect(said.at(-1)).toBe("plan review: asking the plan reviewer");

    // Over HTTP the server's stderr is not the agent's: the fail-open warning comes as an MCP log message.
    const audit = await client.callTool({ name: "challenge", arguments: { prompt: "What is 2 + 2?", draft: "It is 4." } });
    expect(audit.structuredContent).toMatchObject({ challenger_status: "failed", verdict: null });
    expect(logged).toContainEqual({ level: "warning", data: expect.stringMatching(/^the challenger failed, the draft is unaudited: .*503/) });
  });
});
