import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { toStageRun, type Concern, type StageRun } from "../contracts/concern.js";
import { UsageError } from "../errors.js";
import { callModel } from "../models/call.js";
import { planIssue, type PipelineProgress, type PlanResult } from "../pipeline/plan-issue.js";
import { STAGES } from "../pipeline/stages.js";
import { planStore } from "../store/plans.js";
import { loadState } from "../store/state.js";
import { localTracker } from "../trackers/local.js";
import { openTracker } from "../trackers/open.js";
import { fail, type Io } from "./io.js";
import { openRuntime, type Runtime } from "./runtime.js";
import { table } from "./table.js";

interface Common {
  json?: boolean;
  config?: string;
  verbose?: boolean;
}

/** Opens the runtime, runs `fn`, reports errors in the one-line format, and closes the store. */
export async function withRuntime(opts: Common, io: Io, fn: (rt: Runtime) => Promise<number>): Promise<number> {
  const rt = openRuntime({ ...(opts.config ? { config: opts.config } : {}) }, io);
  try {
    return await fn(rt);
  } catch (e) {
    return fail(e, io, Boolean(opts.verbose), rt.router.secrets());
  } finally {
    rt.close();
  }
}

const json = (io: Io, value: unknown) => io.stdout(`${JSON.stringify(value)}\n`);

/** `dissent issue new` — local tracker only. */
export async function issueNew(opts: Common & { title: string; body?: string; bodyFile?: string; label: string[] }, io: Io): Promise<number> {
  if (opts.body !== undefined && opts.bodyFile !== undefined) throw new UsageError("give --body or --body-file, not both");
  let body = opts.body ?? "";
  if (opts.bodyFile !== undefined) {
    try {
      body = readFileSync(resolve(io.cwd, opts.bodyFile), "utf8");
    } catch (e) {
      throw new UsageError(`--body-file ${opts.bodyFile}: cannot read (${(e as NodeJS.ErrnoException).code ?? "error"})`);
    }
  }
  return withRuntime(opts, io, async (rt) => {
    if (rt.config.tracker.type !== "local") throw new UsageError(`issue new works with the local tracker; ${rt.config.source} uses ${rt.config.tracker.type} (create the issue there)`);
    const tracker = localTracker(rt.db);
    const created = await tracker.create({ title: opts.title, body, labels: [...opts.label, "dissent-find"] });
    rt.events.append({ type: "LabelChanged", issue_id: created.id, added: created.labels, removed: [], labels: created.labels });
    if (opts.json) json(io, { id: created.id, title: created.title, labels: created.labels });
    else io.stdout(`${created.id}\n`);
    return 0;
  });
}

/** `dissent issue list`. */
export async function issueList(opts: Common, io: Io): Promise<number> {
  return withRuntime(opts, io, async (rt) => {
    const tracker = await openTracker(rt.config, io.env, rt.db);
    const plans = planStore(rt.db);
    const issues = (await tracker.list()).map((i) => ({
      id: i.id,
      title: i.title,
      labels: i.labels,
      status: plans.get(i.id)?.status ?? "new",
      pending_concerns: loadState(rt.db, i.id).pending_concerns.length,
    }));
    if (opts.json) json(io, issues);
    else if (issues.length === 0) io.stdout("no issues (create one: dissent issue new --title \"…\")\n");
    else io.stdout(table(["id", "status", "pending", "labels", "title"], issues.map((i) => [i.id, i.status, String(i.pending_concerns), i.labels.join(","), i.title])));
    return 0;
  });
}

/** `dissent issue show ID`. */
export async function issueShow(id: string, opts: Common, io: Io): Promise<number> {
  return withRuntime(opts, io, async (rt) => {
    const tracker = await openTracker(rt.config, io.env, rt.db);
    const issue = await tracker.get(id);
    const row = planStore(rt.db).get(issue.id);
    const state = loadState(rt.db, issue.id);
    const plans = planStore(rt.db);
    const plan = row ? (plans.artifact(issue.id, row.cycle, "plan") ?? null) : null;
    const criteria = row ? plans.artifact(issue.id, row.cycle, "acceptance_criteria") : undefined;
    const out = {
      id: issue.id,
      title: issue.title,
      body: issue.body,
      labels: issue.labels,
      status: row?.status ?? "new",
      route: row?.route ?? null,
      route_reason: row?.route_reason ?? null,
      cycle: row?.cycle ?? 0,
      plan,
      acceptance_criteria: criteria ? (JSON.parse(criteria) as string[]) : [],
      pending_concerns: state.pending_concerns,
      addressed_concerns: state.addressed_concerns,
      stages: state.stage_history.filter((s) => s.cycle === (row?.cycle ?? 0)).map(toStageRun),
      ...(issue.url ? { url: issue.url } : {}),
    };
    if (opts.json) {
      json(io, out);
      return 0;
    }
    const lines = [`#${out.id} ${out.title}`, `status: ${out.status}${out.route ? ` · route: ${out.route} (${out.route_reason})` : ""}`, `labels: ${out.labels.join(", ") || "none"}`];
    if (out.body.trim()) lines.push("", out.body.trim());
    if (out.stages.length) lines.push("", stageTable(out.stages).trimEnd());
    if (plan) lines.push("", "## Plan", "", plan.trim());
    if (out.acceptance_criteria.length) lines.push("", "## Acceptance criteria", "", ...out.acceptance_criteria.map((c) => `- ${c}`));
    lines.push("", concernList(out.pending_concerns));
    io.stdout(`${lines.join("\n")}\n`);
    return 0;
  });
}

