import { readAuditReply, type AuditConcern } from "../contracts/audit.js";
import type { ModelCallEvent } from "../contracts/events.js";
import { stripPreamble } from "../gate/audit-gate.js";
import { groundConcerns } from "../gate/grounding.js";
import { parseStructured } from "../models/json.js";
import type { RunConcern, RunText } from "./types.js";

type Content = NonNullable<ModelCallEvent["content"]>;

/** The user messages of a recorded request, in order (a request is kept as the model port's `ModelRequest`). */
function userMessages(request: unknown): string[] {
  if (typeof request !== "object" || request === null) return [];
  const messages = (request as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((m: unknown) => {
    if (typeof m !== "object" || m === null) return [];
    const { role, content } = m as { role?: unknown; content?: unknown };
    return role === "user" && typeof content === "string" ? [content] : [];
  });
}

/** The challenger's input, as its request carries it (ADR-009 §2: the four fields as JSON). */
function auditInputOf(request: unknown): { prompt: string; draft: string } | undefined {
  const first = userMessages(request)[0];
  if (first === undefined) return undefined;
  try {
    const v = JSON.parse(first) as { prompt?: unknown; executor_output?: unknown };
    return typeof v.prompt === "string" && typeof v.executor_output === "string" ? { prompt: v.prompt, draft: v.executor_output } : undefined;
  } catch {
    return undefined;
  }
}

const shown = (c: AuditConcern): RunConcern => ({
  category: c.category,
  severity: c.severity,
  concern: c.concern,
  evidence: c.evidence,
  ...(c.suggested_fix ? { suggested_fix: c.suggested_fix } : {}),
});

/**
 * What a `dissent run` said, read back from its ModelCall events (docs/serve.md "What was said"):
 * the prompt and the draft from the executor's call (or, for a `challenge`, from the challenger's
 * input), the challenger's concerns read from its reply exactly as the gate reads them (the same
 * parser, the same grounding against the draft), and the final answer — the revision when there was
 * one, else the draft. Null when no call carries text: the run was made with `log_content` off.
 * The last successful call of each role counts (a retry or a fallback replaces the one before).
 */
export function runText(calls: readonly ModelCallEvent[]): RunText | null {
  const last = (role: string): Content | undefined => calls.filter((c) => c.role === role && !c.error && c.content).at(-1)?.content;
  const executor = last("executor");
  const challenger = last("challenger");
  const revision = last("revision");
  if (!executor && !challenger && !revision) return null;
  const input = challenger ? auditInputOf(challenger.request) : undefined;
  const prompt = (executor ? userMessages(executor.request)[0] : undefined) ?? input?.prompt ?? null;
  const draft = executor?.reply ?? input?.draft ?? null;
  const out: RunText = { prompt, draft, verdict: null, concerns: [], ungrounded: [], revised: false, final: draft };
  if (challenger?.reply !== undefined && draft !== null) {
    const parsed = parseStructured(challenger.reply, readAuditReply, { quotedFrom: [draft, prompt ?? ""] });
    if (parsed.ok) {
      const { grounded, ungrounded } = groundConcerns(draft, parsed.value.concerns);
      out.concerns = grounded.map(shown);
      out.ungrounded = ungrounded.map(shown);
      out.verdict = parsed.value.verdict === "needs_work" && grounded.length > 0 ? "needs_work" : "pass";
    } else out.challenger_error = parsed.error;
  }
  const revised = revision?.reply !== undefined ? stripPreamble(revision.reply) : "";
  if (revised.trim() !== "") {
    out.revised = true;
    out.final = revised;
  }
  return out;
}
