import { LIMITS, readCapped } from "../config/load.js";
import { RESOLUTION_KINDS, type Concern, type ResolutionKind, type StageRun } from "../contracts/concern.js";
import { ConfigError, UsageError } from "../errors.js";
import type { PipelineProgress, PlanResult } from "../pipeline/plan-issue.js";
import { PIPELINE_ROLES, STAGES } from "../pipeline/stages.js";
import { severityText } from "../contracts/severity-text.js";
import { blockedStages, type StageBlocks } from "../read-models/blocked.js";
import { callKind, callsText, json, withDissent, type Common } from "./common.js";
import { terminalSafe } from "../terminal.js";
import type { Io } from "./io.js";
import { costText, table } from "./table.js";
import { emptyUsage, sumUsage } from "../read-models/usage.js";
import type { StepRow } from "../read-models/types.js";

/** `dissent issue new` — local tracker only. */
export async function issueNew(opts: Common & { title: string; body?: string; bodyFile?: string; label: string[] }, io: Io): Promise<number> {
  if (opts.body !== undefined && opts.bodyFile !== undefined) throw new UsageError("give --body or --body-file, not both");
  let body = opts.body ?? "";
  if (opts.bodyFile !== undefined) {
    try {
      body =
        opts.bodyFile === "-"
          ? ((await io.readStdin(LIMITS.bodyBytes)) ?? "")
          : readCapped((await import("node:path")).resolve(io.cwd, opts.bodyFile), LIMITS.bodyBytes, "--body-file");
    } catch (e) {
      throw ConfigError.isInstance(e) ? new UsageError(e.message) : e;
    }
  }
  if (Buffer.byteLength(body) > LIMITS.bodyBytes) throw new UsageError(`--body is larger than ${LIMITS.bodyBytes / 1024} KiB, the limit`);
  if (Buffer.byteLength(opts.title) > 4096) throw new UsageError("--title is longer than 4 KiB, the limit");
  return withDissent(opts, io, async (d) => {
    const created = await d.issues.create({ title: opts.title, body, labels: opts.label });
    if (opts.json) json(io, { id: created.id, title: created.title, labels: created.labels });
    else io.stdout(`${created.id}\n`);
    return 0;
  });
}

/** `dissent issue list`. */
export async function issueList(opts: Common, io: Io): Promise<number> {
  return withDissent(
    opts,
    io,
    async (d) => {
      const issues = await d.issues.list();
      if (opts.json)
        json(
          io,
          issues.map((i) => ({ id: i.id, title: i.title, labels: i.labels, status: i.status, pending_concerns: i.pending_concerns })),
        );
      else if (issues.length === 0) io.stdout('no issues (create one: dissent issue new --title "…")\n');
      else
        io.stdout(
          table(
            ["id", "status", "pending", "labels", "title"],
            issues.map((i) => [i.id, i.status.replace("_", " "), String(i.pending_concerns), i.labels.join(","), i.title]),
          ),
        );
      return 0;
    },
    { readOnly: true },
  );
}

const ARTIFACTS = ["brief", "shape", "plan", "acceptance_criteria"] as const;

