import { NONE } from "../none.js";
import type { ModelMessage, OutputInterface } from "ai";
import { DissentError, Interrupted } from "../errors.js";
import { notAnAnswer } from "./answer-rule.js";
import type { CachedReply } from "./cache.js";
import { QuietModel, type WarningSink } from "./sdk-warnings.js";
import { classify, RETRYABLE, type Classified } from "./transport.js";
import type { CallContext, Limiter, ModelRequest, ModelTarget, ReplySchema } from "./types.js";

/**
 * One target's share of a call (docs/run.md): the SDK and the model loaded before any clock starts,
 * each attempt under its own timer, a reply that is no answer classified as a failure, and bounded
 * retries honouring Retry-After.
 */

/**
 * Failures an in-process model would only repeat: with temperature 0 and a fixed seed the same request
 * gives the same tokens, so a timeout, a cut-off or an empty reply is not tried again (issue 32: 3 × 120 s).
 */
const REPEATED_BY_A_DETERMINISTIC_MODEL: ReadonlySet<Classified["kind"]> = new Set(["timeout", "truncated", "empty_reply"]);

/** The longest Retry-After a call waits out; beyond it the call fails rather than retry early. */
const MAX_RETRY_AFTER_MS = 60_000;

/** Thrown by one target after its retries, carrying the classification. */
export class AttemptsFailed extends Error {
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

/** One raw Output per schema and mode: it holds no state of a call, so every call of that schema shares it. */
const rawOutputs = new WeakMap<ReplySchema, Map<ModelTarget["structured"], OutputInterface<string, string, never>>>();

/** An AI SDK Output that asks for JSON via `response_format` but hands back the raw text: we parse tolerantly. */
function rawJsonOutput(schema: ReplySchema, mode: ModelTarget["structured"]): OutputInterface<string, string, never> {
  let byMode = rawOutputs.get(schema);
  if (!byMode) rawOutputs.set(schema, (byMode = new Map()));
  let output = byMode.get(mode);
  if (!output) byMode.set(mode, (output = newRawJsonOutput(schema, mode)));
  return output;
}

function newRawJsonOutput(schema: ReplySchema, mode: ModelTarget["structured"]): OutputInterface<string, string, never> {
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
export async function prepare(target: ModelTarget): Promise<Prepared> {
  ai ??= import("ai");
  fetchReady ??= fetch("data:,").then(
    (r) => r.arrayBuffer(),
    () => undefined,
  );
  const [sdk, model] = await Promise.all([ai, target.load(), fetchReady]);
  ready = sdk;
  loadedModels.set(target, model);
  return { generateText: sdk.generateText, model };
}

/** What `prepare` gave for this target before, without a promise: the common case once a process is warm. */
export function prepared(target: ModelTarget): Prepared | undefined {
  const model = ready ? loadedModels.get(target) : undefined;
  return ready && model !== undefined ? { generateText: ready.generateText, model } : undefined;
}

/** The SDK functions a call uses and the target's model. */
export interface Prepared {
  generateText: Ai["generateText"];
  model: Model;
}

/** Without a sink of the caller's, the SDK's warnings are Node process warnings: stderr, never stdout. */
const processWarning: WarningSink = (message) => process.emitWarning(message, { code: "DISSENT_SDK_WARNING" });

/**
 * The target's model with its AI SDK warnings routed to the caller's sink instead of the SDK's console
 * (docs/run.md "Warnings"): one small object per attempt, cheaper than looking a cached wrapper up by
 * sink (a run's sink is new each run, so a cache keyed by it only grew weak-map entries).
 */
function quietModel(model: Model, target: ModelTarget, sink: WarningSink | undefined): Model {
  if (typeof model !== "object" || model.specificationVersion !== "v3") return model;
  return new QuietModel(model, target, sink ?? processWarning);
}

/** A reply as one attempt received it: the cached fields and the provider's own finish reason. */
export interface Received extends CachedReply {
  raw_finish_reason?: string;
}

/** A JSON Schema is a guide, not a strict contract: replies are read tolerantly (one object for every call; the SDK only reads it). */
const LOOSE_SCHEMA = { openai: { strictJsonSchema: false }, openaiCompatible: { strictJsonSchema: false } };

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
  const signal = ctx.signal;
  const onAbort = signal ? () => controller.abort(signal.reason) : undefined;
  if (onAbort) signal?.addEventListener("abort", onAbort, { once: true });
  try {
    if (ctx.signal?.aborted) throw interruption(ctx.signal);
    const structured = request.schema !== undefined && target.structured !== "prompt";
    const result = await loaded.generateText({
      model: quietModel(loaded.model, target, ctx.warn),
      system: request.system,
      messages: wireMessages(request, target),
      temperature: 0,
      seed: ctx.seed,
      ...(target.maxTokens ? { maxOutputTokens: target.maxTokens } : NONE),
      maxRetries: 0, // transport retries are ours: bounded, per-attempt timeout, Retry-After honoured
      abortSignal: controller.signal,
      ...(structured && request.schema
        ? {
            output: rawJsonOutput(request.schema, target.structured),
            providerOptions: LOOSE_SCHEMA,
          }
        : NONE),
    });
    const raw = result.rawFinishReason;
    const cacheRead = result.usage.inputTokenDetails?.cacheReadTokens ?? 0;
    const cacheWrite = result.usage.inputTokenDetails?.cacheWriteTokens ?? 0;
    return {
      reply: {
        text: result.text,
        input_tokens: result.usage.inputTokens ?? 0,
        output_tokens: result.usage.outputTokens ?? 0,
        cached_input_tokens: cacheRead,
        ...(cacheWrite > 0 ? { cache_write_input_tokens: cacheWrite } : NONE),
        finish_reason: String(result.finishReason),
        ...(typeof raw === "string" ? { raw_finish_reason: raw } : NONE),
      },
    };
  } catch (e) {
    if (ctx.signal?.aborted) throw interruption(ctx.signal);
    return { error: e, timedOut };
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

/** Is this reply an answer at all? A reply cut off or empty is a failed call (docs/configuration.md). */
function unusable(reply: Received, target: ModelTarget): Classified | undefined {
  const what = `provider '${target.provider}' (${target.model})`;
  const why = notAnAnswer({ text: reply.text, finishReason: reply.finish_reason, rawFinishReason: reply.raw_finish_reason });
  if (why === undefined) return undefined;
  const contextEnd = /^context-end:(\d+)$/.exec(reply.raw_finish_reason ?? "");
  if (why === "truncated" && contextEnd) {
    return {
      kind: "truncated",
      detail: `${what} ran into the end of its context (${contextEnd[1]} tokens, prompt and reply together) before the reply was done: raise context_size for provider '${target.provider}', or shorten the prompt`,
    };
  }
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
export interface Queued {
  ms: number;
}

/** An attempt through the provider's concurrency slot, held for the request only: queued time never counts against call_timeout_ms. */
function throughLimiter<R>(limiter: Limiter, queued: Queued, ctx: CallContext, run: () => Promise<R>): Promise<R> {
  const asked = clockOf(ctx)();
  return limiter(() => {
    queued.ms += clockOf(ctx)() - asked;
    return run();
  });
}

/** A target's attempts, up to `maxRetries` retries of a retryable failure; throws AttemptsFailed after the last. */
export async function withRetries(
  loaded: Prepared,
  target: ModelTarget,
  request: ModelRequest,
  ctx: CallContext,
  queued: Queued,
): Promise<{ reply: Received; attempts: number }> {
  const sleep = ctx.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt++) {
    // Without a limiter nothing waits: queue_ms is exactly 0 (same inputs, same records), and no clock is read for it.
    const outcome = await (target.limiter
      ? throughLimiter(target.limiter, queued, ctx, () => attemptOnce(loaded, target, request, ctx))
      : attemptOnce(loaded, target, request, ctx));
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
    // Every call is sent with temperature 0; with a seed, an in-process model answers a retry exactly as it did.
    const repeats = target.local === true && ctx.seed !== undefined && REPEATED_BY_A_DETERMINISTIC_MODEL.has(failure.kind);
    if (!RETRYABLE.has(failure.kind) || attempt >= ctx.maxRetries || tooLong || repeats) {
      if (tooLong) failure.detail += ` (the server asks to retry after ${Math.round((failure.retryAfterMs ?? 0) / 1000)} s)`;
      if (repeats && attempt < ctx.maxRetries) {
        const after = ctx.timeoutMs < 1000 ? `${ctx.timeoutMs} ms` : `${Math.round(ctx.timeoutMs / 1000)} s`;
        const what = failure.kind === "timeout" ? `timed out after ${after}` : failure.detail;
        failure.detail = `${what}; not retried: this in-process model answers the same request the same way (temperature 0, seed ${ctx.seed})${failure.kind === "timeout" ? ": raise call_timeout_ms, or route the role to a faster model" : ""}`;
      }
      throw new AttemptsFailed(failure, attempt + 1);
    }
    await sleep(failure.retryAfterMs ?? ctx.backoffMs * 2 ** attempt, ctx.signal);
  }
}

/** Anthropic's prompt cache is asked for, not automatic: a breakpoint that caches everything before it (docs/serve.md "Cost"). */
const BREAKPOINT = { anthropic: { cacheControl: { type: "ephemeral" } } } as const;

/**
 * The request's messages as sent. For a provider that caches only at a marked breakpoint, the first
 * user message is two text parts, the shared prefix (src/prompting/layout.ts) carrying the breakpoint;
 * every other provider gets the messages as they are (a string content, which every server reads).
 */
export function wireMessages(request: ModelRequest, target: Pick<ModelTarget, "cacheBreakpoints">): ModelMessage[] {
  const at = request.sharedPrefix;
  const first = request.messages[0];
  if (!target.cacheBreakpoints || at === undefined || first?.role !== "user" || at <= 0 || at >= first.content.length) return request.messages;
  const split: ModelMessage = {
    role: "user",
    content: [
      { type: "text", text: first.content.slice(0, at), providerOptions: BREAKPOINT },
      { type: "text", text: first.content.slice(at) },
    ],
  };
  return [split, ...request.messages.slice(1)];
}

/** The process's monotonic clock, one function for every call (no closure allocated per read). */
const monotonic = () => performance.now();

/** The clock call times are read from: the context's (tests), else the process's monotonic one. */
export const clockOf = (ctx: CallContext): (() => number) => ctx.now ?? monotonic;
