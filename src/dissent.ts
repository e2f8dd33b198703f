import { randomUUID } from "node:crypto";
import { embeddedIntro, embeddedUnavailable, knownDefaultModel } from "./config/defaults.js";
import { configFromObject, loadConfig, OLLAMA_HINT, textOrFile } from "./config/load.js";
import type { AuditMeta, RunOutput } from "./contracts/audit.js";
import type { NewEvent } from "./contracts/events.js";
import type { ChallengeInput, ChallengeResult } from "./gate/challenge.js";
import type { ConcernResolution, ResolutionKind } from "./contracts/concern.js";
import type { DownloadReporter, LlamaEngines } from "./engines/llama-cpp/index.js";
import type { Config } from "./contracts/config.js";
import { transition, type StateLabel } from "./contracts/labels.js";
import { ConfigError, UsageError } from "./errors.js";
import { sumUsd } from "./models/pricing.js";
import { auditGate } from "./gate/audit-gate.js";
import { doorOf } from "./models/call.js";
import { onceEach } from "./models/sdk-warnings.js";
import { configRouter, requireKeys, requirePrices, routeSpecs, sameModelWarning, verifierWarning } from "./models/router.js";
import { COMMANDS, type Command, type CommandTrace } from "./wiring.js";
import type { CallContext, ObservedCall, Router } from "./models/types.js";
import type { MergeResult } from "./carryover/merge.js";
// The pipeline and the read models load only for the commands that use them: `dissent run` stays light.
import type { PipelineProgress, PlanResult } from "./pipeline/plan-issue.js";
import type { IssueDetail, IssueSummary } from "./read-models.js";
import type { ImplementProgress, ImplementResult } from "./implement/implement-issue.js";
import type { PrReviewResult } from "./github/review-pull.js";
import type { RoundProgress } from "./adversarial/retry-loop.js";
import { addPart, engineInstalled, missingOptional, OPT_IN_PARTS } from "./opt-in.js";
import { redactor, type Redactor } from "./redact.js";
import { openStore } from "./store/open.js";
import type { EventQuery, LeaseHolder, Store, StoredEvent } from "./store/port.js";
import type { TrackedIssue, Tracker } from "./trackers/port.js";

/** Options of `createDissent` (docs/library.md). */
export interface CreateDissentOptions {
  /** A config file path, or the YAML's content as an object; default: DISSENT_CONFIG, then ./dissent.config.yaml, then built-in defaults. */
  config?: string | Record<string, unknown>;
  /** The environment keys and paths are read from (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Where relative paths (the config file, policy and constraint files, the default home) resolve from (default: process.cwd()). */
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
  /** Told of llama-cpp model downloads (docs/local-engine.md). Default: progress on stderr. */
  onDownload?: DownloadReporter;
}

/** How a run or a plan uses the reply cache (docs/run.md): `use`, `bypass` (--no-cache: replaces), `replay` (never the network). */
export type CacheMode = CallContext["cacheMode"];

/** What `run` takes: the prompt and, optionally, more constraints and policies (text or a file path) and the audit. */
export interface RunInput {
  /** What the executor is asked. */
  prompt: string;
  /** Run the challenger and at most one revision (`--audit`). Default false. */
  audit?: boolean;
  /** Added to the config's constraints: text, or a file path (`./rules.md`). */
  constraints?: readonly string[];
  /** Added to the config's policies: text, or a file path. */
  policies?: readonly string[];
  /** How the reply cache is used. Default `use`. */
  cache?: CacheMode;
  /** Told as each step starts. */
  progress?: (step: "executor" | "challenger" | "revising") => void;
  /** Aborts this run's model calls only (an MCP request that was cancelled); the instance's signal aborts every run. */
  signal?: AbortSignal;
  /** Constraints and policies are text only, never read as file paths (a request from another process, docs/mcp.md). */
  textOnly?: boolean;
}

/** What `challenge` takes: a draft the caller already has, audited by the configured challenger (ADR-009 §2's four fields). */
export interface ChallengeCall extends ChallengeInput {
  /** How the reply cache is used. Default `use`. */
  cache?: CacheMode;
  /** Aborts this call only. */
  signal?: AbortSignal;
  /** Constraints and policies are text only, never read as file paths (a request from another process, docs/mcp.md). */
  textOnly?: boolean;
}