/** `dissent issue show ID [--artifact NAME]`. */
export async function issueShow(id: string, opts: Common & { artifact?: string; context?: boolean }, io: Io): Promise<number> {
  const artifact = opts.artifact;
  if (artifact !== undefined && !(ARTIFACTS as readonly string[]).includes(artifact)) {
    throw new UsageError(`--artifact must be one of ${ARTIFACTS.join(", ")}, not '${artifact}'`);
  }
  if (artifact !== undefined && opts.context) throw new UsageError("--artifact and --context cannot be used together: pick one");
  return withDissent(
    opts,
    io,
    async (d) => {
      const out = await d.issues.show(id);
      if (opts.context) {
        const { contextText, contextView } = await import("./issue-context.js");
        if (opts.json) json(io, contextView(out));
        else io.stdout(contextText(out, terminalSafe));
        return 0;
      }
      if (artifact) {
        const text =
          artifact === "acceptance_criteria"
            ? out.acceptance_criteria.length
              ? out.acceptance_criteria.map((c) => `- ${c}`).join("\n")
              : null
            : out[artifact as "brief" | "shape" | "plan"];
        if (text === null)
          throw new UsageError(`issue ${out.id} has no ${artifact.replace("_", " ")} in its latest cycle (dissent issue plan ${out.id} makes one)`);
        if (opts.json) json(io, { issue: out.id, cycle: out.cycle, artifact, content: artifact === "acceptance_criteria" ? out.acceptance_criteria : text });
        else io.stdout(`${text.trimEnd()}\n`);
        return 0;
      }
      if (opts.json) {
        const { brief: _b, shape: _s, ...shown } = out;
        json(io, shown);
        return 0;
      }
      const lines = [
        `#${out.id} ${terminalSafe(out.title)}`,
        `status: ${out.status}${out.route ? ` · route: ${out.route} (${out.route_reason})` : ""}`,
        `labels: ${out.labels.join(", ") || "none"}`,
      ];
      if (out.body.trim()) lines.push("", terminalSafe(out.body.trim()));
      if (out.steps.length)
        lines.push("", stepsTable(out.steps).trimEnd(), callsLine(out.calls_cycle, out.calls_total, out.cycle, callKind(d.config, PIPELINE_ROLES)));
      if (out.plan) lines.push("", "## Plan", "", terminalSafe(out.plan.trim()));
      if (out.acceptance_criteria.length) lines.push("", "## Acceptance criteria", "", ...out.acceptance_criteria.map((c) => `- ${terminalSafe(c)}`));
      lines.push("", concernList(out.pending_concerns));
      const impl = out.implementation;
      if (impl) {
        // docs/implement.md: the local tracker's review is recorded in the store and shown here.
        const pr = impl.pull_request;
        lines.push(
          "",
          "## Implementation",
          "",
          `branch: ${impl.branch} · ${impl.attempts.length} attempt${impl.attempts.length === 1 ? "" : "s"} in run ${impl.run}`,
        );
        if (pr)
          lines.push(
            pr.where === "github"
              ? `pull request: #${pr.number}${pr.draft ? " (draft)" : ""} ${pr.url ?? ""}`.trimEnd()
              : "review: recorded in the store (below)",
          );
        if (impl.body) lines.push("", terminalSafe(impl.body.trim()));
      }
      io.stdout(`${lines.join("\n")}\n`);
      return 0;
    },
    { readOnly: true },
  );
}

/**
 * A cycle's steps — gate, stages, planner, reviewer — and their total, as `issue plan` and `issue show`
 * both print them (docs/issue.md "Output"): every network call of the cycle in one row, so the total
 * is the cycle's count.
 */
function stepsTable(steps: readonly StepRow[]): string {
  const cell = (v: number | string | null) => (v === null ? "-" : String(v));
  const secs = (ms: number | null) => (ms === null ? "-" : `${(ms / 1000).toFixed(1)}s`);
  const total = steps.reduce((u, s) => sumUsage(u, s.usage), emptyUsage());
  const time = steps.reduce((n, s) => n + (s.duration_ms ?? 0), 0);
  return table(
    ["phase", "stage", "rounds", "outcome", "raised", "forwarded", "calls", "cost", "time"],
    [
      ...steps.map((s) => [
        s.phase,
        s.stage,
        cell(s.rounds),
        cell(s.outcome),
        cell(s.concerns_raised),
        cell(s.concerns_forwarded),
        String(s.usage.calls),
        costText(s.usage),
        secs(s.duration_ms),
      ]),
      ["total", "", "", "", "", "", String(total.calls), costText(total), secs(time)],
    ],
  );
}

/** What the total counts, said: this cycle's calls, and the issue's whole life when earlier cycles spent some. */
const callsLine = (cycle: number, total: number, n: number, kind: "local" | "network" | "model") =>
  `${callsText(cycle, kind)} in cycle ${n}${total !== cycle ? `, ${total} over the issue's ${n} cycles` : ""}`;

