import type { CallToolResult, McpServer, ServerContext, ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { Dissent } from "../dissent.js";
import { UsageError } from "../errors.js";
import { redact } from "../redact.js";
import { cancelled, issueQueue } from "./cancel.js";
import { planProgress } from "./progress.js";
import { inScope } from "./scope.js";
import { toolError, toolResult } from "./result.js";
import * as S from "./schemas.js";
import { auditText, challengeText, gapsText, planText, resolveText, statusText } from "./text.js";

/**
 * One tool, whole (docs/mcp.md): its name and words, the schema of what it takes, the schema of what
 * it returns, and the work that makes that result. `tools/list` shows the two schemas, the SDK checks
 * the arguments against the first, and the result is read through the second before it is sent —
 * one definition, so what a tool returns cannot drift from what it declares.
 */
export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** One or two plain sentences: what the tool does and when an agent should call it. */
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** `args` as the input schema parsed them. */
  run(d: Dissent, args: z.output<I>, ctx: ServerContext): Promise<z.input<O>>;
  text(result: z.output<O>): string;
}

/** A tool ready to be put on a server: its definition's generics stay inside. */
export interface McpTool {
  name: string;
  register(server: McpServer, dissent: () => Dissent, track: (work: Promise<unknown>) => void): void;
}

/**
 * Puts a definition on a server. Each call goes through `dissent()` — the same budget, cache, events,
 * redaction and telemetry as the CLI — and any failure is a tool error with dissent's one-line message.
 */
const tool = <I extends z.ZodObject, O extends z.ZodObject>(def: ToolDef<I, O>): McpTool => ({
  name: def.name,
  register: (server, dissent, track) => {
    // The SDK sees the schemas as plain objects; the arguments it checked are read again here, typed.
    const inputSchema: z.ZodObject = def.input;
    const outputSchema: z.ZodObject = def.output;
    server.registerTool(
      def.name,
      { title: def.title, description: def.description, inputSchema, outputSchema, annotations: def.annotations },
      (args, ctx): Promise<CallToolResult> => {
        const work = (async () => {
          let d: Dissent | undefined;
          try {
            d = dissent(); // a config that does not load is every call's error, not a server that never starts
            const live = d;
            // Warnings it raises reach this client too (a log message; stderr has them all).
            const warn = (m: string) => void ctx.mcpReq.log("warning", m, "dissent").catch(() => undefined);
            return toolResult(def.output, await inScope({ warn }, () => def.run(live, def.input.parse(args), ctx)), def.text, d.redact);
          } catch (e) {
            return toolError(e, d?.redact ?? redact);
          }
        })();
        track(work); // a stopping server waits for it: a plan clears its labels before the process exits
        return work;
      },
    );
  },
});

/** The latest cycle's artifacts an issue has, by the names `issue show --artifact` takes. */
export function artifactNames(d: { plan: string | null; brief: string | null; shape: string | null; acceptance_criteria: string[] }): string[] {
  return [
    ...(d.brief ? ["brief"] : []),
    ...(d.shape ? ["shape"] : []),
    ...(d.plan ? ["plan"] : []),
    ...(d.acceptance_criteria.length ? ["acceptance_criteria"] : []),
  ];
}

/** A tool call's own abort signal for `work`: the client's cancellation stops it as Ctrl-C does. */
async function withCancel<T>(ctx: ServerContext, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const c = cancelled(ctx.mcpReq.signal);
  try {
    return await work(c.signal);
  } finally {
    c.done();
  }
}

/**
 * `plan_issue`'s progress sink: a `notifications/progress` per message when the client sent a
 * progress token, in order. `flush` resolves once every one sent so far has gone: the result must not
 * overtake them (a client drops progress for a request it has its answer to). Nothing is sent once
 * the client cancelled.
 */
function progressSender(ctx: ServerContext): { send: (message: string) => void; flush: () => Promise<void> } {
  const token = ctx.mcpReq._meta?.progressToken;
  let sent = Promise.resolve();
  if (token === undefined) return { send: () => undefined, flush: () => sent };
  let progress = 0;
  return {
    send: (message) => {
      if (ctx.mcpReq.signal.aborted) return;
      progress += 1;
      const params = { progressToken: token, progress, message };
      // A notification that cannot be sent (the client went away) never fails the plan.
      sent = sent.then(() => ctx.mcpReq.notify({ method: "notifications/progress", params })).catch(() => undefined);
    },
    flush: () => sent,
  };
}

