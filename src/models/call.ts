import type { OutputInterface } from "ai";
import type { CallRecord } from "../contracts/audit.js";
import { DissentError, Interrupted, ProviderAuthError, ProviderError, ReplayMiss } from "../errors.js";
import { canonicalJson, sha256 } from "../hash.js";
import type { CachedReply } from "./cache.js";
import { formatLimit } from "../files/format-limit.js";
import { stripThink, type Parsed } from "./json.js";
import { notAnAnswer } from "./answer-rule.js";
import { roundUsd } from "./pricing.js";
import { reportSdkWarnings, warningsMiddleware, type WarningSink } from "./sdk-warnings.js";
import { INCOMPLETE_STREAM } from "./sse-fetch.js";
import { DEFAULT_MAX_REPLY_BYTES } from "./reply-cap.js";
import { classify, FALLBACK, RETRYABLE, type Classified } from "./transport.js";
import type { CallContext, ModelRequest, ModelTarget, ReplySchema } from "./types.js";

/** Who is calling: the role recorded, the role routed (a revision goes to the executor's route), and where. */
export interface CallMeta {
  role: string;
  routeAs?: string;
  stage?: string;
  round?: number;
  wikiEntries?: string[];
}

/** A model's reply with the record of the call that produced it. */
export interface ModelReply<T = unknown> {
  /** The reply as received (secrets redacted). */
  text: string;
  /** The answer: the reply with reasoning (`<think>` …) removed (docs/configuration.md). */
  answer: string;
  record: CallRecord;
  requestHash: string;
  /** The structured reading, when the caller gave a parser; its failure is on the record and the ModelCall event. */
  parsed?: Parsed<T>;
}

/** The one door with its context bound (`callModel` minus `ctx`), as the gate and the pipeline take it. */
export type CallDoor = <T>(meta: CallMeta, request: ModelRequest, parse?: (answer: string) => Parsed<T>) => Promise<ModelReply<T>>;

/** Content address of a request: endpoint, model, messages, parameters and schema — never credentials. */
export function requestKey(target: ModelTarget, request: ModelRequest, seed: number): string {
  return sha256(
    canonicalJson({
      v: 1,
      endpoint: target.endpoint,
      model: target.model,
      structured: request.schema ? target.structured : "none",
      system: request.system,
      messages: request.messages,
      params: { temperature: 0, seed, ...(target.maxTokens ? { max_tokens: target.maxTokens } : {}) },
      schema: request.schema ?? null,
    }),
  );
}

/**
 * Network calls a request would cost if sent now: 0 when a target of its route has the reply cached
 * (or under --replay, which never sends), else 1. Lets a caller budget a step the cache will serve.
 */
export async function networkCalls(meta: Pick<CallMeta, "role" | "routeAs">, request: ModelRequest, ctx: CallContext): Promise<number> {
  if (ctx.cacheMode === "replay") return 0;
  if (!ctx.cache || ctx.cacheMode === "bypass") return 1;
  const route = ctx.router(meta.routeAs ?? meta.role);
  for (const target of route.secondary ? [route.primary, route.secondary] : [route.primary]) {
    if (await ctx.cache.get(requestKey(target, request, ctx.seed))) return 0;
  }
  return 1;
}

/** The longest Retry-After a call waits out; beyond it the call fails rather than retry early. */
const MAX_RETRY_AFTER_MS = 60_000;

