import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import pLimit from "p-limit";
import { DEFAULT_BUDGET_TOKENS } from "../code/limits.js";
import { codeSourceOf, type CodeSource } from "../pipeline/code-context.js";
import { stringify } from "yaml";
import { fingerprint } from "../adversarial/fingerprint.js";
import { normalize } from "../adversarial/grounding.js";
import { knownGapsFor } from "../carryover/relevance.js";
import type { CallRecord } from "../contracts/audit.js";
import type { Config } from "../contracts/config.js";
import { isFatal, messageOf } from "../errors.js";
import { answerOf } from "../models/call.js";
import type { CallContext, ObservedCall } from "../models/types.js";
import { planIssue, type PlanResult } from "../pipeline/plan-issue.js";
import { parseFindings } from "../pipeline/roles.js";
import type { Store } from "../store/port.js";
import { localTracker } from "../trackers/local.js";
import { COUNCIL_ROLES, judge, JUDGE_ROLE, type JudgedDocument } from "./judge.js";
import { pipelineMetrics } from "./pipeline-metrics.js";
import type { PipelineItemOutcome, PipelineReport } from "./report.js";
import { modelCost, modelName, type EvalProgress } from "./run-gate.js";
import type { PipelineItem, PipelineWikiEntry } from "./schema.js";
import type { LoadedSet } from "./sets.js";
import { DEFAULT_BOOTSTRAP, type BootstrapSpec } from "./stats.js";
import { sumUsd } from "../models/pricing.js";

/** Issues planned at once (each runs its critics in parallel); each provider's `max_concurrency` still holds. */
export const PIPELINE_CONCURRENCY = 4;

/** What `runPipelineEval` needs: the one door's configuration, the budget and wiki settings, and a fresh store per issue. */
export interface PipelineEvalDeps {
  /** The call door's configuration: its cache is the user's, so a rerun is free; each issue's state goes to its own fresh store. */
  calls: CallContext;
  config: Pick<Config, "budget" | "wiki">;
  /** A fresh, empty store for one issue (default: an in-memory SQLite store). */
  freshStore?: () => Promise<Store>;
  concurrency?: number;
  bootstrap?: BootstrapSpec;
  onProgress?: (p: EvalProgress) => void;
  warn?: (message: string) => void;
  warnings?: string[];
}

async function memory(): Promise<Store> {
  const { memoryStore } = await import("../store/sqlite.js");
  return memoryStore();
}

/** A wiki entry file as `issue merged` writes one (front matter with a fingerprint; the concern as the heading). */
export function wikiEntryText(w: PipelineWikiEntry, itemId: string): string {
  const meta = {
    title: w.title,
    confidence: "low",
    stale: false,
    prs: [],
    issues: [],
    source: `eval set (${itemId})`,
    fingerprint: fingerprint({ concern: w.concern }),
    severity: w.severity,
    category: w.category ?? "",
  };
  const lines = [
    `# ${w.concern}`,
    "",
    `- **Severity:** ${w.severity}${w.category ? ` · **category:** ${w.category}` : ""}`,
    ...(w.evidence ? [`- **Evidence:** ${w.evidence}`] : []),
  ];
  return `---\n${stringify(meta).trimEnd()}\n---\n${lines.join("\n")}\n`;
}

/** The findings a council reply holds, as one line each (critics, spec.judge and the reviewer; producers are not council). */
function findingLines(call: ObservedCall): string[] {
  if (!COUNCIL_ROLES.includes(call.role) || call.reply === undefined) return [];
  const parsed = parseFindings(answerOf(call.reply), []);
  if (!parsed.ok) return [];
  return parsed.value.findings.map(
    (f) => `[${f.severity}] ${f.concern.replace(/\s+/g, " ").trim()}${f.evidence ? ` (evidence: "${f.evidence.replace(/\s+/g, " ").trim()}")` : ""}`,
  );
}

