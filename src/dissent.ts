import { randomUUID } from "node:crypto";
import { configFromObject, loadConfig, OLLAMA_HINT, textOrFile } from "./config/load.js";
import type { RunOutput } from "./contracts/audit.js";
import type { ConcernResolution, ResolutionKind } from "./contracts/concern.js";
import type { Config } from "./contracts/config.js";
import { transition, type StateLabel } from "./contracts/labels.js";
import { UsageError } from "./errors.js";
import { auditGate } from "./gate/audit-gate.js";
import { callModel } from "./models/call.js";
import { configRouter, requireKeys, requirePrices, sameModelWarning } from "./models/router.js";
import type { CallContext, ObservedCall, Router } from "./models/types.js";
import type { MergeResult } from "./carryover/merge.js";
import { planIssue as plan, type PipelineProgress, type PlanResult } from "./pipeline/plan-issue.js";
import { PIPELINE_ROLES, STAGES } from "./pipeline/stages.js";
import { listIssues, showIssue, type IssueDetail, type IssueSummary } from "./read-models.js";
import { redactor, type Redactor } from "./redact.js";
import { openStore } from "./store/open.js";
import type { EventQuery, Store, StoredEvent } from "./store/port.js";
import type { TrackedIssue, Tracker } from "./trackers/port.js";

/** Options of `createDissent` (CONTRACT §10). */
export interface CreateDissentOptions {
  /** A config file path, or the YAML's content as an object; default: DISSENT_CONFIG, then ./dissent.config.yaml, then built-in defaults. */
  config?: string | Record<string, unknown>;
  /** The environment keys and paths are read from (default: process.env). */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** A store you opened (default: the one the config names). */
  store?: Store;
  /** A tracker of your own (default: the one the config names). */
  tracker?: Tracker;
  /** Aborts every model call (Ctrl-C, a request that was cancelled). */
  signal?: AbortSignal;
  /** One-line warnings: a challenger that failed open, a critic that failed, a model reviewing itself. Default: process warnings. */
  onWarning?: (message: string) => void;
  /** Told of every model call as it finishes (the CLI's --verbose, telemetry). */
  onCall?: (call: ObservedCall) => void;
  /** Open the store for reading only (read-only commands on a read-only home). */
  readOnly?: boolean;
}

/** How a run or a plan uses the reply cache (CONTRACT §3): `use`, `bypass` (--no-cache: replaces), `replay` (never the network). */
export type CacheMode = CallContext["cacheMode"];

/** What `run` takes: the prompt and, optionally, more constraints and policies (text or a file path) and the audit. */
export interface RunInput {
  prompt: string;
  audit?: boolean;
  constraints?: readonly string[];
  policies?: readonly string[];
  cache?: CacheMode;
  progress?: (step: "executor" | "challenger" | "revising") => void;
}

/** The pipeline's wiring as a library: the CLI is a thin shell over this (CONTRACT §10). */
export interface Dissent {
  readonly config: Config;
  /** Redacts every secret the config names: use it on anything you print. */
  readonly redact: Redactor;
  store(): Promise<Store>;
  tracker(): Promise<Tracker>;
  /** `dissent run`: executor → (audit) challenger → at most one revision. */
  run(input: RunInput): Promise<RunOutput>;
  /** `dissent issue plan`. */
  planIssue(id: string, opts?: { cache?: CacheMode; onProgress?: (p: PipelineProgress) => void }): Promise<PlanResult>;
  /** `dissent issue merged`: carry unresolved concerns into ShippedWithKnownGap and the wiki. */
  merge(id: string, pr: number): Promise<MergeResult>;
  /** The event log, oldest first. */
  events(query?: EventQuery): Promise<StoredEvent[]>;
  issues: {
    list(): Promise<IssueSummary[]>;
    show(id: string): Promise<IssueDetail>;
    /** Local tracker only. */
    create(input: { title: string; body?: string; labels?: readonly string[] }): Promise<TrackedIssue>;
    /** Edits a local issue's labels through the transition table. */
    label(id: string, change: { add?: readonly string[]; remove?: readonly string[] }): Promise<string[]>;
    resolve(id: string, concernId: string, kind: ResolutionKind, note: string): Promise<ConcernResolution>;
  };
  close(): Promise<void>;
}

/** The config the options name. */
function configOf(opts: CreateDissentOptions, env: Record<string, string | undefined>, cwd: string): Config {
  if (opts.config !== undefined && typeof opts.config !== "string") return configFromObject(opts.config, { env, cwd });
  return loadConfig({ ...(typeof opts.config === "string" ? { flag: opts.config } : {}), env, cwd });
}

