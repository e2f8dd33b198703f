import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Dissent } from "../dissent.js";
import { UsageError } from "../errors.js";
import { redact } from "../redact.js";
import type { PipelineProgress } from "../pipeline/plan-issue.js";
import { cancelled, issueQueue } from "./cancel.js";
import { toolError, toolResult } from "./result.js";
import * as S from "./schemas.js";
import { auditText, challengeText, gapsText, planText, resolveText, statusText } from "./text.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The steps a load-bearing plan reports as MCP progress, one notification each (docs/mcp.md). */
const STEPS = ["gate", "discover", "shape", "plan", "spec", "review"] as const;
const STEP_TEXT: Record<(typeof STEPS)[number], string> = {
  gate: "complexity gate",
  discover: "discover stage",
  shape: "shape stage",
  plan: "plan stage",
  spec: "spec stage",
  review: "plan review",
};

/** One `notifications/progress` per step the plan enters, when the client asked for progress. */
function progressReporter(extra: Extra): (p: PipelineProgress) => void {
  const token = extra._meta?.progressToken;
  if (token === undefined) return () => undefined;
  const seen = new Set<string>();
  return (p) => {
    const step = p.kind === "stage" ? p.phase : p.kind === "gate" || p.kind === "review" ? p.kind : undefined;
    if (step === undefined || seen.has(step) || !(STEPS as readonly string[]).includes(step)) return;
    seen.add(step);
    const at = STEPS.indexOf(step as (typeof STEPS)[number]);
    // A notification that cannot be sent (the client went away) never fails the plan.
    extra
      .sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: at + 1, total: STEPS.length, message: STEP_TEXT[step as (typeof STEPS)[number]] },
      })
      .catch(() => undefined);
  };
}

/** The latest cycle's artifacts an issue has, by the names `issue show --artifact` takes. */
export function artifactNames(d: { plan: string | null; brief: string | null; shape: string | null; acceptance_criteria: string[] }): string[] {
  return [
    ...(d.brief ? ["brief"] : []),
    ...(d.shape ? ["shape"] : []),
    ...(d.plan ? ["plan"] : []),
    ...(d.acceptance_criteria.length ? ["acceptance_criteria"] : []),
  ];
}

/**
 * Registers dissent's six tools on an MCP server (docs/mcp.md). Each goes through `dissent()` — the same
 * budget, cache, events, redaction and telemetry as the CLI — and any failure is a tool error with
 * dissent's one-line message.
 */
