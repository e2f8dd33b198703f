import { NONE } from "../none.js";
import type { CallRecord } from "../contracts/audit.js";
import type { NewEvent } from "../contracts/events.js";
import { DissentError, ReplayMiss } from "../errors.js";
import { canonicalJson, sha256 } from "../hash.js";
import type { ReplyCache } from "./cache.js";
import { AttemptsFailed, clockOf, prepare, prepared, withRetries, type Queued, type Received } from "./attempt.js";
import { callError, type TargetFailure } from "./call-error.js";
import { stripThink, type Parsed } from "./json.js";
import { roundUsd } from "./pricing.js";
import { FALLBACK } from "./transport.js";
import type { CallContext, ModelRequest, ModelTarget } from "./types.js";

export { interruption } from "./attempt.js";

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

/**
 * The one door to a model with its context bound (`callModel` minus `ctx`): what the gate, the
 * pipeline, the reviewer and the eval take. `emit` overrides where this call's ModelCall event goes
 * (the stage runner orders a round's events itself).
 */
export type CallDoor = <T>(
  meta: CallMeta,
  request: ModelRequest,
  parse?: (answer: string) => Parsed<T>,
  emit?: (event: NewEvent) => void | Promise<void>,
) => Promise<ModelReply<T>>;

/** `callModel` with its context bound: the door the drivers are given. */
export function doorOf(ctx: CallContext): CallDoor {
  return (meta, request, parse, emit) => callModel(meta, request, emit ? { ...ctx, emit } : ctx, parse);
}

/**
 * Content address of a request: endpoint, model, messages, parameters, schema and whatever the
 * provider's config adds to every request (`extra_body`, `headers` as written) — never credentials.
 * A provider that adds nothing keys as it always did, so its cached replies stay hits.
 */