/** Thrown by one target after its retries, carrying the classification. */
class AttemptsFailed extends Error {
  constructor(
    readonly failure: Classified,
    readonly attempts: number,
  ) {
    super(failure.detail);
  }
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(interruption(signal));
    const onAbort = () => {
      clearTimeout(t);
      reject(interruption(signal));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** The error for an aborted signal: its reason when that is one of ours (Interrupted naming the signal, a lost lease), else Interrupted. */
export function interruption(signal: AbortSignal | undefined): DissentError {
  const reason: unknown = signal?.reason;
  if (DissentError.isInstance(reason)) return reason;
  return new Interrupted("interrupted");
}

/** An AI SDK Output that asks for JSON via `response_format` but hands back the raw text: we parse tolerantly. */
function rawJsonOutput(schema: ReplySchema, mode: ModelTarget["structured"]): OutputInterface<string, string, never> {
  return {
    name: "json",
    responseFormat: Promise.resolve(
      mode === "json_schema" || mode === "grammar" ? { type: "json", schema: schema.jsonSchema as never, name: schema.name } : { type: "json" },
    ),
    parseCompleteOutput: async ({ text }) => text,
    parsePartialOutput: async () => undefined,
    createElementStreamTransform: () => undefined,
  };
}

type Ai = typeof import("ai");
type Model = Awaited<ReturnType<ModelTarget["load"]>>;
let ai: Promise<Ai> | undefined;
let fetchReady: Promise<unknown> | undefined;
/** What `prepare` has already loaded: the SDK once fetch is warm, and each target's model (a target's load() is memoised by its router). */
let ready: Ai | undefined;
const loadedModels = new WeakMap<ModelTarget, Model>();

/**
 * The SDK, the target's model and Node's fetch (whose HTTP client loads on first use, ~100 ms),
 * loaded before any clock or budget starts: call_timeout_ms bounds the request, not our imports.
 */
async function prepare(target: ModelTarget): Promise<Prepared> {
  ai ??= import("ai");
  fetchReady ??= fetch("data:,").then(
    (r) => r.arrayBuffer(),
    () => undefined,
  );
  const [sdk, model] = await Promise.all([ai, target.load(), fetchReady]);
  ready = sdk;
  loadedModels.set(target, model);
  return { generateText: sdk.generateText, wrap: sdk.wrapLanguageModel, model };
}

/** What `prepare` gave for this target before, without a promise: the common case once a process is warm. */
function prepared(target: ModelTarget): Prepared | undefined {
  const model = ready ? loadedModels.get(target) : undefined;
  return ready && model !== undefined ? { generateText: ready.generateText, wrap: ready.wrapLanguageModel, model } : undefined;
}

/** The SDK functions a call uses and the target's model. */
interface Prepared {
  generateText: Ai["generateText"];
  wrap: Ai["wrapLanguageModel"];
  model: Model;
}

/** Without a sink of the caller's, the SDK's warnings are Node process warnings: stderr, never stdout. */
const processWarning: WarningSink = (message) => process.emitWarning(message, { code: "DISSENT_SDK_WARNING" });

/** The target's model with its AI SDK warnings routed to the caller's sink instead of the SDK's console (docs/run.md). */
function quietModel({ wrap, model }: Prepared, target: ModelTarget, sink: WarningSink | undefined): Model {
  if (typeof model !== "object" || model.specificationVersion !== "v3") return model;
  const who = { provider: target.provider, model: target.model, sdk: model };
  return wrap({ model, middleware: warningsMiddleware((warnings) => reportSdkWarnings(warnings, who, sink ?? processWarning)) });
}

interface Received extends CachedReply {
  raw_finish_reason?: string;
}

/** One attempt: its own timer, cleared when it ends (no timer outlives its call), and the caller's signal linked in. */
async function attemptOnce(
  loaded: Prepared,
  target: ModelTarget,
  request: ModelRequest,
  ctx: CallContext,
): Promise<{ reply: Received } | { error: unknown; timedOut: boolean }> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error("timed out"));
  }, ctx.timeoutMs);
  const onAbort = () => controller.abort(ctx.signal?.reason);
  ctx.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    if (ctx.signal?.aborted) throw interruption(ctx.signal);
    const structured = request.schema !== undefined && target.structured !== "prompt";
    const result = await loaded.generateText({
      model: quietModel(loaded, target, ctx.warn),
      system: request.system,
      messages: request.messages,
      temperature: 0,
      seed: ctx.seed,
      ...(target.maxTokens ? { maxOutputTokens: target.maxTokens } : {}),
      maxRetries: 0, // transport retries are ours: bounded, per-attempt timeout, Retry-After honoured
      abortSignal: controller.signal,
      ...(structured && request.schema
        ? {
            output: rawJsonOutput(request.schema, target.structured),
            providerOptions: { openai: { strictJsonSchema: false }, openaiCompatible: { strictJsonSchema: false } },
          }
        : {}),
    });
    const raw = result.rawFinishReason;
    return {
      reply: {
        text: result.text,
        input_tokens: result.usage.inputTokens ?? 0,
        output_tokens: result.usage.outputTokens ?? 0,
        finish_reason: String(result.finishReason),
        ...(typeof raw === "string" ? { raw_finish_reason: raw } : {}),
      },
    };
  } catch (e) {
    if (ctx.signal?.aborted) throw interruption(ctx.signal);
    return { error: e, timedOut };
  } finally {
    clearTimeout(timer);
    ctx.signal?.removeEventListener("abort", onAbort);
  }
}