export function registerTools(server: McpServer, dissent: () => Dissent, track: (work: Promise<unknown>) => void = () => undefined): void {
  const issues = issueQueue();
  const guarded =
    <A>(fn: (d: Dissent, args: A, extra: Extra) => Promise<CallToolResult>) =>
    (args: A, extra: Extra): Promise<CallToolResult> => {
      const work = (async () => {
        let d: Dissent | undefined;
        try {
          d = dissent(); // a config that does not load is every call's error, not a server that never starts
          return await fn(d, args, extra);
        } catch (e) {
          return toolError(e, d?.redact ?? redact);
        }
      })();
      track(work); // a stopping server waits for it: a plan clears its labels before the process exits
      return work;
    };
  const withCancel = async <T>(extra: Extra, work: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const c = cancelled(extra.signal);
    try {
      return await work(c.signal);
    } finally {
      c.done();
    }
  };

  server.registerTool(
    "challenge",
    {
      title: "Challenge a draft",
      description:
        "Audit a draft you already have with dissent's challenger (ADR-009): grounded concerns (their evidence is in the draft), the ungrounded ones it dropped, and a verdict. The executor is not called; a failed challenger is challenger_status 'failed' with verdict null.",
      inputSchema: S.ChallengeInputShape,
      outputSchema: S.ChallengeOutputShape,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async (d, args, extra) => {
      const r = await withCancel(extra, (signal) => d.challenge({ ...args, signal, textOnly: true }));
      const out = {
        verdict: r.verdict,
        concerns: r.concerns,
        ungrounded: r.ungrounded,
        challenger_status: r.status,
        ...(r.error !== undefined ? { challenger_error: r.error } : {}),
        run_id: r.run_id,
      };
      return toolResult(out, challengeText, d.redact);
    }),
  );

  server.registerTool(
    "audit",
    {
      title: "Answer a prompt, audited",
      description:
        "dissent run --audit: the executor answers, the challenger audits the draft, at most one revision follows. Returns final_output, audit_meta and the grounded concerns.",
      inputSchema: S.AuditInputShape,
      outputSchema: S.AuditOutputShape,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async (d, args, extra) => {
      const r = await withCancel(extra, (signal) => d.run({ ...args, audit: true, signal, textOnly: true }));
      const out = { final_output: r.final_output, audit_meta: { ...r.audit_meta }, audit: r.audit, run_id: r.run.run_id };
      return toolResult(out, auditText, d.redact);
    }),
  );

  server.registerTool(
    "plan_issue",
    {
      title: "Plan an issue",
      description:
        "dissent issue plan: the ComplexityGate, the four adversarial stages and the plan reviewer. Give `issue`, or `title` (and `body`) to create a local issue first. Reports one progress notification per stage; cancelling stops it as Ctrl-C does (labels cleared; a later call resumes from the cache).",
      inputSchema: S.PlanIssueInputShape,
      outputSchema: S.PlanIssueOutputShape,
      annotations: { openWorldHint: true },
    },
    guarded(async (d, args, extra) => {
      if ((args.issue === undefined) === (args.title === undefined))
        throw new UsageError("plan_issue takes either issue or title (with body), not both or neither");
      const id = args.issue ?? (await d.issues.create({ title: args.title ?? "", body: args.body ?? "", ...(args.labels ? { labels: args.labels } : {}) })).id;
      const r = await issues.run(id, () =>
        withCancel(extra, (signal) => d.planIssue(id, { onProgress: progressReporter(extra), signal, ...(args.replan ? { replan: true } : {}) })),
      );
      const out = {
        issue: r.issue,
        status: r.status,
        route: r.route,
        plan: r.plan,
        acceptance_criteria: r.acceptance_criteria,
        pending_concerns: r.pending_concerns.map(S.shownConcern),
        labels: r.labels,
        calls: r.calls,
      };
      return toolResult(out, planText, d.redact);
    }),
  );

  server.registerTool(
    "issue_status",
    {
      title: "An issue's dissent state",
      description: "Labels, planning status, pending concerns and the names of the latest cycle's artifacts (read them as dissent://issue/{id}/{artifact}).",
      inputSchema: S.IssueStatusInputShape,
      outputSchema: S.IssueStatusOutputShape,
      annotations: { readOnlyHint: true },
    },
    guarded(async (d, args) => {
      await issues.settled(args.issue); // a cancelled plan on it has finished stopping
      const r = await d.issues.show(args.issue);
      const out = {
        issue: r.id,
        title: r.title,
        labels: r.labels,
        status: r.status,
        route: r.route,
        cycle: r.cycle,
        pending_concerns: r.pending_concerns.map(S.shownConcern),
        artifacts: artifactNames(r),
      };
      return toolResult(out, statusText, d.redact);
    }),
  );

  server.registerTool(
    "known_gaps",
    {
      title: "Known gaps relevant to a change",
      description:
        "The wiki entries (concerns that shipped unresolved) relevant to a piece of text, by the same relevance the assumption surfacer uses: what shipped with a known gap where you are about to change something.",
      inputSchema: S.KnownGapsInputShape,
      outputSchema: S.KnownGapsOutputShape,
      annotations: { readOnlyHint: true },
    },
    guarded(async (d, args) => toolResult({ gaps: await d.knownGaps(args.text) }, gapsText, d.redact)),
  );

  server.registerTool(
    "resolve_concern",
    {
      title: "Resolve a pending concern",
      description: "dissent issue resolve: record how a person resolved a pending concern of an issue.",
      inputSchema: S.ResolveInputShape,
      outputSchema: S.ResolveOutputShape,
      annotations: { idempotentHint: false },
    },
    guarded(async (d, args) => {
      await issues.settled(args.issue);
      const r = await d.issues.resolve(args.issue, args.concern, args.kind, args.note);
      return toolResult({ ...r }, resolveText, d.redact);
    }),
  );
}
