import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { DissentError, messageOf } from "../errors.js";
import { missingOptional } from "../opt-in.js";
import { redactDeep } from "../redact.js";

/** Terminal control sequences and control characters (bar newline and tab), kept out of what an agent is shown. */
const CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * A tool's answer (docs/mcp.md): the structured result, redacted (a key a model echoed never reaches
 * a client), and a short text rendering of it for clients that show text only.
 */
export function toolResult<T extends Record<string, unknown>>(value: T, text: (v: T) => string, redact: (s: string) => string): CallToolResult {
  const shown = redactDeep(value, redact);
  return { structuredContent: shown, content: [{ type: "text", text: redact(text(shown)).replace(CONTROL, "") }] };
}

/**
 * A tool error (docs/mcp.md): dissent's one-line message as the CLI prints it — never a stack, never
 * a key — marked `isError` so the agent sees it failed.
 */
export function toolError(e: unknown, redact: (s: string) => string): CallToolResult {
  const err = missingOptional(e) ?? e;
  const line = (redact(messageOf(err)).split("\n")[0] ?? "").replace(CONTROL, "");
  return { isError: true, content: [{ type: "text", text: `dissent: error: ${DissentError.isInstance(err) ? line : `internal error: ${line}`}` }] };
}
