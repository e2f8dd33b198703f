import type { LanguageModelV3CallOptions, LanguageModelV3Message } from "@ai-sdk/provider";
import type { ShownConcern } from "../contracts/audit.js";
import { revisionRequest } from "../gate/audit-gate.js";
import type { ModelRequest } from "../models/types.js";

/** The gate's revision request appended to no executor conversation: what follows the app's own. */
const NO_CONVERSATION: ModelRequest = { system: "", messages: [] };

/**
 * The wrapped model's one revision (docs/run.md): the app's own call — its prompt, settings and
 * response format (so `generateObject` revises to JSON) — followed by the draft and the gate's
 * revision message with the grounded concerns and never `suggested_fix`, exactly as the CLI builds
 * it. Tools are not offered: the revision rewrites a text answer.
 */
export function revisionParams(params: LanguageModelV3CallOptions, draft: string, concerns: readonly ShownConcern[]): LanguageModelV3CallOptions {
  const tail: LanguageModelV3Message[] = revisionRequest(NO_CONVERSATION, draft, concerns).messages.map((m) =>
    m.role === "assistant"
      ? { role: "assistant", content: [{ type: "text", text: m.content }] }
      : { role: "user", content: [{ type: "text", text: m.content }] },
  );
  const revised: LanguageModelV3CallOptions = { ...params, prompt: [...params.prompt, ...tail] };
  delete revised.tools;
  delete revised.toolChoice;
  return revised;
}
