import { z } from "zod";
import { LIMITS } from "../config/load.js";

/**
 * The input and output schemas of `dissent mcp`'s tools (docs/mcp.md): zod is the one source of the
 * JSON Schema a client sees, of the validation of what it sends, and of the structured result it gets
 * back — every result is parsed through its tool's output schema before it is sent (tools.ts), so it
 * holds exactly the fields `tools/list` declares. Every string is bounded as the CLI bounds the same
 * input (docs/limits.md).
 */

const MAX_ENTRIES = 64;
/** Characters, not bytes: a prompt, a draft or an issue body at most as large as the CLI accepts. */
const text = (max: number, what: string) => z.string().max(max, `${what} is longer than ${max} characters`);
const prompt = text(LIMITS.promptBytes, "prompt").min(1, "prompt is empty");
const entries = (what: string) =>
  z.array(text(LIMITS.policyBytes, what)).max(MAX_ENTRIES).optional().describe(`More ${what}, as text (added to the config's).`);
/**
 * An issue id as a client sends it: `"3"`, `"#12"`, or the number itself (`3`) — what the Inspector
 * and many agents send for a field named `issue`. Read as the string the CLI takes.
 */
const issueId = z
  .union([text(64, "issue").min(1), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)])
  .transform((v) => String(v))
  .describe('The issue id: a local "3" or 3, or a GitHub number "12", "#12" or 12.');

/** A concern of the challenger, as `challenge` returns it. */
const auditConcern = z.object({
  category: z.string(),
  severity: z.string(),
  evidence: z.string().describe("The words of the draft the concern is about."),
  concern: z.string(),
  suggested_fix: z.string().optional().describe("How the challenger would fix it, when it said."),
});
/** A grounded concern as `run --audit --json` shows it (docs/run.md). */
const shownConcern = z.object({ category: z.string(), severity: z.string(), evidence: z.string(), concern: z.string() });

/** `challenge`'s input: ADR-009's input contract, nothing else. */
export const ChallengeInput = z.object({
  prompt: prompt.describe("What the draft answers."),
  draft: text(LIMITS.promptBytes, "draft").min(1, "draft is empty").describe("The draft to audit (the executor's output)."),
  constraints: entries("constraints"),
  policies: entries("policies"),
});
/** `challenge`'s result. */
export const ChallengeOutput = z.object({
  verdict: z.enum(["pass", "needs_work"]).nullable().describe("Null when the challenger failed (the draft is unaudited)."),
  concerns: z.array(auditConcern).describe("Grounded concerns: their evidence is in the draft."),
  ungrounded: z.array(auditConcern).describe("Concerns dropped because their evidence is not in the draft."),
  challenger_status: z.enum(["ok", "failed"]),
  challenger_error: z.string().optional(),
  run_id: z.string(),
});

/** `audit`'s input: `run --audit`'s. */
export const AuditInput = z.object({
  prompt: prompt.describe("What the executor is asked."),
  constraints: entries("constraints"),
  policies: entries("policies"),
});
/** `audit`'s result: `run --audit --json`'s fields (docs/run.md). */
export const AuditOutput = z.object({
  final_output: z.string(),
  audit_meta: z
    .object({
      audit_used: z.boolean(),
      audit_verdict: z.enum(["pass", "needs_work"]).nullable(),
      revised: z.boolean(),
      challenger_status: z.enum(["ok", "failed", "skipped"]),
      challenger_error: z.string().optional(),
      audit_passes: z.number(),
      revision_passes: z.number(),
      concerns: z.number(),
      ungrounded_concerns: z.number(),
      invalid_concerns: z.number(),
      revision_drift: z
        .array(z.object({ kind: z.string().describe("url, date, number, name, …"), text: z.string().describe("As the revision wrote it.") }))
        .optional()
        .describe("When the draft was revised: the facts the revision brought in that nothing given holds (docs/run.md)."),
    })
    .describe("`run --audit --json`'s audit_meta (docs/run.md)."),
  audit: z.object({ concerns: z.array(shownConcern) }),
  run_id: z.string(),
});