/** Is this reply an answer at all? A reply cut off or empty is a failed call (docs/configuration.md). */
function unusable(reply: Received, target: ModelTarget): Classified | undefined {
  const what = `provider '${target.provider}' (${target.model})`;
  const why = notAnAnswer({ text: reply.text, finishReason: reply.finish_reason, rawFinishReason: reply.raw_finish_reason });
  if (why === undefined) return undefined;
  if (why === "truncated" && reply.finish_reason === "length") {
    const limit = target.maxTokens ? ` (max_tokens ${target.maxTokens})` : "";
    return { kind: "truncated", detail: `${what} cut the reply off at its length limit${limit}: raise max_tokens for provider '${target.provider}'` };
  }
  if (why === "truncated") return { kind: "truncated", detail: `${what} stopped its reply stream before it finished` };
  const reasoningOnly = reply.text.trim() !== "";
  return {
    kind: "empty_reply",
    detail: `${what} replied with ${reasoningOnly ? "reasoning only, no answer" : "nothing"}${reasoningOnly ? ": raise max_tokens so it can finish" : ""}`,
  };
}

/** Time one call spent waiting for a `max_concurrency` slot, across its attempts (recorded as `queue_ms`, never as latency). */
interface Queued {
  ms: number;
}

async function withRetries(
  loaded: Prepared,
  target: ModelTarget,
  request: ModelRequest,
  ctx: CallContext,
  queued: Queued,
): Promise<{ reply: Received; attempts: number }> {
  const sleep = ctx.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt++) {
    // The provider's concurrency slot is held for the request only: queued time never counts against call_timeout_ms.
    const asked = clockOf(ctx)();
    const run = () => attemptOnce(loaded, target, request, ctx);
    // Without a limiter nothing waits: queue_ms is exactly 0 (same inputs, same records).
    const outcome = await (target.limiter
      ? target.limiter(() => {
          queued.ms += clockOf(ctx)() - asked;
          return run();
        })
      : run());
    let failure: Classified;
    if ("reply" in outcome) {
      const bad = unusable(outcome.reply, target);
      if (!bad) return { reply: outcome.reply, attempts: attempt + 1 };
      failure = bad;
    } else {
      failure = classify(outcome.error, outcome.timedOut);
    }
    // A Retry-After longer than a minute is honoured by not retrying early: the call fails, saying so.
    const tooLong = failure.retryAfterMs !== undefined && failure.retryAfterMs > MAX_RETRY_AFTER_MS;
    if (!RETRYABLE.has(failure.kind) || attempt >= ctx.maxRetries || tooLong) {
      if (tooLong) failure.detail += ` (the server asks to retry after ${Math.round((failure.retryAfterMs ?? 0) / 1000)} s)`;
      throw new AttemptsFailed(failure, attempt + 1);
    }
    await sleep(failure.retryAfterMs ?? ctx.backoffMs * 2 ** attempt, ctx.signal);
  }
}

function describe(target: ModelTarget, f: AttemptsFailed): string {
  const what = `provider '${target.provider}' (${target.model})`;
  const tries = f.attempts > 1 ? ` after ${f.attempts} attempts` : "";
  const detail = f.failure.detail;
  switch (f.failure.kind) {
    case "auth":
      return `${what} refused the request (${f.failure.status ?? "auth"}): ${detail}${target.keyHint ? `; check ${target.keyHint}` : ""}`;
    case "timeout":
      return `${what} timed out${tries}`;
    case "unreachable":
      return `could not reach ${what} at ${target.endpoint.replace(/^[^ ]+ /, "")}${tries}: ${detail}${target.unreachableHint ? `. ${target.unreachableHint}` : ""}`;
    case "empty_reply":
    case "truncated":
      return `${detail}${tries}`;
    case "reply_too_large":
      // Names the setting (docs/limits.md): the reply was read no further, not printed and not cached.
      return `${what} sent a reply larger than ${formatLimit(target.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES)}, the limit ${target.maxReplyBytesFrom ?? "max_reply_bytes"} sets: it was not read further nor cached; raise ${target.maxReplyBytesFrom ?? "max_reply_bytes"} if replies this large are expected`;
    default:
      return `${what} failed${tries}: ${detail}`;
  }
}

/** The clock call times are read from: the context's (tests), else the process's monotonic one. */
const clockOf = (ctx: CallContext): (() => number) => ctx.now ?? (() => performance.now());

