import type { CallToolResult } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { DissentError, messageOf } from "../errors.js";
import { missingOptional } from "../opt-in.js";
import { redactDeep } from "../redact.js";
import { terminalSafe } from "../terminal.js";

/**
 * A tool's answer (docs/mcp.md): the structured result, redacted (a key a model echoed never reaches
 * a client) and read through the tool's own output schema — so it holds exactly the fields
 * `tools/list` declares, whatever the library adds later — and a short text rendering of it for
 * clients that show text only, terminal-safe.
 */
export function toolResult<O extends z.ZodType>(output: O, value: z.input<O>, text: (v: z.output<O>) => string, redact: (s: string) => string): CallToolResult {
  const shown = output.parse(redactDeep(value, redact));
  return { structuredContent: shown, content: [{ type: "text", text: terminalSafe(redact(text(shown))) }] };
}

/**
 * A tool error (docs/mcp.md): dissent's one-line message as the CLI prints it — never a stack, never
 * a key — marked `isError` so the agent sees it failed.
 */
export function toolError(e: unknown, redact: (s: string) => string): CallToolResult {
  const err = missingOptional(e) ?? e;
  const line = terminalSafe(redact(messageOf(err)).split("\n")[0] ?? "");
  return { isError: true, content: [{ type: "text", text: `dissent: error: ${DissentError.isInstance(err) ? line : `internal error: ${line}`}` }] };
}