const stageOutcomes = (r: PlanResult | undefined): PipelineItemOutcome["stages"] =>
  (r?.stages ?? []).map((s) => ({
    stage: s.stage,
    phase: s.phase,
    rounds: s.rounds,
    retries: s.retries,
    outcome: s.outcome,
    concerns_raised: s.concerns_raised,
    concerns_forwarded: s.concerns_forwarded,
    critic_failures: s.critic_failures ?? 0,
  }));

/** Judges each checklist entry against a document; with no document there is nothing to cover (no call is made). */
async function checklist(calls: CallContext, kind: JudgedDocument, document: string, items: readonly string[], empty: string) {
  const out: PipelineItemOutcome["plan_checklist"] = [];
  const records: CallRecord[] = [];
  for (const item of items) {
    if (document.trim() === "") {
      out.push({ item, covered: false, answer: empty });
      continue;
    }
    const j = await judge(calls, kind, document, item);
    out.push({ item, covered: j.covered, answer: j.answer });
    records.push(...j.records);
  }
  return { out, records };
}

/**
 * Plans one issue in a fresh store through the real driver (`planIssue`: ComplexityGate, stages,
 * reviewer), with its wiki entries loaded first, then asks the judge about each checklist entry.
 */
export async function evalPipelineItem(item: PipelineItem, deps: PipelineEvalDeps): Promise<PipelineItemOutcome> {
  if (!item.repo) return planOne(item, deps, undefined);
  // A defect only the code shows: planned with the bundled repository read, then without it.
  const repo = await bundledRepo(item.repo);
  try {
    const withRepo = await planOne(item, deps, repo.code);
    const without = await planOne(item, deps, undefined);
    return { ...withRepo, without_repo: { status: without.status, blocked: without.blocked, council_checklist: without.council_checklist } };
  } finally {
    repo.remove();
  }
}

/** An item's bundled repository written to a scratch folder and mapped, as `project.repo` would be. */
async function bundledRepo(files: Record<string, string>): Promise<{ code: CodeSource | undefined; remove(): void }> {
  const root = mkdtempSync(join(tmpdir(), "dissent-eval-repo-"));
  const remove = () => rmSync(root, { recursive: true, force: true });
  try {
    for (const [path, text] of Object.entries(files)) {
      const full = resolve(root, path);
      if (!full.startsWith(`${root}/`)) throw new Error(`an eval item's repo path leaves its folder: ${path}`);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, text);
    }
    const { openRepoMap } = await import("../code/build.js");
    const map = await openRepoMap({ kind: "local", root });
    return { code: codeSourceOf(map, [], () => DEFAULT_BUDGET_TOKENS), remove };
  } catch (e) {
    remove();
    throw e;
  }
}

