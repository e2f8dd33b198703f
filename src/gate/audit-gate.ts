import { NONE } from "../none.js";
import type { AuditMeta, CallRecord, ShownConcern } from "../contracts/audit.js";
import { AuditLimitExceeded } from "../errors.js";
import type { ModelRequest } from "../models/types.js";
import { dataBlock } from "../prompting/data-block.js";
import { promptFile } from "../prompts.js";
import type { CallDoor } from "../models/call.js";
import { challengeWith, type ChallengeInput, type ChallengeResult } from "./challenge.js";
import { driftOfRevision, driftWarning } from "./drift.js";

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
    if (this.revisions >= MAX_REVISION_PASSES)
      throw new AuditLimitExceeded(`revision pass ${this.revisions + 1} exceeds MAX_REVISION_PASSES = ${MAX_REVISION_PASSES}`);
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

/** ADR-009 §3: the single user-facing output, the machine-readable metadata, the grounded concerns, and the calls made. */
export interface GateResult {
  final_output: string;
  audit_meta: AuditMeta;
  /** The grounded concerns (category, severity, evidence, concern), for `--json` (docs/run.md). */
  concerns: ShownConcern[];
  calls: CallRecord[];
}

/** What a gate warning is about: the code of the Node process warning the library emits for it by default. */
export type GateWarningCode = "DISSENT_CHALLENGER_FAILED" | "DISSENT_REVISION_EMPTY" | "DISSENT_REVISION_DRIFT";

/** Where the gate's one-line warnings go: the line, and what it is about. */
export type GateWarn = (message: string, code: GateWarningCode) => void;

/** The gate's ports: the one model door, and where warnings and progress go. */
export interface GateDeps {
  call: CallDoor;
  warn?: GateWarn;
  progress?: (step: "executor" | "challenger" | "revising") => void;
}

/** The executor's system prompt: its file, then the constraints and policies it must follow. */
export function executorRequest(prompt: string, constraints: readonly string[], policies: readonly string[]): ModelRequest {
  const f = promptFile("prompts/executor.md");
  const parts = [f.text];
  if (constraints.length) parts.push(`Constraints:\n${constraints.map((c) => `- ${c}`).join("\n")}`);
  if (policies.length) parts.push(`Policies:\n${policies.map((p) => `- ${p}`).join("\n")}`);
  return { system: parts.join("\n\n"), messages: [{ role: "user", content: prompt }], promptFile: { name: f.name, hash: f.hash } };
}

/**
 * The revision request (docs/run.md): the executor's own conversation, then the grounded
 * concerns as data — category, severity, evidence, concern; never `suggested_fix`, which can carry
 * the challenger's own facts (ADR-008 §5). The critique follows the conversation, so the request
 * prefix (and a provider's prompt cache) is unchanged.
 */
export function revisionRequest(executor: ModelRequest, draft: string, concerns: readonly ShownConcern[]): ModelRequest {
  const f = promptFile("prompts/revision.md");
  return {
    system: executor.system,
    messages: [
      ...executor.messages,
      { role: "assistant", content: draft },
      { role: "user", content: `${f.text}\n\n${dataBlock("audit_concerns", JSON.stringify(concerns, null, 2))}` },
    ],
    promptFile: { name: f.name, hash: f.hash },
  };
}

