import { stripThink } from "./json.js";
import { INCOMPLETE_STREAM } from "./sse-fetch.js";

/** Why a reply is not an answer: cut off before it finished, or nothing left once reasoning is removed. */
export type NotAnAnswer = "truncated" | "empty_reply";

/** What the rule looks at: the reply's text and how it ended (the unified finish reason, and the provider's own). */
export interface ReplyEnd {
  text: string;
  /** `length` when the provider cut the reply off at its token limit. */
  finishReason: string | undefined;
  /** The provider's raw finish reason (a stream that stopped unfinished says INCOMPLETE_STREAM). */
  rawFinishReason?: string | undefined;
}

/**
 * The one rule for what is an answer (docs/configuration.md), applied by the call door (`run`, the
 * pipeline, `runAudit`) and by `auditMiddleware` alike: a reply cut off at its length limit, or a
 * stream that stopped unfinished, is `truncated`; a reply with nothing but reasoning is `empty_reply`.
 */
export function notAnAnswer(reply: ReplyEnd): NotAnAnswer | undefined {
  if (reply.finishReason === "length" || reply.rawFinishReason === INCOMPLETE_STREAM) return "truncated";
  if (stripThink(reply.text).trim() === "") return "empty_reply";
  return undefined;
}