async function planOne(item: PipelineItem, deps: PipelineEvalDeps, code: CodeSource | undefined): Promise<PipelineItemOutcome> {
  const started = performance.now();
  const store = await (deps.freshStore ?? memory)();
  try {
    const tracker = localTracker(store);
    for (const [i, w] of (item.wiki ?? []).entries()) await store.wiki.put({ id: `eval-${String(i + 1).padStart(2, "0")}`, text: wikiEntryText(w, item.id) });
    const issue = await tracker.create({ title: item.title, body: item.body, labels: [...(item.labels ?? []), "dissent-find"] });
    const findings = new Map<string, string>();
    const outer = deps.calls.observe;
    const calls: CallContext = {
      ...deps.calls,
      observe: (c) => {
        outer?.(c);
        for (const line of findingLines(c)) findings.set(normalize(line), line);
      },
    };
    let result: PlanResult | undefined;
    let error: string | undefined;
    try {
      result = await planIssue(issue.id, {
        store,
        tracker,
        calls,
        maxCalls: deps.config.budget.maxCallsPerIssue,
        maxUsd: deps.config.budget.maxUsdPerIssue,
        knownGaps: knownGapsFor(deps.config, store, deps.warn ?? (() => undefined)),
        ...(code ? { code: async () => code } : {}),
        ...(deps.warn ? { warn: deps.warn } : {}),
      });
    } catch (e) {
      if (isFatal(e)) throw e;
      error = messageOf(e).split("\n")[0] ?? "planning failed";
    }
    const events = await store.events({ issueId: issue.id, types: ["ModelCall"] });
    const planning: { record: CallRecord; role: string }[] = [];
    for (const e of events) {
      if (e.type !== "ModelCall") continue;
      const { role, provider, model, route, cached, latency_ms, input_tokens, output_tokens, cost_usd } = e;
      planning.push({
        record: {
          role,
          provider,
          model,
          route,
          cached,
          latency_ms,
          input_tokens,
          output_tokens,
          cost_usd: cost_usd ?? null,
          ...(e.error ? { error: e.error } : {}),
        },
        role,
      });
    }

    const plan = result
      ? [result.plan, ...(result.acceptance_criteria.length ? ["", "## Acceptance criteria", ...result.acceptance_criteria.map((c) => `- ${c}`)] : [])].join(
          "\n",
        )
      : "";
    const councilText = [...findings.values()].join("\n");
    const planCheck = await checklist(deps.calls, "plan", plan, item.gold.plan_must_contain, "(no plan was made)");
    const councilCheck = await checklist(deps.calls, "council_concerns", councilText, item.gold.council_must_raise, "(the council raised nothing)");

    const stages = stageOutcomes(result);
    const status = result?.status ?? "failed";
    const judgeRecords = [...planCheck.records, ...councilCheck.records];
    const planningCosts = await Promise.all(planning.map((p) => modelCost(deps.calls.router, p.role, p.record)));
    const judgeCosts = await Promise.all(judgeRecords.map((r) => modelCost(deps.calls.router, JUDGE_ROLE, r)));
    return {
      id: item.id,
      kind: item.kind ?? null,
      gold_route: item.gold.route ?? null,
      route: result?.route ?? null,
      status,
      ...(error ? { error } : {}),
      clean: item.gold.clean,
      blocked: status !== "ready" || stages.some((s) => s.retries > 0 || s.outcome !== "converged"),
      stages,
      pending_concerns: result?.pending_concerns.length ?? 0,
      findings: [...findings.values()],
      plan,
      plan_checklist: planCheck.out,
      council_checklist: councilCheck.out,
      calls: planning.map((p) => p.record),
      judge_calls: judgeRecords,
      model_cost_usd: sumUsd([...planningCosts, ...judgeCosts]),
      judge_model_cost_usd: sumUsd(judgeCosts),
      wall_ms: Math.round((performance.now() - started) * 100) / 100,
    };
  } finally {
    await store.close();
  }
}

/**
 * `dissent eval pipeline` as a library function: plans each issue of the set in its own fresh store
 * (the reply cache is the caller's, so a rerun is free), judges the gold checklists by the
 * `eval.judge` route, and computes the metrics of docs/eval.md.
 */
export async function runPipelineEval(set: LoadedSet<PipelineItem>, deps: PipelineEvalDeps): Promise<PipelineReport> {
  const spec = deps.bootstrap ?? DEFAULT_BOOTSTRAP;
  const started = performance.now();
  const limit = pLimit(deps.concurrency ?? PIPELINE_CONCURRENCY);
  let done = 0;
  const outcomes = await Promise.all(
    set.items.map((item) =>
      limit(async () => {
        const o = await evalPipelineItem(item, deps);
        deps.onProgress?.({ done: ++done, total: set.items.length, id: item.id });
        return o;
      }),
    ),
  );
  return {
    kind: "dissent.eval.pipeline",
    version: 1,
    set: { name: set.name, sha256: set.sha256, items: set.items.length, total: set.total },
    models: { judge: modelName(deps.calls.router, JUDGE_ROLE) },
    bootstrap: { method: "percentile", resamples: spec.resamples, seed: spec.seed, confidence: spec.confidence },
    metrics: pipelineMetrics(outcomes, spec, performance.now() - started),
    warnings: deps.warnings ?? [],
    items: outcomes,
  };
}