/** dissent's six tools (docs/mcp.md); `issues` orders the work on each issue. */
export function toolDefs(issues = issueQueue()): McpTool[] {
  return [
    tool({
      name: "challenge",
      title: "Challenge a draft",
      description:
        "Audits a draft you already have with dissent's challenger and returns a verdict, the grounded concerns (each quoting the draft) and the ungrounded ones it dropped. The executor is not called; when the challenger fails, challenger_status is 'failed' and the verdict is null.",
      input: S.ChallengeInput,
      output: S.ChallengeOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
      run: async (d, args, ctx) => {
        const r = await withCancel(ctx, (signal) => d.challenge({ ...args, signal, textOnly: true }));
        return {
          verdict: r.verdict,
          concerns: r.concerns,
          ungrounded: r.ungrounded,
          challenger_status: r.status,
          ...(r.error !== undefined ? { challenger_error: r.error } : {}),
          run_id: r.run_id,
        };
      },
      text: challengeText,
    }),
    tool({
      name: "audit",
      title: "Answer a prompt, audited",
      description:
        "Answers a prompt as `dissent run --audit` does: the executor writes a draft, the challenger audits it, and at most one revision follows. Returns the final output, the audit's summary and the grounded concerns.",
      input: S.AuditInput,
      output: S.AuditOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
      run: async (d, args, ctx) => {
        const r = await withCancel(ctx, (signal) => d.run({ ...args, audit: true, signal, textOnly: true }));
        return { final_output: r.final_output, audit_meta: { ...r.audit_meta }, audit: r.audit, run_id: r.run.run_id };
      },
      text: auditText,
    }),
    tool({
      name: "plan_issue",
      title: "Plan an issue",
      description:
        "Plans an issue as `dissent issue plan` does: the complexity gate, the four adversarial stages and the plan reviewer. Give `issue`, or `title` and `body` to create a local issue first. It reports progress at each step and after each model call; a cancelled call stops as Ctrl-C does, and the next call resumes from the cache.",
      input: S.PlanIssueInput,
      output: S.PlanIssueOutput,
      annotations: { openWorldHint: true },
      run: async (d, args, ctx) => {
        if ((args.issue === undefined) === (args.title === undefined))
          throw new UsageError("plan_issue takes either issue or title (with body), not both or neither");
        const id =
          args.issue ?? (await d.issues.create({ title: args.title ?? "", body: args.body ?? "", ...(args.labels ? { labels: args.labels } : {}) })).id;
        const sender = progressSender(ctx);
        const progress = planProgress(sender.send);
        const r = await issues
          .run(id, () =>
            withCancel(ctx, (signal) =>
              progress.run(() => d.planIssue(id, { onProgress: progress.onProgress, signal, ...(args.replan ? { replan: true } : {}) })),
            ),
          )
          .finally(sender.flush);
        return {
          issue: r.issue,
          status: r.status,
          route: r.route,
          plan: r.plan,
          acceptance_criteria: r.acceptance_criteria,
          pending_concerns: r.pending_concerns.map(S.shownPending),
          labels: r.labels,
          calls: r.calls,
        };
      },
      text: planText,
    }),
    tool({
      name: "issue_status",
      title: "An issue's dissent state",
      description:
        "Returns an issue's labels, planning status, pending concerns and the names of its latest cycle's artifacts, which you can read as the resource dissent://issue/{id}/{artifact}.",
      input: S.IssueStatusInput,
      output: S.IssueStatusOutput,
      annotations: { readOnlyHint: true },
      run: async (d, args) => {
        await issues.settled(args.issue); // a cancelled plan on it has finished stopping
        const r = await d.issues.show(args.issue);
        return {
          issue: r.id,
          title: r.title,
          labels: r.labels,
          status: r.status,
          route: r.route,
          cycle: r.cycle,
          pending_concerns: r.pending_concerns.map(S.shownPending),
          artifacts: artifactNames(r),
        };
      },
      text: statusText,
    }),
    tool({
      name: "known_gaps",
      title: "Known gaps relevant to a change",
      description:
        "Returns the known gaps (concerns that shipped unresolved, from dissent's wiki) relevant to what you are about to change, described in words. Call it before changing code to learn what already shipped with a known problem there.",
      input: S.KnownGapsInput,
      output: S.KnownGapsOutput,
      annotations: { readOnlyHint: true },
      run: async (d, args) => ({ gaps: await d.knownGaps(args.text) }),
      text: gapsText,
    }),
    tool({
      name: "resolve_concern",
      title: "Resolve a pending concern",
      description:
        "Records how a person resolved one of an issue's pending concerns, as `dissent issue resolve` does. Sending the same resolution again returns the one already recorded.",
      input: S.ResolveInput,
      output: S.ResolveOutput,
      annotations: { idempotentHint: true },
      run: (d, args) =>
        issues.run(args.issue, async () => {
          const issue = await d.issues.show(args.issue);
          const pending = issue.pending_concerns.find((c) => c.id === args.concern);
          if (!pending) {
            // A retry of a call whose answer the client never got (a lost reply, a timeout): the same resolution, recorded.
            const same = issue.addressed_concerns.find(
              (r) => r.concern_id === args.concern && r.resolved_by === "human" && r.resolution_kind === args.kind && r.note === args.note,
            );
            if (same) return same;
          } else {
            // The result is built and checked before anything is saved: a resolution is never recorded behind an error.
            S.ResolveOutput.parse({
              concern_id: pending.id,
              fingerprint: pending.fingerprint,
              resolution_kind: args.kind,
              note: args.note,
              resolved_by: "human",
              resolved_at: new Date().toISOString(),
            });
          }
          return d.issues.resolve(args.issue, args.concern, args.kind, args.note);
        }),
      text: resolveText,
    }),
  ];
}

/** Registers dissent's six tools on an MCP server (docs/mcp.md). */
export function registerTools(server: McpServer, dissent: () => Dissent, track: (work: Promise<unknown>) => void = () => undefined): void {
  for (const t of toolDefs()) t.register(server, dissent, track);
}