/** Builds the wiring every command uses: config, secrets, router, store, tracker, the model door. */
export function createDissent(opts: CreateDissentOptions = {}): Dissent {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const config = configOf(opts, env, cwd);
  const redact = redactor(config.secrets);
  const warn = (m: string) => (opts.onWarning ?? ((message: string) => process.emitWarning(message, { code: "DISSENT_WARNING" })))(redact(m));
  let router: Router | undefined;
  const routerOf = () => (router ??= configRouter(config, env, config.source === "defaults" ? { unreachable: OLLAMA_HINT } : {}));
  let store: Promise<Store> | undefined;
  const storeOf = () => (store ??= opts.store ? Promise.resolve(opts.store) : openStore(config, { env, redact, ...(opts.readOnly ? { readOnly: true } : {}) }));
  let tracker: Promise<Tracker> | undefined;
  const trackerOf = () =>
    (tracker ??= opts.tracker
      ? Promise.resolve(opts.tracker)
      : (async () => {
          if (config.tracker.type === "local") {
            const { localTracker } = await import("./trackers/local.js");
            return localTracker(await storeOf());
          }
          const { githubTracker } = await import("./trackers/github.js");
          return githubTracker(config.tracker, env, config.source);
        })());

  const callContext = async (mode: CacheMode, extra: Partial<CallContext> = {}): Promise<CallContext> => {
    const s = await storeOf();
    return {
      router: routerOf(),
      cache: s.cache,
      cacheMode: mode,
      seed: config.seed,
      timeoutMs: config.callTimeoutMs,
      maxRetries: 2,
      backoffMs: config.retryBackoffMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
      redact,
      logContent: config.logContent,
      ...(opts.onCall ? { observe: opts.onCall } : {}),
      ...extra,
    };
  };

  const localOnly = async (what: string) => {
    const t = await trackerOf();
    if (t.kind !== "local") throw new UsageError(`${what} works with the local tracker; ${config.source} uses ${t.kind} (do it there)`);
    return t as import("./trackers/local.js").LocalTracker;
  };

  return {
    config,
    redact,
    store: storeOf,
    tracker: trackerOf,

    async run(input) {
      const mode = input.cache ?? "use";
      const audit = input.audit ?? false;
      const roles = audit ? ["executor", "challenger"] : ["executor"];
      if (mode !== "replay") requireKeys(config, env, roles);
      if (audit) {
        const same = sameModelWarning(config, "executor", ["challenger"], "run --audit");
        if (same) warn(same);
      }
      const runId = randomUUID();
      const s = await storeOf();
      const ctx = await callContext(mode, { runId, emit: (e) => s.append([e]).then(() => undefined) });
      const result = await auditGate(
        {
          prompt: input.prompt,
          constraints: [...config.constraints, ...(input.constraints ?? []).map((c) => textOrFile(c, cwd, "constraint file"))],
          policies: [...config.policies, ...(input.policies ?? []).map((p) => textOrFile(p, cwd))],
          audit,
        },
        { call: (meta, request, parse) => callModel(meta, request, ctx, parse), warn, ...(input.progress ? { progress: input.progress } : {}) },
      );
      const costs = result.calls.map((c) => c.cost_usd);
      return {
        final_output: result.final_output,
        audit_meta: result.audit_meta,
        audit: { concerns: result.concerns },
        run: {
          run_id: runId,
          calls: result.calls,
          cost_usd: costs.some((c) => c === null || c === undefined) ? null : Math.round(costs.reduce((a: number, c) => a + (c ?? 0), 0) * 1e6) / 1e6,
        },
      };
    },

    async planIssue(id, o = {}) {
      const mode = o.cache ?? "use";
      if (mode !== "replay") requireKeys(config, env, PIPELINE_ROLES);
      await requirePrices(config, PIPELINE_ROLES);
      for (const stage of STAGES) {
        const same = sameModelWarning(config, stage.producer, stage.critics, `${stage.phase} stage`);
        if (same) warn(same);
      }
      const s = await storeOf();
      const t = await trackerOf();
      const { knownGapsFor } = await import("./carryover/relevance.js");
      return plan(id.replace(/^#/, ""), {
        store: s,
        tracker: t,
        calls: await callContext(mode),
        maxCalls: config.budget.maxCallsPerIssue,
        maxUsd: config.budget.maxUsdPerIssue,
        knownGaps: knownGapsFor(config, s, warn),
        warn,
        ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      });
    },

    async merge(id, pr) {
      const { mergeIssue } = await import("./carryover/merge.js");
      return mergeIssue(id.replace(/^#/, ""), pr, { tracker: await trackerOf(), store: await storeOf(), warn });
    },

    async events(query) {
      return (await storeOf()).events(query);
    },

    issues: {
      list: async () => listIssues(await storeOf(), await trackerOf()),
      show: async (id) => showIssue(await storeOf(), await trackerOf(), id.replace(/^#/, "")),
      async create(input) {
        const t = await localOnly("issue new");
        const created = await t.create({ title: input.title, body: input.body ?? "", labels: [...(input.labels ?? []), "dissent-find"] });
        await (await storeOf()).append([{ type: "LabelChanged", issue_id: created.id, added: created.labels, removed: [], labels: created.labels }]);
        return created;
      },
      async label(id, change) {
        const t = await localOnly("issue label");
        const issue = await t.get(id);
        const add = [...(change.add ?? [])];
        const remove = [...(change.remove ?? [])];
        // State labels move through the same transition table as the pipeline's.
        const { STATE_LABELS } = await import("./contracts/labels.js");
        const stateAdds = add.filter((l): l is StateLabel => (STATE_LABELS as readonly string[]).includes(l));
        if (stateAdds.length > 1) throw new UsageError(`give one state label at a time, not ${stateAdds.join(" and ")}`);
        if (stateAdds[0]) {
          const move = transition(issue.labels.filter((l) => !remove.includes(l)), stateAdds[0], issue.id);
          remove.push(...move.remove);
        }
        const labels = await t.setLabels(issue.id, { add, remove });
        const added = add.filter((l) => !issue.labels.includes(l));
        const removed = remove.filter((l) => issue.labels.includes(l) && !labels.includes(l));
        if (added.length || removed.length) await (await storeOf()).append([{ type: "LabelChanged", issue_id: issue.id, added, removed, labels }]);
        return labels;
      },
      async resolve(id, concernId, kind, note) {
        const { resolveConcern } = await import("./carryover/merge.js");
        return resolveConcern(id.replace(/^#/, ""), concernId, kind, note, { store: await storeOf() });
      },
    },

    async close() {
      if (store) await (await store).close();
    },
  };
}
