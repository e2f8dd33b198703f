import { McpServer } from "@modelcontextprotocol/server";
import type { Dissent } from "../dissent.js";
import { packageVersion } from "../package-root.js";
import { registerResources } from "./resources.js";
import { registerTools } from "./tools.js";

/**
 * dissent as an MCP server: six tools and two resource templates (docs/mcp.md), over the instance
 * `dissent()` returns (it throws the config's error, which each call then reports). `track` is told of
 * every tool call's work, so a stopping server can wait for it.
 */
export function createMcpServer(dissent: () => Dissent, track?: (work: Promise<unknown>) => void): McpServer {
  const server = new McpServer(
    { name: "dissent", version: packageVersion() },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, logging: {} },
      instructions:
        "dissent audits LLM work adversarially. Use `challenge` on a draft before relying on it, `known_gaps` before changing code to learn what shipped with a known gap there, and `plan_issue` to plan an issue through dissent's councils.",
    },
  );
  registerTools(server, dissent, track);
  registerResources(server, dissent);
  return server;
}