const pendingConcern = z.object({
  id: z.string(),
  severity: z.string(),
  stage: z.string(),
  raised_by: z.string(),
  must_address_by: z.string(),
  concern: z.string(),
  evidence: z.string(),
  human_required: z.boolean().optional(),
});
export type PendingConcern = z.infer<typeof pendingConcern>;

/** `plan_issue`'s input: an issue to create (local tracker) or one that exists. */
export const PlanIssueInput = z.object({
  issue: issueId.optional(),
  title: text(1024, "title").min(1).optional().describe("Create a local issue with this title (instead of giving `issue`)."),
  body: text(LIMITS.bodyBytes, "body").optional().describe("The new issue's body."),
  labels: z.array(text(128, "label")).max(32).optional().describe("The new issue's labels."),
  replan: z.boolean().optional().describe("Plan again an issue whose plan is already ready (a new cycle)."),
});
/** `plan_issue`'s result. */
export const PlanIssueOutput = z.object({
  issue: z.string(),
  status: z.enum(["ready", "needs_replan", "hitl"]),
  route: z.enum(["trivial", "load_bearing"]),
  plan: z.string(),
  acceptance_criteria: z.array(z.string()),
  pending_concerns: z.array(pendingConcern),
  labels: z.array(z.string()),
  calls: z.number().describe("Network model calls this plan made (cached replies are free)."),
});

/** `issue_status`'s input. */
export const IssueStatusInput = z.object({ issue: issueId });
/** `issue_status`'s result. */
export const IssueStatusOutput = z.object({
  issue: z.string(),
  title: z.string(),
  labels: z.array(z.string()),
  status: z.string().describe("new | planning | ready | needs_replan | hitl | budget | fixed"),
  route: z.enum(["trivial", "load_bearing"]).nullable(),
  cycle: z.number(),
  pending_concerns: z.array(pendingConcern),
  artifacts: z.array(z.string()).describe("The latest cycle's artifacts, readable as dissent://issue/{id}/{artifact}."),
});

/** `known_gaps`'s input. */
export const KnownGapsInput = z.object({ text: text(LIMITS.promptBytes, "text").min(1).describe("What you are about to change, in words.") });
/** `known_gaps`'s result. */
export const KnownGapsOutput = z.object({
  gaps: z.array(
    z.object({ id: z.string(), title: z.string(), severity: z.string(), category: z.string(), prs: z.array(z.number()), issues: z.array(z.string()) }),
  ),
});

/** The resolution kinds `issue resolve` takes (docs/issue.md). */
export const RESOLUTION_KINDS = ["trivial", "deferred", "addressed-in-code", "addressed-in-test", "ignored"] as const;

/** `resolve_concern`'s input: `issue resolve`'s. */
export const ResolveInput = z.object({
  issue: issueId,
  concern: text(128, "concern").min(1).describe("The pending concern's id (issue_status lists them)."),
  kind: z.enum(RESOLUTION_KINDS),
  note: text(4096, "note").default("").describe("Why, in a sentence."),
});
/** `resolve_concern`'s result: the ConcernResolution recorded. */
export const ResolveOutput = z.object({
  concern_id: z.string(),
  fingerprint: z.string().describe("The concern's fingerprint: the same finding raised again has the same one."),
  resolution_kind: z.enum(RESOLUTION_KINDS),
  note: z.string(),
  resolved_by: z.string(),
  resolved_at: z.string(),
});

/** A concern as the tools show it: the fields an agent acts on. */
export function shownPending(c: {
  id: string;
  severity: string;
  stage: string;
  raised_by: string;
  must_address_by: string;
  concern: string;
  evidence: string;
  human_required?: boolean;
}): PendingConcern {
  return {
    id: c.id,
    severity: c.severity,
    stage: c.stage,
    raised_by: c.raised_by,
    must_address_by: c.must_address_by,
    concern: c.concern,
    evidence: c.evidence,
    ...(c.human_required ? { human_required: true } : {}),
  };
}