/** `challenge`'s answer: the challenger step's result and the run id its ModelCall event carries. */
export type ChallengeOutcome = ChallengeResult & { run_id: string };

/** A wiki entry relevant to a piece of text (docs/issue.md, carryover): what shipped with a known gap there. */
export interface KnownGap {
  id: string;
  title: string;
  severity: string;
  category: string;
  /** The pull requests it shipped in. */
  prs: number[];
  /** The issues it was raised on. */
  issues: string[];
}

/** How a command over an issue (or a pull request) runs: the cache, live progress, the lease, a signal of its own. */
export interface RunOptions<P> {
  /** How the reply cache is used. Default `use`. */
  cache?: CacheMode;
  onProgress?: (p: P) => void;
  /** Who holds the subject's lease while the command runs (default: this process, a new id per run); a factory worker passes its own. */
  holder?: LeaseHolder;
  /** The lease's time to live and renewal period (default 60 s and 10 s, docs/issue.md). */
  lease?: { ttlMs?: number; renewMs?: number };
  /** Aborts this run only, as Ctrl-C does (labels cleared, lease released, resumable from the cache). */
  signal?: AbortSignal;
}

/** The pipeline's wiring as a library: the CLI is a thin shell over this (docs/library.md). */
export interface Dissent {
  /** The validated config, with its source (a file, an object, or the built-in defaults). */
  readonly config: Config;
  /** Redacts every secret the config names: use it on anything you print. */
  readonly redact: Redactor;
  /** The store (SQLite or PostgreSQL, or the one you passed), opened on first use. */
  store(): Promise<Store>;
  /** The tracker (local or GitHub, or the one you passed), opened on first use. */
  tracker(): Promise<Tracker>;
  /**
   * The one model door's configuration every command uses (router, the store's cache, seed, timeouts,
   * signal, redaction), for drivers such as `dissent eval`; in-process models of the given roles are
   * prepared (downloaded, hashed) first, as `run` and `planIssue` do.
   */
  callContext(mode?: CacheMode, roles?: readonly string[]): Promise<CallContext>;
  /** `dissent run`: executor → (audit) challenger → at most one revision. */
  run(input: RunInput): Promise<RunOutput>;
  /**
   * The challenger step on a draft the caller already has (docs/mcp.md `challenge`): the configured
   * challenger route, the store's reply cache, a ModelCall event and telemetry, as `run --audit`'s
   * challenger call; the executor is not called. A failed challenger is `status: "failed"` (fail open).
   */
  challenge(input: ChallengeCall): Promise<ChallengeOutcome>;
  /** The wiki entries relevant to a piece of text, by the assumption surfacer's own relevance (docs/issue.md). */
  knownGaps(text: string): Promise<KnownGap[]>;
  /** `dissent issue plan`: the ComplexityGate, then (load-bearing) the four adversarial stages and the plan reviewer (docs/issue.md). */
  planIssue(
    id: string,
    /** Live progress: the gate, each stage's rounds, each finished stage, the review. */
    opts?: RunOptions<PipelineProgress> & {
      /** Plan an issue whose plan is already `ready` again (`--replan`); without it that is a UsageError (docs/issue.md). */
      replan?: boolean;
    },
  ): Promise<PlanResult>;
  /**
   * `dissent issue implement`: a coding agent in a worktree on the ready plan, its diff through the
   * adversarial review, and a pull request (or the review recorded in the store) (docs/implement.md).
   */
  implementIssue(
    id: string,
    /** Live progress: the worktree, each attempt, the review's rounds. */
    opts?: RunOptions<ImplementProgress>,
  ): Promise<ImplementResult>;
  /**
   * `dissent pr review N` (docs/github-action.md "Reviewing any pull request"): reviews a pull request
   * — a person's too — against the plan of the issue it closes (or its description), and posts the
   * review and the `dissent` check on it. Never pushes, never approves. GitHub tracker only.
   */
  reviewPullRequest(
    number: number,
    /** Live progress: the review's steps. */
    opts?: RunOptions<RoundProgress>,
  ): Promise<PrReviewResult>;
  /** `dissent issue merged`: carry unresolved concerns into ShippedWithKnownGap and the wiki. */
  merge(id: string, pr: number): Promise<MergeResult>;
  /** The event log, oldest first. */
  events(query?: EventQuery): Promise<StoredEvent[]>;
  /** The tracker's issues as the pipeline sees them. */
  issues: {
    /** `issue list`: one summary per open issue. */
    list(): Promise<IssueSummary[]>;
    /** `issue show`: the plan, the criteria, pending and addressed concerns, the stages. */
    show(id: string): Promise<IssueDetail>;
    /** Local tracker only. */
    create(input: { title: string; body?: string; labels?: readonly string[] }): Promise<TrackedIssue>;
    /** Edits a local issue's labels through the transition table. */
    label(id: string, change: { add?: readonly string[]; remove?: readonly string[] }): Promise<string[]>;
    /** `issue resolve`: a person's resolution of a pending concern (docs/issue.md). */
    resolve(id: string, concernId: string, kind: ResolutionKind, note: string): Promise<ConcernResolution>;
  };
  /** Flushes telemetry and closes the store: call it when done. */
  close(): Promise<void>;
}

