import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { council, holdConfig } from "../support/hold.js";
import { MODULES, mcpFolder, node22, startHttp } from "../support/mcp.js";
import { startOpenAIServer } from "../support/openai-server.js";

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance server --url …`, a
 * devDependency pinned to one release; it needs Node 22) against `dissent mcp --http` on 127.0.0.1.
 * Its own baseline mechanism decides: the run exits 0 only when exactly the scenarios of
 * test/fixtures/mcp/conformance-expected-failures.yaml fail — each of them a fixture of the suite's
 * "everything server" dissent does not have, or an optional capability it does not offer (the file
 * says which). A new failure, or a listed one that starts passing, fails this test.
 */

const SUITE = join(MODULES, "@modelcontextprotocol/conformance/dist/index.js");
const BASELINE = fileURLToPath(new URL("../fixtures/mcp/conformance-expected-failures.yaml", import.meta.url));

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

describe("the MCP conformance suite", () => {
  test("passes every scenario dissent's server can take part in, and fails only the baseline's", { timeout: 300_000 }, async () => {
    const models = await startOpenAIServer(council());
    open.push(models);
    const f = await mcpFolder(holdConfig(models.url));
    open.push({ close: async () => f.cleanup() });
    const server = await startHttp(f);
    open.push(server);

    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(node22(), [SUITE, "server", "--url", server.url, "--expected-failures", BASELINE, "-o", join(f.dir, "results")], {
        cwd: f.dir,
        env: { PATH: process.env.PATH ?? "", HOME: f.dir, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    const summary = run.stdout.slice(run.stdout.indexOf("=== SUMMARY ==="));
    expect(run.code, `${summary}\n${run.stderr}`).toBe(0);
    expect(summary).toContain("Baseline check passed: all failures are expected.");
    const passed = [...summary.matchAll(/^✓ (\S+): (\d+) passed, 0 failed/gm)].map((m) => m[1]);
    expect(passed.sort()).toEqual(
      ["dns-rebinding-protection", "logging-set-level", "ping", "resources-list", "server-initialize", "server-sse-multiple-streams", "tools-list"].sort(),
    );
    // The figures docs/mcp.md gives (checks, not scenarios).
    expect(summary).toMatch(/^Total: 9 passed, 23 failed$/m);
    // The server answered all of it and is still serving.
    expect(server.child.exitCode).toBeNull();
  });
});
