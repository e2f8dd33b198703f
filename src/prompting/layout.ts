import type { ChatMessage, ModelRequest } from "../models/types.js";
import { DATA_RULE } from "./data-block.js";

/**
 * The system message of every pipeline and review request: the rules all roles share, and nothing
 * of any one role, so it is the byte-identical start of every request's prefix (docs/serve.md "Cost").
 */
export const COMMON_SYSTEM = DATA_RULE;

/**
 * A request as prompt caching wants it (docs/serve.md "Cost"): first what every request of a round
 * shares, byte for byte — the project, the issue, the rules its kind of role follows (a critics'
 * rubric, a producers' format), the earlier artifacts, the tracked concerns, the artifact or diff
 * under review, what changes least first — then what this request alone says: the persona, its
 * memory, the task line.
 */
export interface RequestLayout {
  /** Blocks every request of the round shares, most widely shared first. */
  shared: readonly string[];
  /** What only this request says, the persona first and the task line last. */
  own: readonly string[];
}

/** Paragraphs of a request are separated by one blank line. */
const SEP = "\n\n";

/**
 * Lays a request out for prompt caching: the common system message, then one user message holding
 * the shared blocks and, after them, this request's own. `sharedPrefix` marks where the shared part
 * ends, for providers that cache only at a marked breakpoint (Anthropic's `cache_control`).
 */
export function layoutRequest(layout: RequestLayout, rest: Pick<ModelRequest, "schema" | "promptFile"> = {}): ModelRequest {
  const shared = layout.shared.length ? layout.shared.join(SEP) + SEP : "";
  const messages: ChatMessage[] = [{ role: "user", content: shared + layout.own.join(SEP) }];
  return { system: COMMON_SYSTEM, messages, ...(shared ? { sharedPrefix: shared.length } : {}), ...rest };
}