/**
 * The instance with every method but `redact` and `close` refusing once it is closed (a UsageError:
 * createDissent() makes a new one); `issues.*` too.
 */
function refuseWhenClosed<T extends object>(o: T, closed: () => boolean): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(o)) {
    if (key === "redact" || key === "close" || typeof value !== "function") {
      out[key] = key === "issues" && value !== null && typeof value === "object" ? refuseWhenClosed(value, closed) : value;
      continue;
    }
    const fn = value as (...args: unknown[]) => unknown;
    out[key] = (...args: unknown[]) =>
      closed() ? Promise.reject(new UsageError("this dissent instance is closed: createDissent() makes a new one")) : fn.apply(o, args);
  }
  return out as T;
}

/** The config the options name. */
function configOf(opts: CreateDissentOptions, env: Record<string, string | undefined>, cwd: string): Config {
  if (opts.config !== undefined && typeof opts.config !== "string") return configFromObject(opts.config, { env, cwd });
  return loadConfig({ ...(typeof opts.config === "string" ? { flag: opts.config } : {}), env, cwd });
}

/**
 * The CLI's wiring as a library (docs/library.md): loads and validates the config at once (a
 * `ConfigError` names the file and line), knows every configured key as a secret, and opens the
 * store and the tracker on first use. `run`, `planIssue`, `merge`, `events` and `issues` are the
 * commands of the same names; call `close()` when done.
 */