/**
 * What blocked each stage of the cycle, round by round, and how it ended (issue 31: the CRITICAL
 * that blocked was only in `events`): one line per blocking concern — id, severity, its first line —
 * then one per concern saying how it left the stage. Nothing when no stage was blocked.
 */
function blockedLines(stages: readonly StageBlocks[]): string[] {
  if (!stages.length) return [];
  const width = Math.max(...stages.map((s) => s.stage.length));
  const out = ["what blocked:"];
  for (const s of stages) {
    let head = s.stage.padEnd(width);
    for (const r of s.blocked)
      for (const c of r.concerns) {
        out.push(`  ${head}  r${r.round}  ${c.id}  ${terminalSafe(c.severity)}  ${terminalSafe(c.line)}`);
        head = " ".repeat(width);
      }
    for (const e of s.ended) out.push(`  ${" ".repeat(width)}  → ${e.id} ${e.how}`);
  }
  return out;
}

function concernList(pending: readonly Concern[]): string {
  if (!pending.length) return "pending concerns: none";
  return [
    `pending concerns (${pending.length}):`,
    ...pending.map(
      (c) =>
        `  ${c.id}  ${terminalSafe(severityText(c)).padEnd(8)} → ${c.must_address_by.padEnd(9)} ${terminalSafe(c.concern)}${c.evidence_stale ? " (its quote is from an earlier plan)" : ""}`,
    ),
  ].join("\n");
}

function progressLine(p: PipelineProgress): string | undefined {
  switch (p.kind) {
    case "gate":
      return "complexity gate…";
    case "review":
      return "plan reviewer…";
    case "stage-done":
      return undefined;
    case "stage": {
      const { progress } = p;
      const critics = progress.critics
        ? Object.entries(progress.critics)
            .map(([role, s]) => `${(role.split(".").pop() ?? role).replace(/_/g, " ")} ${s === "done" ? "✓" : s === "failed" ? "✗" : "…"}`)
            .join(" ")
        : "";
      const step = progress.step === "producing" ? "producing…" : progress.step === "verifying" ? "second opinions…" : critics;
      return `${p.phase} r${progress.round} ${step}`;
    }
  }
}

/** One line per finished stage (stderr): the same on a TTY and off it. */
const stageDoneLine = (r: StageRun) =>
  `dissent: ${r.phase} ${r.outcome} after ${r.rounds} round${r.rounds === 1 ? "" : "s"} · ${r.calls} call${r.calls === 1 ? "" : "s"} · ${r.concerns_forwarded} forwarded${r.second_opinions ? ` · ${r.second_opinions} second opinion${r.second_opinions === 1 ? "" : "s"}` : ""}${r.critic_failures ? ` · ${r.critic_failures} critic failure${r.critic_failures === 1 ? "" : "s"}` : ""}`;

