import { z } from "zod";
import { AuditReply, readAuditReply, type AuditConcern, type AuditInput, type CallRecord } from "../contracts/audit.js";
import { isFatal, messageOf, ProviderAuthError, ProviderError } from "../errors.js";
import type { CallDoor, ModelReply } from "../models/call.js";
import { parseStructured } from "../models/json.js";
import type { ModelRequest, ReplySchema } from "../models/types.js";
import { promptFile } from "../prompts.js";
import { groundConcerns } from "./grounding.js";

/** What the challenger audits: a draft for a prompt, under constraints and policies. */
export interface ChallengeInput {
  prompt: string;
  draft: string;
  constraints?: readonly string[];
  policies?: readonly string[];
}

/**
 * The challenger step on its own (docs/library.md): the grounded, ungrounded and invalid concerns
 * themselves, the verdict (`needs_work` with nothing grounded is `pass`; null when the challenger
 * failed), and the call record.
 */
export interface ChallengeResult {
  status: "ok" | "failed";
  verdict: "pass" | "needs_work" | null;
  /** Grounded concerns: the evidence is in the draft. */
  concerns: AuditConcern[];
  /** Concerns dropped because their evidence is not in the draft. */
  ungrounded: AuditConcern[];
  /** List items dropped as schema-invalid (an unknown category or severity), as the challenger wrote them. */
  invalid: unknown[];
  error?: string;
  /** The challenger's call; null only when no call could be made at all. */
  call: CallRecord | null;
}

let auditSchema: ReplySchema | undefined;
/** The JSON Schema sent as `response_format`: `concerns` before `verdict`, `evidence` first in each concern. */
export function auditReplySchema(): ReplySchema {
  auditSchema ??= { name: "audit", jsonSchema: z.toJSONSchema(AuditReply, { io: "input" }) as Record<string, unknown> };
  return auditSchema;
}

/** The challenger's request: its prompt file, and exactly the four fields of ADR-009 §2 as JSON. */
export function challengeRequest(input: ChallengeInput): ModelRequest {
  const auditInput: AuditInput = {
    prompt: input.prompt,
    executor_output: input.draft,
    constraints: [...(input.constraints ?? [])],
    policies: [...(input.policies ?? [])],
  };
  const f = promptFile("prompts/challenger.md");
  return {
    system: f.text,
    messages: [{ role: "user", content: JSON.stringify(auditInput, null, 2) }],
    schema: auditReplySchema(),
    promptFile: { name: f.name, hash: f.hash },
  };
}

/**
 * Runs the challenger on a draft through the given call door. Any failure — unreachable, error
 * (a refused key included), timeout, unparseable or schema-invalid reply — is `status: "failed"`,
 * except what ends a run (the user's configuration, Ctrl-C, a replay miss), which is thrown.
 */
export async function challengeWith(call: CallDoor, input: ChallengeInput): Promise<ChallengeResult> {
  const failed = (error: string, record: CallRecord | null): ChallengeResult => ({
    status: "failed",
    verdict: null,
    concerns: [],
    ungrounded: [],
    invalid: [],
    error,
    call: record,
  });
  let reply: ModelReply<z.infer<typeof AuditReply>>;
  try {
    reply = await call({ role: "challenger" }, challengeRequest(input), (answer) =>
      // A verdict quoted from the prompt or the draft is never the challenger's (docs/configuration.md).
      parseStructured(answer, readAuditReply, { quotedFrom: [input.draft, input.prompt] }),
    );
  } catch (e) {
    // ADR-008 §5 fails open on any challenger error — a refused key included (the warning names it);
    // what ends every run (the user's configuration, Ctrl-C, a replay miss) still does.
    if (isFatal(e) && !ProviderAuthError.isInstance(e)) throw e;
    const record = ProviderError.isInstance(e) ? ((e.calls.at(-1) as CallRecord | undefined) ?? null) : null;
    return failed(messageOf(e), record);
  }
  const parsed = reply.parsed;
  if (!parsed?.ok) {
    const why = !parsed ? "no reply" : `challenger reply is ${parsed.reason === "unparseable" ? "not JSON" : "not a valid audit"}: ${parsed.error}`;
    return failed(why, reply.record);
  }
  const { grounded, ungrounded } = groundConcerns(input.draft, parsed.value.concerns);
  return {
    status: "ok",
    verdict: parsed.value.verdict === "needs_work" && grounded.length > 0 ? "needs_work" : "pass",
    concerns: grounded,
    ungrounded,
    invalid: parsed.dropped,
    call: reply.record,
  };
}