export function createDissent(opts: CreateDissentOptions = {}): Dissent {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const config = configOf(opts, env, cwd);
  const redact = redactor(config.secrets);
  const warn = (m: string) => (opts.onWarning ?? ((message: string) => process.emitWarning(message, { code: "DISSENT_WARNING" })))(redact(m));
  // The AI SDK's warnings (seed unsupported on every Anthropic call, say) are said once each, never on stdout.
  const sdkWarn = onceEach(warn);
  // The in-process engine (docs/local-engine.md), imported only when a llama-cpp provider is configured; it
  // loads node-llama-cpp only when a model is, so a cached run never does.
  const local = Object.values(config.providers).some((p) => p.type === "llama-cpp");
  let engines: Promise<{ engines: LlamaEngines; limits: <C extends Pick<Config, "providers">>(c: C) => C }> | undefined;
  const enginesOf = () =>
    (engines ??= import("./engines/llama-cpp/index.js").then((m) => ({
      engines: m.createLlamaEngines({
        config,
        env,
        reporter: opts.onDownload ?? m.streamReporter(process.stderr),
        known: knownDefaultModel,
        warn,
        ...(opts.signal ? { signal: opts.signal } : {}),
      }),
      limits: m.withEngineLimits,
    })));
  /**
   * Downloads (said first, with sizes) and hashes the models the roles are routed to, before any call;
   * a replay only hashes what is here (as a stream the signal stops: never a multi-GB read on the main thread).
   */
  const prepareModels = async (roles: readonly string[], mode: CacheMode = "use") => {
    if (!local) return;
    const targets = roles
      .flatMap((role) => routeSpecs(config, role))
      .flatMap((s) => {
        const p = config.providers[s.provider];
        return p ? [{ name: s.provider, p, model: s.model }] : [];
      });
    // The no-config default is the one path a user did not choose the engine on: say why, and how to add it.
    if (mode === "replay") return (await enginesOf()).engines.hash(targets);
    if (config.source === "defaults" && targets.length > 0 && !engineInstalled()) throw new ConfigError(embeddedUnavailable(env, addPart(OPT_IN_PARTS.engine)));
    await (await enginesOf()).engines.prepare(targets, config.source === "defaults" ? embeddedIntro(env) : undefined);
  };
  let router: Router | undefined;
  const routerOf = async (): Promise<Router> => {
    if (router) return router;
    const ollamaDefault = config.source === "defaults" && Object.values(config.providers).some((p) => p.type === "openai-compatible");
    const hints = ollamaDefault ? { unreachable: OLLAMA_HINT } : {};
    if (!local) return (router ??= configRouter(config, env, hints));
    const { engines: e, limits } = await enginesOf();
    return (router ??= configRouter(limits(config), env, hints, { create: e.create, identity: e.identity }));
  };
  let store: Promise<Store> | undefined;
  const storeOf = () =>
    (store ??= opts.store
      ? Promise.resolve(opts.store)
      : openStore(config, { env, redact, ...(opts.readOnly ? { readOnly: true } : {}), ...(opts.signal ? { signal: opts.signal } : {}) }));
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
          // The run's signal stops pagination and retries; a listing cut at the page cap says so (docs/limits.md).
          return githubTracker(config.tracker, env, config.source, { ...(opts.signal ? { signal: opts.signal } : {}), say: warn });
        })());

  // The code the councils read (docs/issue.md "The code the councils read"): the repository's map (from the
  // store's code index when this commit was mapped before) and project.context_files, ranked together.
  const codeFor = (s: Store, t: Tracker, signal?: AbortSignal) => async () => {
    const { codeContextFor } = await import("./code/for-config.js");
    const { codeSourceOf } = await import("./pipeline/code-context.js");
    const sig = signal ?? opts.signal;
    const map = await codeContextFor(config, { cache: s.codeIndex, tracker: t, ...(sig ? { signal: sig } : {}), warn });
    return codeSourceOf(map, config.project.files, config.code.budgetFor);
  };

  // Telemetry (docs/serve.md): the module and the OpenTelemetry SDK load only when an OTLP endpoint is configured.
  let telemetry: Promise<import("./telemetry/index.js").Telemetry | undefined> | undefined;
  const telemetryOf = () =>
    (telemetry ??= config.telemetry.otlpEndpoint
      ? import("./telemetry/index.js").then(
          (m) => {
            try {
              return m.startTelemetry(config, redact, warn);
            } catch (e) {
              // The OpenTelemetry SDK refusing its settings costs one warning, never the run (docs/serve.md).
              warn(`telemetry is off: it could not start (${m.withoutCredentials(e instanceof Error ? e.message : String(e))})`);
              return undefined;
            }
          },
          (e: unknown) => {
            const missing = missingOptional(e); // the OpenTelemetry SDK is opt-in (ADR-024): say how to add it
            warn(`telemetry is off: ${missing ? missing.message : `it could not start (${e instanceof Error ? e.message : String(e)})`}`);
            return undefined;
          },
        )
      : Promise.resolve(undefined));

  /** A caller's constraints or policies: text, or (unless text only) the file each names. */
  const entries = (given: readonly string[] | undefined, textOnly: boolean | undefined, what: string) =>
    (given ?? []).map((e) => (textOnly ? e : textOrFile(e, cwd, what)));
  /** The instance's signal, joined with one call's own (an MCP request cancelled alone). */
  const signalOf = (own: AbortSignal | undefined): { signal?: AbortSignal } => {
    const all = [opts.signal, own].filter((x): x is AbortSignal => x !== undefined);
    return all.length === 0 ? {} : { signal: all.length === 1 ? (all[0] as AbortSignal) : AbortSignal.any(all) };
  };
  const callContext = async (mode: CacheMode, given: Partial<CallContext> = {}): Promise<CallContext> => {
    const { signal: own, ...extra } = given;
    const s = await storeOf();
    return {
      router: await routerOf(),
      cache: s.cache,
      cacheMode: mode,
      seed: config.seed,
      timeoutMs: config.callTimeoutMs,
      maxRetries: 2,
      backoffMs: config.retryBackoffMs,
      ...signalOf(own),
      redact,
      logContent: config.logContent,
      ...(opts.onCall ? { observe: opts.onCall } : {}),
      warn: sdkWarn,
      ...extra,
    };
  };

  /** keys → prices → models: a command's roles have their keys and (with a dollar ceiling) prices, their in-process models are ready; `replay` needs neither keys nor models. */
  const ready = async <A, P, R>(c: Command<A, P, R>, about: A, mode: CacheMode): Promise<void> => {
    const roles = await c.roles(about);
    if (mode !== "replay") requireKeys(config, env, roles);
    if (c.prices) await requirePrices(config, roles);
    await prepareModels(roles, mode); // replay hashes the model files (signal-aware), anything else prepares them
  };
  /**
   * The command's call context (its trace's observer after the caller's, and what the command adds)
   * and its hooks (the caller's progress, then the trace's), and its run inside the trace's span.
   */
  const traced = async <A, P, R>(
    c: Command<A, P, R>,
    about: A,
    o: { mode: CacheMode; onProgress?: ((p: P) => void) | undefined; given?: Partial<CallContext> },
    go: (calls: CallContext, hooks: Pick<Partial<CommandTrace<P, R>>, "onProgress" | "onVote">) => Promise<R>,
  ): Promise<R> => {
    const telemetry = await telemetryOf();
    const trace = telemetry ? c.trace(telemetry, about, opts.onCall, o.onProgress) : undefined;
    const calls = await callContext(o.mode, { ...o.given, ...(trace ? { observe: trace.observe } : {}) });
    const onProgress = trace?.onProgress ?? o.onProgress;
    const hooks = { ...(onProgress ? { onProgress } : {}), ...(trace?.onVote ? { onVote: trace.onVote } : {}) };
    const run = () => go(calls, hooks);
    return trace ? trace.wrap(run) : run();
  };

  /** What every issue command's driver is given: the store, the tracker, the project's text, the ceilings, warnings, the lease. */
  const issueDeps = async (o: { holder?: LeaseHolder; lease?: { ttlMs?: number; renewMs?: number }; signal?: AbortSignal }) => {
    const s = await storeOf();
    const t = await trackerOf();
    const { projectFor, projectText } = await import("./prompting/project.js");
    return {
      store: s,
      tracker: t,
      // Read after the issue: a tracker that refuses the token says so about the issue first.
      project: async () => projectText(await projectFor(config.project, t, warn)),
      code: codeFor(s, t, o.signal),
      maxCalls: config.budget.maxCallsPerIssue,
      maxUsd: config.budget.maxUsdPerIssue,
      warn,
      ...(o.holder ? { holder: o.holder } : {}),
      ...(o.lease ? { lease: o.lease } : {}),
    };
  };

  const localOnly = async (what: string) => {
    const t = await trackerOf();
    if (t.kind !== "local") throw new UsageError(`${what} works with the local tracker; ${config.source} uses ${t.kind} (do it there)`);
    return t as import("./trackers/local.js").LocalTracker;
  };

  // A closed instance refuses every call with a typed error, rather than reopening its store behind the caller's back.
  let closed = false;
  const api: Dissent = {
    config,
    redact,
    store: storeOf,
    tracker: trackerOf,
    async callContext(mode = "use", roles = []) {
      await prepareModels(roles, mode);
      return callContext(mode);
    },

    async run(input) {
      const mode = input.cache ?? "use";
      const audit = input.audit ?? false;
      const runId = randomUUID();
      await ready(COMMANDS.run, { runId, audit }, mode);
      if (audit) {
        const same = sameModelWarning(config, "executor", ["challenger"], "run --audit");
        if (same) warn(same);
      }
      const s = await storeOf();
      const given = { runId, emit: (e: NewEvent) => s.append([e]).then(() => undefined), ...(input.signal ? { signal: input.signal } : {}) };
      const result = await traced(COMMANDS.run, { runId, audit }, { mode, given }, (ctx) =>
        auditGate(
          {
            prompt: input.prompt,
            constraints: [...config.constraints, ...entries(input.constraints, input.textOnly, "constraint file")],
            policies: [...config.policies, ...entries(input.policies, input.textOnly, "policy file")],
            audit,
          },
          { call: doorOf(ctx), warn, ...(input.progress ? { progress: input.progress } : {}) },
        ),
      );
      return {
        final_output: result.final_output,
        audit_meta: result.audit_meta,
        audit: { concerns: result.concerns },
        run: {
          run_id: runId,
          calls: result.calls,
          cost_usd: sumUsd(result.calls.map((c) => c.cost_usd)),
        },
      };
    },

    async challenge(input) {
      const mode = input.cache ?? "use";
      const runId = randomUUID();
      await ready(COMMANDS.challenge, { runId }, mode);
      const s = await storeOf();
      const given = { runId, emit: (e: NewEvent) => s.append([e]).then(() => undefined), ...(input.signal ? { signal: input.signal } : {}) };
      const { challengeWith } = await import("./gate/challenge.js");
      const challenged = async (ctx: CallContext) => {
        const r = await challengeWith(doorOf(ctx), {
          prompt: input.prompt,
          draft: input.draft,
          constraints: [...config.constraints, ...entries(input.constraints, input.textOnly, "constraint file")],
          policies: [...config.policies, ...entries(input.policies, input.textOnly, "policy file")],
        });
        // The trace records the verdict as `run --audit`'s does: an audit pass with no revision.
        const audit_meta: AuditMeta = {
          audit_used: true,
          audit_verdict: r.verdict,
          revised: false,
          audit_passes: 1,
          revision_passes: 0,
          challenger_status: r.status,
          ...(r.error !== undefined ? { challenger_error: r.error } : {}),
          concerns: r.concerns.length,
          ungrounded_concerns: r.ungrounded.length,
          invalid_concerns: r.invalid.length,
        };
        return { audit_meta, r };
      };
      const { r: result } = await traced(COMMANDS.challenge, { runId }, { mode, given }, challenged);
      // The gate fails open (ADR-009 §4): a failed challenger is a warning, as in `run --audit`.
      if (result.status === "failed") warn(`the challenger failed, the draft is unaudited: ${result.error ?? "no reply"}`);
      return { ...result, run_id: runId };
    },

    async knownGaps(text) {
      const [{ readWiki }, { fittingGaps, relevantEntries }] = await Promise.all([import("./carryover/wiki.js"), import("./carryover/relevance.js")]);
      const entries = await readWiki((await storeOf()).wiki, warn);
      return fittingGaps(relevantEntries(entries, text, config.wiki), config.wiki.maxChars).map((e) => ({
        id: e.id,
        title: e.title,
        severity: e.severity,
        category: e.category,
        prs: e.prs,
        issues: e.issues,
      }));
    },

    async planIssue(id, o = {}) {
      const mode = o.cache ?? "use";
      const issueId = id.replace(/^#/, "");
      const { STAGES } = await import("./pipeline/stages.js");
      const { planIssue: plan } = await import("./pipeline/plan-issue.js");
      await ready(COMMANDS.plan, { issueId }, mode);
      // Said by the pipeline when a council is about to run (a trivial issue runs none).
      const councilWarnings: string[] = [];
      for (const stage of STAGES) {
        const same = sameModelWarning(config, stage.producer, stage.critics, `${stage.phase} stage`);
        if (same) councilWarnings.push(same);
      }
      const { VERIFIER_ROLE } = await import("./adversarial/second-opinion.js");
      const second = verifierWarning(
        config,
        VERIFIER_ROLE,
        STAGES.filter((st) => st.critics.length >= 2).flatMap((st) => st.critics),
      );
      if (second) councilWarnings.push(second);
      const deps = await issueDeps(o);
      const { knownGapsFor } = await import("./carryover/relevance.js");
      const given = o.signal ? { signal: o.signal } : {};
      return traced(COMMANDS.plan, { issueId }, { mode, onProgress: o.onProgress, given }, (calls, hooks) =>
        plan(issueId, {
          ...deps,
          calls,
          maxCycles: config.budget.maxCyclesPerIssue,
          ...(o.replan ? { replan: true } : {}),
          knownGaps: knownGapsFor(config, deps.store, warn),
          councilWarnings,
          ...hooks,
        }),
      );
    },

    async implementIssue(id, o = {}) {
      const settings = config.implement;
      if (!settings) throw new ConfigError(`${config.source} has no implement: section; add one to run issue implement (docs/implement.md)`);
      const mode = o.cache ?? "use";
      const issueId = id.replace(/^#/, "");
      const { implementIssue: implement } = await import("./implement/implement-issue.js");
      await ready(COMMANDS.implement, { issueId }, mode);
      const deps = await issueDeps(o);
      const given = o.signal ? { signal: o.signal } : {};
      return traced(COMMANDS.implement, { issueId }, { mode, onProgress: o.onProgress, given }, (calls, hooks) =>
        implement(issueId, {
          ...deps,
          calls,
          settings,
          home: config.home,
          env,
          redact,
          secrets: redact.secrets,
          pullRequest: { review: config.review, dashboardUrl: config.serve.publicUrl },
          ...hooks,
        }),
      );
    },

    async reviewPullRequest(number, o = {}) {
      if (!Number.isInteger(number) || number < 1) throw new UsageError(`a pull request number is a positive integer, not '${number}'`);
      const mode = o.cache ?? "use";
      const subject = `pr-${number}`;
      const { reviewPullRequest: review } = await import("./github/review-pull.js");
      await ready(COMMANDS.prReview, { subject }, mode);
      const deps = await issueDeps(o);
      const given = o.signal ? { signal: o.signal } : {};
      return traced(COMMANDS.prReview, { subject }, { mode, onProgress: o.onProgress, given }, (calls, hooks) =>
        review(number, {
          ...deps,
          calls,
          review: config.review,
          dashboardUrl: config.serve.publicUrl,
          redact,
          secrets: redact.secrets,
          ...hooks,
        }),
      );
    },

    async merge(id, pr) {
      const { mergeIssue } = await import("./carryover/merge.js");
      const settings = config.implement;
      // docs/implement.md: the merged issue's clone goes; its branch stays (it is the pull request's).
      const cleanup = settings
        ? async (issueId: string) => {
            const { removeClone } = await import("./implement/clone.js");
            await removeClone(settings.repo, config.home, issueId);
          }
        : undefined;
      return mergeIssue(id.replace(/^#/, ""), pr, { tracker: await trackerOf(), store: await storeOf(), warn, ...(cleanup ? { cleanup } : {}) });
    },

    async events(query) {
      return (await storeOf()).events(query);
    },

    issues: {
      list: async () => (await import("./read-models.js")).listIssues(await storeOf(), await trackerOf()),
      show: async (id) => (await import("./read-models.js")).showIssue(await storeOf(), await trackerOf(), id.replace(/^#/, "")),
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
          const move = transition(
            issue.labels.filter((l) => !remove.includes(l)),
            stateAdds[0],
            issue.id,
          );
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
      closed = true;
      if (telemetry) await (await telemetry)?.shutdown(); // spans are flushed before the CLI exits
      // A store that never opened has nothing to close: its error already reached the call that opened it.
      const opened = store
        ? await store.then(
            (s) => s,
            () => undefined,
          )
        : undefined;
      await opened?.close();
      if (engines) await (await engines).engines.dispose();
    },
  };
  return refuseWhenClosed(api, () => closed);
}