export function requestKey(target: ModelTarget, request: ModelRequest, seed: number): string {
  return sha256(
    canonicalJson({
      v: 1,
      endpoint: target.endpoint,
      model: target.model,
      structured: request.schema ? target.structured : "none",
      system: request.system,
      messages: request.messages,
      params: { temperature: 0, seed, ...(target.maxTokens ? { max_tokens: target.maxTokens } : NONE) },
      schema: request.schema ?? null,
      ...(target.requestExtras ? { extras: target.requestExtras } : NONE),
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

/** The keys of a call neither cached nor recorded as an event: no hashing (a route has at most two targets). */
const UNKEYED: readonly string[] = ["", ""];

/** No redaction configured: the text as it is. */
const unchanged = (t: string) => t;

/** Milliseconds to two decimals, as call records give them. */
const ms = (t: number) => Math.round(t * 100) / 100;

/** Characters of a request, for the event log (which records sizes and hashes, never content by default). */
const charsOf = (request: ModelRequest) => request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);

/** How a call ended on one target, for its record. */
interface Ending {
  attempts?: number;
  error?: string;
  kind?: string;
  queuedMs?: number;
}

/** What recording a call needs besides how it ended: the call, its context, and the reason the secondary was tried. */
interface Recording<T> {
  meta: CallMeta;
  request: ModelRequest;
  ctx: CallContext;
  parse: ((answer: string) => Parsed<T>) | undefined;
  fallbackReason?: string;
}

/** A call's dollars: a cache hit spent nothing (0 when the model has a price, null when not); a network call its tokens at their rates. */
async function costOf(target: ModelTarget, reply: Received | undefined, cached: boolean): Promise<number | null> {
  if (cached) return zeroIfPriced(target);
  if (!reply) return target.cost(0, 0);
  return target.cost(reply.input_tokens, reply.output_tokens, { read: reply.cached_input_tokens ?? 0, write: reply.cache_write_input_tokens ?? 0 });
}

/**
 * Records one call on one target — its reply or its failure — in the one place every call is
 * metered (docs/serve.md "Cost"): the call record, the context's meter, the observer (telemetry),
 * and the ModelCall event.
 */
async function record<T>(
  r: Recording<T>,
  target: ModelTarget,
  key: string,
  started: number,
  reply: Received | undefined,
  cached: boolean,
  end: Ending,
): Promise<ModelReply<T>> {
  const { meta, request, ctx } = r;
  const now = clockOf(ctx);
  const text = reply?.text ?? "";
  const answer = reply ? answerOf(text) : "";
  const parsed = reply && r.parse ? r.parse(answer) : undefined;
  const error = end.error ?? (parsed && !parsed.ok ? parsed.error : undefined);
  const cost = await costOf(target, reply, cached);
  const record: CallRecord = {
    role: meta.role,
    provider: target.provider,
    model: target.model,
    route: target.route,
    cached,
    // The request's own time: what it waited for a max_concurrency slot is queue_ms, apart (docs/run.md).
    latency_ms: ms(now() - started - (end.queuedMs ?? 0)),
    ...(end.queuedMs !== undefined ? { queue_ms: ms(end.queuedMs) } : NONE),
    input_tokens: reply?.input_tokens ?? 0,
    output_tokens: reply?.output_tokens ?? 0,
    cached_input_tokens: reply?.cached_input_tokens ?? 0,
    ...(reply?.cache_write_input_tokens ? { cache_write_input_tokens: reply.cache_write_input_tokens } : NONE),
    cost_usd: cost === null ? null : roundUsd(cost),
    ...(error ? { error } : NONE),
  };
  ctx.meter?.(record);
  ctx.observe?.({
    role: meta.role,
    target,
    startedAt: started + (end.queuedMs ?? 0),
    endedAt: now(),
    cached,
    inputTokens: record.input_tokens,
    outputTokens: record.output_tokens,
    cachedInputTokens: record.cached_input_tokens ?? 0,
    cacheWriteInputTokens: record.cache_write_input_tokens ?? 0,
    ...(reply ? { finishReason: reply.finish_reason, reply: text } : NONE),
    ...(end.attempts !== undefined ? { attempts: end.attempts } : NONE),
    ...(end.error ? { error: { kind: end.kind ?? "error", message: end.error } } : NONE),
    ...(meta.stage ? { stage: meta.stage } : NONE),
    ...(meta.round !== undefined ? { round: meta.round } : NONE),
    ...(parsed && !parsed.ok ? { parseError: parsed.error } : NONE),
    request,
  });
  if (ctx.emit)
    await ctx.emit({
      type: "ModelCall",
      issue_id: ctx.issueId ?? null,
      ...(ctx.runId ? { run_id: ctx.runId } : NONE),
      ...record,
      request_hash: key,
      prompt_chars: charsOf(request),
      ...(reply ? { reply_hash: sha256(text), reply_chars: text.length, finish_reason: reply.finish_reason } : NONE),
      ...(request.promptFile ? { prompt_file: request.promptFile.name, prompt_file_hash: request.promptFile.hash } : NONE),
      ...(meta.wikiEntries ? { wiki_entries: meta.wikiEntries } : NONE),
      ...(meta.stage ? { stage: meta.stage } : NONE),
      ...(meta.round !== undefined ? { round: meta.round } : NONE),
      ...(r.fallbackReason && target.route === "secondary" ? { fallback_reason: r.fallbackReason } : NONE),
      ...(end.attempts !== undefined ? { attempts: end.attempts } : NONE),
      ...(ctx.logContent ? { content: { request, ...(reply ? { reply: text } : NONE) } } : NONE),
    });
  return { text, answer, record, requestHash: key, ...(parsed ? { parsed } : NONE) };
}

/**
 * Every target's cache first: a run that once fell back to the secondary replays from it without
 * knocking on the dead primary again (identical inputs, no network call).
 */
async function fromCache<T>(r: Recording<T>, cache: ReplyCache, targets: readonly ModelTarget[], keys: readonly string[]): Promise<ModelReply<T> | undefined> {
  // Index loops here and below: `entries()` makes an iterator and a pair per target, on every call.
  for (let i = 0; i < targets.length; i++) {
    const target = targets[i] as ModelTarget;
    const started = clockOf(r.ctx)();
    const hit = await cache.get(keys[i] as string);
    if (hit) return record(r, target, keys[i] as string, started, hit, true, NONE);
  }
  return undefined;
}

/**
 * One target's network call: the budget unit taken (with its worst-case dollars under a dollar
 * ceiling), its attempts, the reply cached and recorded — or its failure recorded and returned.
 */
async function sendTo<T>(
  r: Recording<T>,
  target: ModelTarget,
  key: string,
): Promise<{ reply: ModelReply<T> } | { failed: AttemptsFailed; record: CallRecord }> {
  const { request, ctx } = r;
  const redact = ctx.redact ?? unchanged;
  const loaded = prepared(target) ?? (await prepare(target)); // a missing API key fails here, before the budget is touched
  // With a dollar ceiling, a call is sent only if its worst case fits: the prompt (~4 characters a
  // token) and the most it may write (max_tokens, else 4096).
  const estimate = ctx.budget?.tracksUsd ? ((await target.cost(Math.ceil(charsOf(request) / 4), target.maxTokens ?? 4096)) ?? 0) : 0;
  const ticket = ctx.budget?.take(estimate);
  const started = clockOf(ctx)();
  const queued: Queued = { ms: 0 };
  try {
    const { reply, attempts } = await withRetries(loaded, target, request, ctx, queued);
    const text = redact(reply.text); // a reply that echoes a key never carries it further
    const clean: Received = text === reply.text ? reply : { ...reply, text };
    if (ctx.cache) {
      const { raw_finish_reason: _raw, ...stored } = clean;
      await ctx.cache.put(key, stored, { provider: target.provider, model: target.model });
    }
    const done = await record(r, target, key, started, clean, false, { attempts, queuedMs: queued.ms });
    ctx.budget?.addCost?.(done.record.cost_usd ?? null);
    ticket?.(true);
    return { reply: done };
  } catch (e) {
    if (ctx.signal?.aborted && DissentError.isInstance(e)) {
      // The request was sent: it is on the record and spends its unit like any other.
      await record(r, target, key, started, undefined, false, { error: "interrupted", kind: "interrupted", queuedMs: queued.ms }).catch(() => undefined);
      ticket?.(true);
      throw e;
    }
    if (!(e instanceof AttemptsFailed)) {
      ticket?.(false);
      throw e;
    }
    e.failure.detail = redact(e.failure.detail);
    const failed = await record(r, target, key, started, undefined, false, {
      attempts: e.attempts,
      error: e.failure.detail,
      kind: e.failure.kind,
      queuedMs: queued.ms,
    });
    ticket?.(true);
    return { failed: e, record: failed.record };
  }
}

/**
 * The one door to a model: route (primary, then secondary when the primary cannot be reached),
 * cache, per-attempt timeout, bounded retries, provider concurrency, budget, redaction, the
 * caller's parser, and — for every call, failed ones included — its record, meter and ModelCall event.
 */
export async function callModel<T = unknown>(
  meta: CallMeta,
  request: ModelRequest,
  ctx: CallContext,
  parse?: (answer: string) => Parsed<T>,
): Promise<ModelReply<T>> {
  const route = ctx.router(meta.routeAs ?? meta.role);
  const targets = route.secondary ? [route.primary, route.secondary] : [route.primary];
  // The content address is needed only by a cache or an event sink: a bare library call skips the hashing.
  const keyed = ctx.cache !== undefined || ctx.emit !== undefined;
  const keys = keyed ? targets.map((t) => requestKey(t, request, ctx.seed)) : UNKEYED;
  const r: Recording<T> = { meta, request, ctx, parse };

  // Without a cache there is nothing to look up: no promise to wait for.
  const hit = ctx.cache && ctx.cacheMode !== "bypass" ? await fromCache(r, ctx.cache, targets, keys) : undefined;
  if (hit) return hit;
  if (ctx.cacheMode === "replay") {
    throw new ReplayMiss(`--replay: no cached reply for role '${meta.role}' (${route.primary.provider}:${route.primary.model}); run once without --replay`);
  }
  const records: CallRecord[] = [];
  let last: TargetFailure | undefined;
  for (let i = 0; i < targets.length; i++) {
    const target = targets[i] as ModelTarget;
    const outcome = await sendTo(r, target, keys[i] as string);
    if ("reply" in outcome) return outcome.reply;
    records.push(outcome.record);
    last = { target, error: outcome.failed, records };
    if (!(FALLBACK.has(outcome.failed.failure.kind) && target.route === "primary" && route.secondary)) break;
    r.fallbackReason = `${outcome.failed.failure.kind}: ${outcome.failed.failure.detail}`;
  }
  if (!last) throw new Error("a call with no target"); // unreachable: a route always has a primary
  throw callError(route, last, r.fallbackReason);
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
