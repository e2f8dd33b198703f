import { z } from "zod";
import { LIMITS } from "../config/load.js";

/**
 * The input and output schemas of `dissent mcp`'s tools (docs/mcp.md): zod is the one source of the
 * JSON Schema a client sees, of the validation of what it sends, and of the structured result's shape.
 * Every string is bounded as the CLI bounds the same input (docs/limits.md).
 */

const MAX_ENTRIES = 64;
/** Characters, not bytes: a prompt, a draft or an issue body at most as large as the CLI accepts. */
const text = (max: number, what: string) => z.string().max(max, `${what} is longer than ${max} characters`);
const prompt = text(LIMITS.promptBytes, "prompt").min(1, "prompt is empty");
const entries = (what: string) =>
  z.array(text(LIMITS.policyBytes, what)).max(MAX_ENTRIES).optional().describe(`more ${what}s, as text (added to the config's)`);
const issueId = text(64, "issue").min(1).describe('the issue id: local "3", or a GitHub number "12" / "#12"');

const concern = z.object({
  category: z.string(),
  severity: z.string(),
  evidence: z.string().describe("the words of the draft the concern is about"),
  concern: z.string(),
});

/** `challenge`'s input: ADR-009's input contract, nothing else. */
export const ChallengeInputShape = {
  prompt: prompt.describe("what the draft answers"),
  draft: text(LIMITS.promptBytes, "draft").min(1, "draft is empty").describe("the draft to audit (the executor's output)"),
  constraints: entries("constraint"),
  policies: entries("policy"),
};
/** `challenge`'s result. */
export const ChallengeOutputShape = {
  verdict: z.enum(["pass", "needs_work"]).nullable().describe("null when the challenger failed (the draft is unaudited)"),
  concerns: z.array(concern).describe("grounded concerns: their evidence is in the draft"),
  ungrounded: z.array(concern).describe("concerns dropped because their evidence is not in the draft"),
  challenger_status: z.enum(["ok", "failed"]),
  challenger_error: z.string().optional(),
  run_id: z.string(),
};

/** `audit`'s input: `run --audit`'s. */
export const AuditInputShape = {
  prompt: prompt.describe("what the executor is asked"),
  constraints: entries("constraint"),
  policies: entries("policy"),
};
/** `audit`'s result: `run --audit --json`'s fields (docs/run.md). */
export const AuditOutputShape = {
  final_output: z.string(),
  audit_meta: z.record(z.string(), z.unknown()),
  audit: z.object({ concerns: z.array(z.record(z.string(), z.unknown())) }),
  run_id: z.string(),
};

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

/** `plan_issue`'s input: an issue to create (local tracker) or one that exists. */
export const PlanIssueInputShape = {
  issue: issueId.optional(),
  title: text(1024, "title").min(1).optional().describe("create a local issue with this title (instead of giving `issue`)"),
  body: text(LIMITS.bodyBytes, "body").optional(),
  labels: z.array(text(128, "label")).max(32).optional(),
  replan: z.boolean().optional().describe("plan again an issue whose plan is already ready (a new cycle)"),
};
/** `plan_issue`'s result. */
export const PlanIssueOutputShape = {
  issue: z.string(),
  status: z.enum(["ready", "needs_replan", "hitl"]),
  route: z.enum(["trivial", "load_bearing"]),
  plan: z.string(),
  acceptance_criteria: z.array(z.string()),
  pending_concerns: z.array(pendingConcern),
  labels: z.array(z.string()),
  calls: z.number().describe("network model calls this plan made (cached replies are free)"),
};

/** `issue_status`'s input. */
export const IssueStatusInputShape = { issue: issueId };
/** `issue_status`'s result. */
export const IssueStatusOutputShape = {
  issue: z.string(),
  title: z.string(),
  labels: z.array(z.string()),
  status: z.string().describe("new | planning | ready | needs_replan | hitl | budget | fixed"),
  route: z.enum(["trivial", "load_bearing"]).nullable(),
  cycle: z.number(),
  pending_concerns: z.array(pendingConcern),
  artifacts: z.array(z.string()).describe("the latest cycle's artifacts, readable as dissent://issue/{id}/{artifact}"),
};

/** `known_gaps`'s input. */
export const KnownGapsInputShape = { text: text(LIMITS.promptBytes, "text").min(1).describe("what an agent is about to change, in words") };
/** `known_gaps`'s result. */
export const KnownGapsOutputShape = {
  gaps: z.array(
    z.object({ id: z.string(), title: z.string(), severity: z.string(), category: z.string(), prs: z.array(z.number()), issues: z.array(z.string()) }),
  ),
};

/** `resolve_concern`'s input: `issue resolve`'s. */
export const ResolveInputShape = {
  issue: issueId,
  concern: text(128, "concern").min(1).describe("the pending concern's id"),
  kind: z.enum(["trivial", "deferred", "addressed-in-code", "addressed-in-test", "ignored"]),
  note: text(4096, "note").default(""),
};
/** `resolve_concern`'s result: the ConcernResolution recorded. */
export const ResolveOutputShape = {
  concern_id: z.string(),
  resolution_kind: z.string(),
  note: z.string(),
  resolved_by: z.string(),
  resolved_at: z.string(),
};

/** A concern as the tools show it: the fields an agent acts on. */
export function shownConcern(c: {
  id: string;
  severity: string;
  stage: string;
  raised_by: string;
  must_address_by: string;
  concern: string;
  evidence: string;
  human_required?: boolean;
}): z.infer<typeof pendingConcern> {
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