/** 8B models open a revision with "Here is the revised answer:" however they are asked: that line is not the answer. */
const PREAMBLE = /^\s*(?:sure[,!.]?\s*)?(?:here is|here's|below is|this is)\b[^\n]{0,60}\b(?:revis|updat|correct|improv|fix)\w*\b[^\n]{0,40}:?\s*\n+/i;
export const stripPreamble = (text: string) => text.replace(PREAMBLE, "");

/** The fields of a concern that are shown and sent on: no `suggested_fix`. */
export const shown = (c: { category: string; severity: string; evidence: string; concern: string }): ShownConcern => ({
  category: c.category,
  severity: c.severity,
  evidence: c.evidence,
  concern: c.concern,
});

/** audit_meta from a challenge result (docs/run.md). */
export function metaOf(result: ChallengeResult | undefined, audit: boolean): AuditMeta {
  const meta: AuditMeta = {
    audit_used: audit,
    audit_verdict: null,
    revised: false,
    audit_passes: 0,
    revision_passes: 0,
    challenger_status: "skipped",
    concerns: 0,
    ungrounded_concerns: 0,
    invalid_concerns: 0,
  };
  if (!result) return meta;
  meta.audit_passes = 1;
  meta.challenger_status = result.status;
  if (result.status === "failed") {
    meta.challenger_error = result.error ?? "challenger failed";
    return meta;
  }
  meta.audit_verdict = result.verdict;
  meta.concerns = result.concerns.length;
  meta.ungrounded_concerns = result.ungrounded.length;
  meta.invalid_concerns = result.invalid.length;
  return meta;
}

/** A revision made through the executor's route: its answer, its call record, and what the caller needs back of it. */
export interface Revision<R> {
  answer: string;
  record: CallRecord;
  reply: R;
}

/** The ports of the audit step: the one model door (for the challenger), the revision, warnings and progress. */
export interface AuditStepDeps<R> {
  call: CallDoor;
  /** Asks the executor's route for its one revision, given the grounded concerns (no `suggested_fix`). */
  revise: (concerns: ShownConcern[]) => Promise<Revision<R>>;
  warn?: GateWarn;
  progress?: (step: "challenger" | "revising") => void;
}

/** The audit step's outcome: the gate's result for the calls it made, and the revision's reply when it became the final output. */
export interface AuditStepResult<R> extends GateResult {
  revision?: R;
}

/**
 * ADR-008's audit of a draft that exists: challenger → (needs_work) at most one revision, under the
 * frozen limits. A challenger failure of any kind returns the draft unchanged (ADR-008 §5), with a
 * warning — never silently; a revision's drift (facts nothing given holds) is listed in
 * `audit_meta.revision_drift`, with a warning. The CLI's gate and the AI SDK middleware both run this one step.
 */
export async function auditDraft<R>(limits: PassLimits, input: ChallengeInput, deps: AuditStepDeps<R>): Promise<AuditStepResult<R>> {
  const draft = input.draft;
  limits.audit();
  deps.progress?.("challenger");
  const result = await challengeWith(deps.call, input);
  const calls: CallRecord[] = result.call ? [result.call] : [];
  const meta = metaOf(result, true);
  if (result.status === "failed") {
    deps.warn?.(`challenger failed, returning the draft unaudited: ${meta.challenger_error}`, "DISSENT_CHALLENGER_FAILED");
    return { final_output: draft, audit_meta: meta, concerns: [], calls };
  }
  const concerns = result.concerns.map(shown);
  if (meta.audit_verdict === "pass") return { final_output: draft, audit_meta: meta, concerns, calls };

  limits.revision();
  meta.revision_passes = limits.revisions;
  deps.progress?.("revising");
  const revision = await deps.revise(concerns);
  calls.push(revision.record);
  const revised = stripPreamble(revision.answer);
  if (revised.trim() === "") {
    deps.warn?.("revision came back empty; returning the draft", "DISSENT_REVISION_EMPTY");
    return { final_output: draft, audit_meta: meta, concerns, calls };
  }
  meta.revised = true;
  // ADR-008 §5: a revision adds no facts. What it added anyway is reported, never silently kept.
  meta.revision_drift = driftOfRevision(input, revised);
  if (meta.revision_drift.length > 0) deps.warn?.(driftWarning(meta.revision_drift), "DISSENT_REVISION_DRIFT");
  return { final_output: revised, audit_meta: meta, concerns, calls, revision: revision.reply };
}

/**
 * The audit gate of ADR-008: executor draft → challenger audit → at most one revision. A challenger
 * failure of any kind returns the draft unchanged (ADR-008 §5), with a warning — never silently.
 */
export async function auditGate(input: GateInput, deps: GateDeps): Promise<GateResult> {
  const limits = new PassLimits();
  const exec = executorRequest(input.prompt, input.constraints, input.policies);

  deps.progress?.("executor");
  const draftReply = await deps.call({ role: "executor" }, exec);
  const draft = draftReply.answer;
  if (!input.audit) return { final_output: draft, audit_meta: metaOf(undefined, false), concerns: [], calls: [draftReply.record] };

  const audited = await auditDraft(
    limits,
    { prompt: input.prompt, draft, constraints: input.constraints, policies: input.policies },
    {
      call: deps.call,
      revise: async (concerns) => {
        const revision = await deps.call({ role: "revision", routeAs: "executor" }, revisionRequest(exec, draft, concerns));
        return { answer: revision.answer, record: revision.record, reply: revision };
      },
      ...(deps.warn ? { warn: deps.warn } : NONE),
      ...(deps.progress ? { progress: deps.progress } : NONE),
    },
  );
  return { final_output: audited.final_output, audit_meta: audited.audit_meta, concerns: audited.concerns, calls: [draftReply.record, ...audited.calls] };
}