function stageTable(stages: readonly StageRun[]): string {
  return table(
    ["phase", "stage", "rounds", "outcome", "raised", "forwarded", "calls", "time"],
    stages.map((s) => [s.phase, s.stage, String(s.rounds), s.outcome, String(s.concerns_raised), String(s.concerns_forwarded), String(s.calls), `${(s.duration_ms / 1000).toFixed(1)}s`]),
  );
}

function concernList(pending: readonly Concern[]): string {
  if (!pending.length) return "pending concerns: none";
  return [`pending concerns (${pending.length}):`, ...pending.map((c) => `  ${c.id}  ${c.severity.padEnd(8)} → ${c.must_address_by.padEnd(9)} ${c.concern}`)].join("\n");
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
            .map(([role, s]) => `${role.split(".").pop()} ${s === "done" ? "✓" : s === "failed" ? "✗" : "…"}`)
            .join("  ")
        : "";
      return `${p.phase} · round ${progress.round} · ${progress.step === "producing" ? "producing…" : critics}`;
    }
  }
}

/** `dissent issue plan ID`. */
export async function issuePlan(id: string, opts: Common, io: Io): Promise<number> {
  return withRuntime(opts, io, async (rt) => {
    const tracker = await openTracker(rt.config, io.env, rt.db);
    const live = io.stderrIsTTY && !opts.json;
    const ctx = rt.callContext({ issueId: id.replace(/^#/, "") });
    const { knownGapsFor } = await import("../carryover/relevance.js");
    let result: PlanResult;
    try {
      result = await planIssue(id, {
        tracker,
        plans: planStore(rt.db),
        events: rt.events,
        state: (issueId) => loadState(rt.db, issueId),
        call: (meta, request, budget, emit) => callModel(meta, request, { ...ctx, budget, ...(emit ? { emit } : {}) }),
        maxCalls: rt.config.budget.maxCallsPerIssue,
        knownGaps: knownGapsFor(rt.config, (m) => io.stderr(`dissent: warning: ${m}\n`)),
        warn: (m) => io.stderr(`${live ? "\r\x1b[2K" : ""}dissent: warning: ${m}\n`),
        ...(live
          ? {
              onProgress: (p: PipelineProgress) => {
                if (p.kind === "stage-done") {
                  const r = p.run;
                  io.stderr(`\r\x1b[2Kdissent: ${r.phase} ${r.outcome} after ${r.rounds} round${r.rounds === 1 ? "" : "s"} (${r.concerns_forwarded} forwarded)\n`);
                  return;
                }
                const line = progressLine(p);
                if (line) io.stderr(`\r\x1b[2Kdissent: ${line}`);
              },
            }
          : {}),
      });
    } finally {
      if (live) io.stderr("\r\x1b[2K");
    }
    if (opts.json) {
      json(io, result);
      return 0;
    }
    const lines = [`issue ${result.issue}: ${result.route} (${result.route_reason})`];
    if (result.stages.length) lines.push(stageTable(result.stages).trimEnd());
    else if (result.route === "trivial") lines.push(`trivial: skipped ${STAGES.length} adversarial stages, planner → plan reviewer`);
    lines.push(`status: ${result.status}  ·  labels: ${result.labels.join(", ")}  ·  ${result.calls} network call${result.calls === 1 ? "" : "s"}`);
    lines.push(concernList(result.pending_concerns));
    lines.push(`plan: dissent issue show ${result.issue}`);
    io.stdout(`${lines.join("\n")}\n`);
    return 0;
  });
}

/** `dissent issue merged ID --pr N`. */
export async function issueMerged(id: string, opts: Common & { pr: string }, io: Io): Promise<number> {
  const pr = Number(opts.pr);
  if (!/^\d+$/.test(opts.pr) || pr <= 0) throw new UsageError(`--pr must be a positive pull request number, not '${opts.pr}'`);
  return withRuntime(opts, io, async (rt) => {
    const { mergeIssue } = await import("../carryover/merge.js");
    const result = await mergeIssue(id, pr, {
      tracker: await openTracker(rt.config, io.env, rt.db),
      plans: planStore(rt.db),
      events: rt.events,
      state: (issueId) => loadState(rt.db, issueId),
      wikiDir: join(rt.config.home, "wiki"),
      warn: (m) => io.stderr(`dissent: warning: ${m}\n`),
    });
    if (opts.json) json(io, result);
    else if (result.already_merged) io.stdout(`issue ${result.issue} is already recorded as merged; nothing added\n`);
    else {
      io.stdout(`issue ${result.issue} merged in PR #${pr}: ${result.gaps.length} known gap${result.gaps.length === 1 ? "" : "s"} shipped`);
      io.stdout(result.wiki_entries.length ? `, wiki: ${result.wiki_entries.join(", ")}\n` : "\n");
    }
    return 0;
  });
}

const KINDS = ["trivial", "deferred", "addressed-in-code", "addressed-in-test", "ignored"] as const;

/** `dissent issue resolve ID CONCERN_ID --kind K --note "…"`. */
export async function issueResolve(id: string, concernId: string, opts: Common & { kind: string; note: string }, io: Io): Promise<number> {
  const kind = KINDS.find((k) => k === opts.kind);
  if (!kind) throw new UsageError(`--kind must be one of ${KINDS.join(", ")}, not '${opts.kind}'`);
  return withRuntime(opts, io, async (rt) => {
    const issue = await (await openTracker(rt.config, io.env, rt.db)).get(id);
    const { resolveConcern } = await import("../carryover/merge.js");
    const resolution = resolveConcern(issue.id, concernId, kind, opts.note, { events: rt.events, state: (i) => loadState(rt.db, i) });
    if (opts.json) json(io, resolution);
    else io.stdout(`resolved ${resolution.concern_id} (${resolution.resolution_kind})\n`);
    return 0;
  });
}