/** `dissent issue plan ID`. */
export async function issuePlan(id: string, opts: Common & { cache: boolean; replay?: boolean; replan?: boolean }, io: Io): Promise<number> {
  if (!opts.cache && opts.replay) throw new UsageError("--no-cache and --replay cannot be used together");
  return withDissent(opts, io, async (d, status) => {
    let result: PlanResult;
    try {
      result = await d.planIssue(id, {
        cache: opts.replay ? "replay" : opts.cache ? "use" : "bypass",
        ...(opts.replan ? { replan: true } : {}),
        onProgress: (p) => {
          if (p.kind === "stage-done") {
            status.print(stageDoneLine(p.run));
            return;
          }
          const line = progressLine(p);
          if (line && !opts.json) status.set(`dissent: ${line}`);
        },
      });
    } finally {
      status.clear();
    }
    if (opts.json) {
      // On GitHub the plan is a comment: its address is part of the answer (the Action's plan-url output).
      const tracker = await d.tracker();
      const { isGithubTracker } = await import("../trackers/github.js");
      json(io, isGithubTracker(tracker) ? { ...result, plan_url: await tracker.planUrl(result.issue) } : result);
      return 0;
    }
    // The same table as `issue show`, read back from the store: the cycle's every call, an interrupted earlier run's included.
    const shown = await d.issues.show(result.issue);
    const lines = [`issue ${result.issue}: ${result.route} (${terminalSafe(result.route_reason)})`];
    if (result.route === "trivial") lines.push(`trivial: skipped ${STAGES.length} adversarial stages, planner → plan reviewer`);
    lines.push(stepsTable(shown.steps).trimEnd());
    if (result.stages.length) lines.push(...blockedLines(blockedStages(await d.events({ issueId: result.issue }))));
    const ran = result.calls === shown.calls_cycle ? "" : ` (${result.calls} in this run)`;
    lines.push(
      `status: ${result.status}  ·  labels: ${result.labels.join(", ")}  ·  ${callsLine(shown.calls_cycle, shown.calls_total, shown.cycle, callKind(d.config, PIPELINE_ROLES))}${ran}`,
    );

    lines.push(concernList(result.pending_concerns));
    lines.push(`plan: dissent issue show ${result.issue} --artifact plan`);
    io.stdout(`${lines.join("\n")}\n`);
    return 0;
  });
}

/** A positive pull request number, read strictly (no 1e+23). */
export function prNumber(text: string): number {
  const pr = Number(text);
  if (!/^\d{1,10}$/.test(text) || pr <= 0 || pr > 2_147_483_647) throw new UsageError(`--pr must be a positive pull request number, not '${text}'`);
  return pr;
}

/** `dissent issue merged ID --pr N`. */
export async function issueMerged(id: string, opts: Common & { pr: string }, io: Io): Promise<number> {
  const pr = prNumber(opts.pr);
  return withDissent(opts, io, async (d) => {
    const result = await d.merge(id, pr);
    if (opts.json) json(io, result);
    else if (result.already_merged) io.stdout(`issue ${result.issue} is already recorded as merged; nothing added\n`);
    else {
      io.stdout(`issue ${result.issue} merged in PR #${pr}: ${result.gaps.length} known gap${result.gaps.length === 1 ? "" : "s"} shipped`);
      io.stdout(result.wiki_entries.length ? `, wiki: ${result.wiki_entries.join(", ")}\n` : "\n");
    }
    return 0;
  });
}

/** `dissent issue resolve ID CONCERN_ID --kind K --note "…"`. */
export async function issueResolve(id: string, concernId: string, opts: Common & { kind: string; note: string }, io: Io): Promise<number> {
  const kind = RESOLUTION_KINDS.find((k) => k === opts.kind) as ResolutionKind | undefined;
  if (!kind) throw new UsageError(`--kind must be one of ${RESOLUTION_KINDS.join(", ")}, not '${opts.kind}'`);
  return withDissent(opts, io, async (d) => {
    const resolution = await d.issues.resolve(id, concernId, kind, opts.note);
    if (opts.json) json(io, resolution);
    else io.stdout(`resolved ${resolution.concern_id} (${resolution.resolution_kind})\n`);
    return 0;
  });
}

/** `dissent issue label ID [--add L]... [--remove L]...` — local issues, through the transition table. */
export async function issueLabel(id: string, opts: Common & { add: string[]; remove: string[] }, io: Io): Promise<number> {
  if (!opts.add.length && !opts.remove.length) throw new UsageError("give --add LABEL or --remove LABEL (repeatable)");
  for (const l of [...opts.add, ...opts.remove])
    if (!/^[^\s,]{1,50}$/.test(l)) throw new UsageError(`'${l}' is not a label (1 to 50 characters, no spaces or commas)`);
  return withDissent(opts, io, async (d) => {
    const labels = await d.issues.label(id, { add: opts.add, remove: opts.remove });
    if (opts.json) json(io, { id: id.replace(/^#/, ""), labels });
    else io.stdout(`${labels.join(", ") || "(no labels)"}\n`);
    return 0;
  });
}