/** Milliseconds to two decimals, as call records give them. */
const ms = (t: number) => Math.round(t * 100) / 100;

/** Characters of a request, for the event log (which records sizes and hashes, never content by default). */
const charsOf = (request: ModelRequest) => request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);

/**
 * The one door to a model: route (primary, then secondary when the primary cannot be reached),
 * cache, per-attempt timeout, bounded retries, provider concurrency, budget, redaction, the
 * caller's parser, and a ModelCall event — for every call, failed ones included.
 */
export async function callModel<T = unknown>(
  meta: CallMeta,
  request: ModelRequest,
  ctx: CallContext,
  parse?: (answer: string) => Parsed<T>,
): Promise<ModelReply<T>> {
  const route = ctx.router(meta.routeAs ?? meta.role);
  const targets = route.secondary ? [route.primary, route.secondary] : [route.primary];
  const redact = ctx.redact ?? ((t: string) => t);
  const now = clockOf(ctx);
  // The content address is needed only by a cache or an event sink: a bare library call skips the hashing.
  const keyed = ctx.cache !== undefined || ctx.emit !== undefined;
  const keys = keyed ? targets.map((t) => requestKey(t, request, ctx.seed)) : targets.map(() => "");
  let fallbackReason: string | undefined;

  const finish = async (
    target: ModelTarget,
    key: string,
    started: number,
    reply: Received | undefined,
    cached: boolean,
    extra: { attempts?: number; error?: string; kind?: string; queuedMs?: number },
  ): Promise<ModelReply<T>> => {
    const text = reply?.text ?? "";
    const answer = reply ? answerOf(text) : "";
    const parsed = reply && parse ? parse(answer) : undefined;
    const error = extra.error ?? (parsed && !parsed.ok ? parsed.error : undefined);
    const cost = reply && !cached ? await target.cost(reply.input_tokens, reply.output_tokens) : cached ? await zeroIfPriced(target) : await target.cost(0, 0);
    const record: CallRecord = {
      role: meta.role,
      provider: target.provider,
      model: target.model,
      route: target.route,
      cached,
      // The request's own time: what it waited for a max_concurrency slot is queue_ms, apart (docs/run.md).
      latency_ms: ms(now() - started - (extra.queuedMs ?? 0)),
      ...(extra.queuedMs !== undefined ? { queue_ms: ms(extra.queuedMs) } : {}),
      input_tokens: reply?.input_tokens ?? 0,
      output_tokens: reply?.output_tokens ?? 0,
      cost_usd: cost === null ? null : roundUsd(cost),
      ...(error ? { error } : {}),
    };
    const ended = now();
    ctx.observe?.({
      role: meta.role,
      target,
      startedAt: started + (extra.queuedMs ?? 0),
      endedAt: ended,
      cached,
      inputTokens: record.input_tokens,
      outputTokens: record.output_tokens,
      ...(reply ? { finishReason: reply.finish_reason, reply: text } : {}),
      ...(extra.error ? { error: { kind: extra.kind ?? "error", message: extra.error } } : {}),
      ...(meta.stage ? { stage: meta.stage } : {}),
      ...(meta.round !== undefined ? { round: meta.round } : {}),
      ...(parsed && !parsed.ok ? { parseError: parsed.error } : {}),
      request,
    });
    if (ctx.emit)
      await ctx.emit({
        type: "ModelCall",
        issue_id: ctx.issueId ?? null,
        ...(ctx.runId ? { run_id: ctx.runId } : {}),
        ...record,
        request_hash: key,
        prompt_chars: charsOf(request),
        ...(reply ? { reply_hash: sha256(text), reply_chars: text.length, finish_reason: reply.finish_reason } : {}),
        ...(request.promptFile ? { prompt_file: request.promptFile.name, prompt_file_hash: request.promptFile.hash } : {}),
        ...(meta.wikiEntries ? { wiki_entries: meta.wikiEntries } : {}),
        ...(meta.stage ? { stage: meta.stage } : {}),
        ...(meta.round !== undefined ? { round: meta.round } : {}),
        ...(fallbackReason && target.route === "secondary" ? { fallback_reason: fallbackReason } : {}),
        ...(extra.attempts !== undefined ? { attempts: extra.attempts } : {}),
        ...(ctx.logContent ? { content: { request, ...(reply ? { reply: text } : {}) } } : {}),
      });
    return { text, answer, record, requestHash: key, ...(parsed ? { parsed } : {}) };
  };

  // Every target's cache first: a run that once fell back to the secondary replays from it without
  // knocking on the dead primary again (identical inputs, no network call).
  if (ctx.cache && ctx.cacheMode !== "bypass") {
    for (const [i, target] of targets.entries()) {
      const started = now();
      const hit = await ctx.cache.get(keys[i] as string);
      if (hit) return finish(target, keys[i] as string, started, hit, true, {});
    }
  }

  let lastFailure: { target: ModelTarget; error: AttemptsFailed; records: CallRecord[] } | undefined;
  const failedRecords: CallRecord[] = [];
  if (ctx.cacheMode !== "replay") {
    for (const [i, target] of targets.entries()) {
      const key = keys[i] as string;
      const loaded = prepared(target) ?? (await prepare(target)); // a missing API key fails here, before the budget is touched
      // With a dollar ceiling, a call is sent only if its worst case fits: the prompt (~4 characters a
      // token) and the most it may write (max_tokens, else 4096).
      const estimate = ctx.budget?.tracksUsd ? ((await target.cost(Math.ceil(charsOf(request) / 4), target.maxTokens ?? 4096)) ?? 0) : 0;
      const ticket = ctx.budget?.take(estimate);
      const started = now();
      const queued: Queued = { ms: 0 };
      try {
        const { reply, attempts } = await withRetries(loaded, target, request, ctx, queued);
        const clean: Received = { ...reply, text: redact(reply.text) }; // a reply that echoes a key never carries it further
        if (ctx.cache) {
          const { raw_finish_reason: _raw, ...stored } = clean;
          await ctx.cache.put(key, stored, { provider: target.provider, model: target.model });
        }
        const done = await finish(target, key, started, clean, false, { attempts, queuedMs: queued.ms });
        ctx.budget?.addCost?.(done.record.cost_usd ?? null);
        ticket?.(true);
        return done;
      } catch (e) {
        if (ctx.signal?.aborted && DissentError.isInstance(e)) {
          // The request was sent: it is on the record and spends its unit like any other.
          await finish(target, key, started, undefined, false, { error: "interrupted", kind: "interrupted", queuedMs: queued.ms }).catch(() => undefined);
          ticket?.(true);
          throw e;
        }
        if (!(e instanceof AttemptsFailed)) {
          ticket?.(false);
          throw e;
        }
        e.failure.detail = redact(e.failure.detail);
        const failed = await finish(target, key, started, undefined, false, {
          attempts: e.attempts,
          error: e.failure.detail,
          kind: e.failure.kind,
          queuedMs: queued.ms,
        });
        ticket?.(true);
        failedRecords.push(failed.record);
        lastFailure = { target, error: e, records: failedRecords };
        if (FALLBACK.has(e.failure.kind) && target.route === "primary" && route.secondary) {
          fallbackReason = `${e.failure.kind}: ${e.failure.detail}`;
          continue;
        }
        break;
      }
    }
  }
  if (!lastFailure) {
    throw new ReplayMiss(`--replay: no cached reply for role '${meta.role}' (${route.primary.provider}:${route.primary.model}); run once without --replay`);
  }
  const { target, error } = lastFailure;
  let message = describe(target, error);
  if (target.route === "secondary" && fallbackReason)
    message += ` (the primary '${route.primary.provider}' (${route.primary.model}) failed first: ${fallbackReason})`;
  const failure = {
    provider: target.provider,
    model: target.model,
    kind: error.failure.kind,
    attempts: error.attempts,
    ...(error.failure.status !== undefined ? { status: error.failure.status } : {}),
    ...(error.failure.retryAfterMs !== undefined ? { retryAfterMs: error.failure.retryAfterMs } : {}),
  };
  throw error.failure.kind === "auth" ? new ProviderAuthError(message, failure, lastFailure.records) : new ProviderError(message, failure, lastFailure.records);
}

/** A cache hit spent nothing: 0 when the model has a price, null when its price is unknown. */
async function zeroIfPriced(target: ModelTarget): Promise<number | null> {
  return (await target.cost(0, 0)) === null ? null : 0;
}

/** The answer of a reply: reasoning removed; the leading blank lines a removed block leaves, too. */
export function answerOf(text: string): string {
  if (!text.includes("<")) return text;
  const stripped = stripThink(text);
  return stripped === text ? text : stripped.replace(/^\s+/, "");
}
