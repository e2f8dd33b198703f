import pLimit from "p-limit";
import type { AuditConcern, CallRecord } from "../contracts/audit.js";
import { isFatal, messageOf, ProviderError } from "../errors.js";
import { executorRequest, revisionRequest, shown, stripPreamble } from "../gate/audit-gate.js";
import { challengeWith } from "../gate/challenge.js";
import { doorOf, type CallDoor } from "../models/call.js";
import type { CallContext, Router } from "../models/types.js";
import { gateMetrics } from "./gate-metrics.js";
import type { GateItemOutcome, GateReport } from "./report.js";
import type { GateItem } from "./schema.js";
import { scoreGateItem, type RevisionStep } from "./score-gate.js";
import type { LoadedSet } from "./sets.js";
import { DEFAULT_BOOTSTRAP, type BootstrapSpec } from "./stats.js";
import { sumUsd } from "../models/pricing.js";

/** Items audited at once; each provider's `max_concurrency` still bounds what reaches it. */
export const GATE_CONCURRENCY = 8;

/** Progress of a run, item by item, for a progress bar. */
export interface EvalProgress {
  done: number;
  total: number;
  id: string;
}

/** What `runGateEval` needs: the one door's configuration (router, cache, …) and where progress goes. */
export interface GateEvalDeps {
  calls: CallContext;
  concurrency?: number;
  bootstrap?: BootstrapSpec;
  onProgress?: (p: EvalProgress) => void;
  /** Notes for the report (and stderr): the CLI adds its own. */
  warnings?: string[];
}

/** "provider:model" of a role's primary route. */
export function modelName(router: Router, role: string): string {
  const t = router(role).primary;
  return `${t.provider}:${t.model}`;
}

/** What a call costs at its model's price, cached or not (null: unknown price). */
export async function modelCost(router: Router, routedAs: string, record: CallRecord): Promise<number | null> {
  const route = router(routedAs);
  const target = [route.primary, route.secondary].find((t) => t && t.provider === record.provider && t.model === record.model);
  if (!target) return null;
  return target.cost(record.input_tokens, record.output_tokens);
}

/** The revision of a draft the challenger found wanting (docs/run.md): the executor's route, once, with the grounded concerns. */
async function revise(call: CallDoor, item: GateItem, concerns: readonly AuditConcern[]): Promise<{ step: RevisionStep; records: CallRecord[] }> {
  const exec = executorRequest(item.prompt, item.constraints ?? [], item.policies ?? []);
  try {
    const reply = await call({ role: "revision", routeAs: "executor" }, revisionRequest(exec, item.draft, concerns.map(shown)));
    const text = stripPreamble(reply.answer);
    return { step: text.trim() === "" ? { status: "empty" } : { status: "revised", text }, records: [reply.record] };
  } catch (e) {
    if (isFatal(e)) throw e;
    const records = ProviderError.isInstance(e) ? (e.calls as CallRecord[]) : [];
    return { step: { status: "failed", error: messageOf(e) }, records };
  }
}

/** Audits one item: the challenger on the given draft, then — needs_work, and the item has revision checks — the revision. */
export async function evalGateItem(item: GateItem, calls: CallContext): Promise<GateItemOutcome> {
  const started = performance.now();
  const call: CallDoor = doorOf(calls);
  const result = await challengeWith(call, { prompt: item.prompt, draft: item.draft, constraints: item.constraints ?? [], policies: item.policies ?? [] });
  const records: { record: CallRecord; routedAs: string }[] = result.call ? [{ record: result.call, routedAs: "challenger" }] : [];
  let step: RevisionStep | null = null;
  if (item.revision) {
    if (result.status === "ok" && result.verdict === "needs_work") {
      const r = await revise(call, item, result.concerns);
      step = r.step;
      records.push(...r.records.map((record) => ({ record, routedAs: "executor" })));
    } else {
      step = { status: "kept" };
    }
  }
  const costs = await Promise.all(records.map((r) => modelCost(calls.router, r.routedAs, r.record)));
  return scoreGateItem(item, result, step, {
    calls: records.map((r) => r.record),
    model_cost_usd: sumUsd(costs),
    wall_ms: Math.round((performance.now() - started) * 100) / 100,
  });
}

/**
 * `dissent eval gate` as a library function: every item through the gate's own challenger step
 * (`challengeWith`) and revision request, over the given call door (its cache makes a rerun free),
 * then the metrics of docs/eval.md. The executor never writes a draft: the set gives it.
 */
export async function runGateEval(set: LoadedSet<GateItem>, deps: GateEvalDeps): Promise<GateReport> {
  const spec = deps.bootstrap ?? DEFAULT_BOOTSTRAP;
  const started = performance.now();
  const limit = pLimit(deps.concurrency ?? GATE_CONCURRENCY);
  let done = 0;
  const outcomes = await Promise.all(
    set.items.map((item) =>
      limit(async () => {
        const o = await evalGateItem(item, deps.calls);
        deps.onProgress?.({ done: ++done, total: set.items.length, id: item.id });
        return o;
      }),
    ),
  );
  const needsRevision = set.items.some((i) => i.revision);
  return {
    kind: "dissent.eval.gate",
    version: 1,
    set: { name: set.name, sha256: set.sha256, items: set.items.length, total: set.total },
    models: { challenger: modelName(deps.calls.router, "challenger"), revision: needsRevision ? modelName(deps.calls.router, "executor") : "(none)" },
    bootstrap: { method: "percentile", resamples: spec.resamples, seed: spec.seed, confidence: spec.confidence },
    metrics: gateMetrics(outcomes, spec, performance.now() - started),
    warnings: deps.warnings ?? [],
    items: outcomes,
  };
}
