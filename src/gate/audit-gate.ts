import { z } from "zod";
import { AuditReply, type AuditConcern, type AuditInput, type AuditMeta, type CallRecord } from "../contracts/audit.js";
import { AuditLimitExceeded, ConfigError, Interrupted, ReplayMiss, UsageError, messageOf } from "../errors.js";
import type { CallMeta, ModelReply } from "../models/call.js";
import { parseStructured, stripThink } from "../models/json.js";
import type { ModelRequest, ReplySchema } from "../models/types.js";
import { promptFile } from "../prompts.js";
import { groundConcerns } from "./grounding.js";

/** ADR-009 §1: frozen in code, not configuration. */
export const MAX_AUDIT_PASSES = 1;
/** ADR-009 §1: frozen in code, not configuration. */
export const MAX_REVISION_PASSES = 1;

/** Counts passes and refuses to exceed the frozen limits (enforced by the framework, not by convention). */
export class PassLimits {
  audits = 0;
  revisions = 0;
  audit(): void {
    if (this.audits >= MAX_AUDIT_PASSES) throw new AuditLimitExceeded(`audit pass ${this.audits + 1} exceeds MAX_AUDIT_PASSES = ${MAX_AUDIT_PASSES}`);
    this.audits++;
  }
  revision(): void {
    if (this.revisions >= MAX_REVISION_PASSES) throw new AuditLimitExceeded(`revision pass ${this.revisions + 1} exceeds MAX_REVISION_PASSES = ${MAX_REVISION_PASSES}`);
    this.revisions++;
  }
}

/** What the gate runs on. */
export interface GateInput {
  prompt: string;
  constraints: readonly string[];
  policies: readonly string[];
  audit: boolean;
}

/** ADR-009 §3: the single user-facing output, the machine-readable metadata, and the calls made. */
export interface GateResult {
  final_output: string;
  audit_meta: AuditMeta;
  calls: CallRecord[];
}

/** The gate's ports: the one model door, and where warnings and progress go. */
export interface GateDeps {
  call: (meta: CallMeta, request: ModelRequest) => Promise<ModelReply>;
  warn?: (message: string) => void;
  progress?: (step: "executor" | "challenger" | "revising") => void;
}

let auditSchema: ReplySchema | undefined;
/** The JSON Schema sent as `response_format`, derived once from the zod schema. */
export function auditReplySchema(): ReplySchema {
  auditSchema ??= { name: "audit", jsonSchema: z.toJSONSchema(AuditReply, { io: "input" }) as Record<string, unknown> };
  return auditSchema;
}

function executorSystem(constraints: readonly string[], policies: readonly string[]): { system: string; file: { name: string; hash: string } } {
  const f = promptFile("prompts/executor.md");
  const parts = [f.text];
  if (constraints.length) parts.push(`Constraints:\n${constraints.map((c) => `- ${c}`).join("\n")}`);
  if (policies.length) parts.push(`Policies:\n${policies.map((p) => `- ${p}`).join("\n")}`);
  return { system: parts.join("\n\n"), file: { name: f.name, hash: f.hash } };
}

/** A reasoning model's leading `<think>` block is not part of its answer. */
function answerOf(text: string): string {
  return /^\s*<think>/i.test(text) ? stripThink(text).replace(/^\s+/, "") : text;
}

/**
 * The audit gate of ADR-008: executor draft → challenger audit → at most one revision.
 * A challenger failure of any kind returns the draft unchanged (ADR-008 §5).
 */
export async function auditGate(input: GateInput, deps: GateDeps): Promise<GateResult> {
  const limits = new PassLimits();
  const calls: CallRecord[] = [];
  const exec = executorSystem(input.constraints, input.policies);
  const conversation: ModelRequest["messages"] = [{ role: "user", content: input.prompt }];

  deps.progress?.("executor");
  const draftReply = await deps.call({ role: "executor" }, { system: exec.system, messages: conversation, promptFile: exec.file });
  calls.push(draftReply.record);
  const draft = answerOf(draftReply.text);

  const meta: AuditMeta = {
    audit_used: input.audit,
    audit_verdict: null,
    revised: false,
    audit_passes: 0,
    revision_passes: 0,
    challenger_status: "skipped",
    concerns: 0,
    ungrounded_concerns: 0,
  };
  if (!input.audit) return { final_output: draft, audit_meta: meta, calls };

  // ADR-009 §2: the challenger sees exactly these four fields — no routing, memory or tools.
  const auditInput: AuditInput = {
    prompt: input.prompt,
    executor_output: draft,
    constraints: [...input.constraints],
    policies: [...input.policies],
  };
  limits.audit();
  meta.audit_passes = limits.audits;
  deps.progress?.("challenger");
  const challenger = promptFile("prompts/challenger.md");
  let concerns: AuditConcern[];
  let verdict: "pass" | "needs_work";
  try {
    const reply = await deps.call(
      { role: "challenger" },
      {
        system: challenger.text,
        messages: [{ role: "user", content: JSON.stringify(auditInput, null, 2) }],
        schema: auditReplySchema(),
        promptFile: { name: challenger.name, hash: challenger.hash },
      },
    );
    calls.push(reply.record);
    const parsed = parseStructured(reply.text, AuditReply);
    if (!parsed.ok) throw new Error(`challenger reply is ${parsed.reason === "unparseable" ? "not JSON" : "not a valid audit"}: ${parsed.error}`);
    verdict = parsed.value.verdict;
    concerns = parsed.value.concerns;
  } catch (e) {
    // The user's configuration, Ctrl-C, a replay miss and the frozen limits are not the challenger failing.
    if ([ReplayMiss, Interrupted, AuditLimitExceeded, ConfigError, UsageError].some((k) => k.isInstance(e))) throw e;
    meta.challenger_status = "failed";
    meta.challenger_error = messageOf(e);
    deps.warn?.(`challenger failed, returning the draft unaudited: ${meta.challenger_error}`);
    return { final_output: draft, audit_meta: meta, calls };
  }

  meta.challenger_status = "ok";
  const { grounded, ungrounded } = groundConcerns(draft, concerns);
  meta.concerns = grounded.length;
  meta.ungrounded_concerns = ungrounded.length;
  meta.audit_verdict = verdict === "needs_work" && grounded.length > 0 ? "needs_work" : "pass";
  if (meta.audit_verdict === "pass") return { final_output: draft, audit_meta: meta, calls };

  limits.revision();
  meta.revision_passes = limits.revisions;
  deps.progress?.("revising");
  // The critique goes after the conversation, so the executor's prompt prefix (and the provider's cache of it) is unchanged.
  const revisionPrompt = promptFile("prompts/revision.md");
  const revision = await deps.call(
    { role: "revision", routeAs: "executor" },
    {
      system: exec.system,
      messages: [
        ...conversation,
        { role: "assistant", content: draft },
        { role: "user", content: `${revisionPrompt.text}\n\n${JSON.stringify({ concerns: grounded }, null, 2)}` },
      ],
      promptFile: { name: revisionPrompt.name, hash: revisionPrompt.hash },
    },
  );
  calls.push(revision.record);
  const revised = answerOf(revision.text);
  if (revised.trim() === "") {
    deps.warn?.("revision came back empty; returning the draft");
    return { final_output: draft, audit_meta: meta, calls };
  }
  meta.revised = true;
  return { final_output: revised, audit_meta: meta, calls };
}
