import type { OutputInterface } from "ai";
import type { CallRecord } from "../contracts/audit.js";
import { Interrupted, ProviderAuthError, ProviderError, ReplayMiss, messageOf } from "../errors.js";
import { canonicalJson, sha256 } from "../hash.js";
import { redact } from "../redact.js";
import type { CachedReply } from "./cache.js";
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
export interface ModelReply {
  text: string;
  record: CallRecord;
  requestHash: string;
}

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
      params: { temperature: 0, seed },
      schema: request.schema ?? null,
    }),
  );
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
    if (signal?.aborted) return reject(new Interrupted("interrupted"));
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Interrupted("interrupted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** An AI SDK Output that asks for JSON via `response_format` but hands back the raw text: we parse tolerantly. */
function rawJsonOutput(schema: ReplySchema, mode: ModelTarget["structured"]): OutputInterface<string, string, never> {
  return {
    name: "json",
    responseFormat: Promise.resolve(
      mode === "json_schema" ? { type: "json", schema: schema.jsonSchema as never, name: schema.name } : { type: "json" },
    ),
    parseCompleteOutput: async ({ text }) => text,
    parsePartialOutput: async () => undefined,
    createElementStreamTransform: () => undefined,
  };
}

type Generate = (typeof import("ai"))["generateText"];
type Model = Awaited<ReturnType<ModelTarget["load"]>>;

async function generateOnce(generateText: Generate, model: Model, target: ModelTarget, request: ModelRequest, seed: number, signal: AbortSignal): Promise<CachedReply> {
  const structured = request.schema !== undefined && target.structured !== "prompt";
  const result = await generateText({
    model,
    system: request.system,
    messages: request.messages,
    temperature: 0,
    seed,
    maxRetries: 0, // transport retries are ours: bounded, per attempt timeout, Retry-After honoured
    abortSignal: signal,
    ...(structured && request.schema
      ? {
          output: rawJsonOutput(request.schema, target.structured),
          providerOptions: { openai: { strictJsonSchema: false }, openaiCompatible: { strictJsonSchema: false } },
        }
      : {}),
  });
  return {
    text: result.text,
    input_tokens: result.usage.inputTokens ?? 0,
    output_tokens: result.usage.outputTokens ?? 0,
    finish_reason: String(result.finishReason),
  };
}

/** The SDK and the target's model, loaded before any clock or budget starts: call_timeout_ms bounds the model, not our imports. */
async function prepare(target: ModelTarget): Promise<{ generateText: Generate; model: Model }> {
  const [{ generateText }, model] = await Promise.all([import("ai"), target.load()]);
  return { generateText, model };
}

async function withRetries(
  { generateText, model }: { generateText: Generate; model: Model },
  target: ModelTarget,
  request: ModelRequest,
  ctx: CallContext,
): Promise<{ reply: CachedReply; attempts: number }> {
  const sleep = ctx.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt++) {
    const timeout = AbortSignal.timeout(ctx.timeoutMs);
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;
    try {
      return { reply: await generateOnce(generateText, model, target, request, ctx.seed, signal), attempts: attempt + 1 };
    } catch (e) {
      if (ctx.signal?.aborted) throw new Interrupted("interrupted");
      const failure = classify(e, timeout.aborted);
      // A Retry-After longer than a minute is honoured by not retrying early: the call fails, saying so.
      const tooLong = failure.retryAfterMs !== undefined && failure.retryAfterMs > MAX_RETRY_AFTER_MS;
      if (!RETRYABLE.has(failure.kind) || attempt >= ctx.maxRetries || tooLong) {
        if (tooLong) failure.detail += ` (the server asks to retry after ${Math.round((failure.retryAfterMs ?? 0) / 1000)} s)`;
        throw new AttemptsFailed(failure, attempt + 1);
      }
      await sleep(failure.retryAfterMs ?? ctx.backoffMs * 2 ** attempt, ctx.signal);
    }
  }
}

function describe(target: ModelTarget, f: AttemptsFailed, secrets: readonly string[]): string {
  const what = `provider '${target.provider}' (${target.model})`;
  const tries = f.attempts > 1 ? ` after ${f.attempts} attempts` : "";
  const detail = redact(f.failure.detail, secrets);
  switch (f.failure.kind) {
    case "auth":
      return `${what} refused the request (${f.failure.status ?? "auth"}): ${detail}${target.keyHint ? `; check ${target.keyHint}` : ""}`;
    case "timeout":
      return `${what} timed out${tries}`;
    case "unreachable":
      return `could not reach ${what} at ${target.endpoint.replace(/^[^ ]+ /, "")}${tries}: ${detail}${target.unreachableHint ? `. ${target.unreachableHint}` : ""}`;
    default:
      return `${what} failed${tries}: ${detail}`;
  }
}

/**
 * The one door to a model: route (primary, then secondary when the primary cannot be
 * reached), cache, per-attempt timeout, bounded retries, budget, and a ModelCall event.
 */
export async function callModel(meta: CallMeta, request: ModelRequest, ctx: CallContext): Promise<ModelReply> {
  const route = ctx.router(meta.routeAs ?? meta.role);
  const targets = route.secondary ? [route.primary, route.secondary] : [route.primary];
  const promptChars = request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);
  let fallbackReason: string | undefined;
  let lastFailure: { target: ModelTarget; error: AttemptsFailed } | undefined;

  const record = (target: ModelTarget, key: string, started: number, reply: CachedReply | undefined, cached: boolean, extra: { attempts?: number; error?: string }) => {
    const rec: CallRecord = {
      role: meta.role,
      provider: target.provider,
      model: target.model,
      route: target.route,
      cached,
      latency_ms: Math.round((performance.now() - started) * 100) / 100,
      input_tokens: reply?.input_tokens ?? 0,
      output_tokens: reply?.output_tokens ?? 0,
    };
    ctx.emit?.({
      type: "ModelCall",
      issue_id: ctx.issueId ?? null,
      ...(ctx.runId ? { run_id: ctx.runId } : {}),
      ...rec,
      request_hash: key,
      prompt_chars: promptChars,
      ...(reply ? { reply_hash: sha256(reply.text), reply_chars: reply.text.length } : {}),
      ...(request.promptFile ? { prompt_file: request.promptFile.name, prompt_file_hash: request.promptFile.hash } : {}),
      ...(meta.wikiEntries ? { wiki_entries: meta.wikiEntries } : {}),
      ...(meta.stage ? { stage: meta.stage } : {}),
      ...(meta.round !== undefined ? { round: meta.round } : {}),
      ...(fallbackReason && target.route === "secondary" ? { fallback_reason: fallbackReason } : {}),
      ...extra,
      ...(ctx.logContent ? { content: { request, ...(reply ? { reply: reply.text } : {}) } } : {}),
    });
    return rec;
  };

  const keys = targets.map((t) => requestKey(t, request, ctx.seed));
  // Every target's cache first: a run that once fell back to the secondary replays from it without
  // knocking on the dead primary again (identical inputs, no network call).
  if (ctx.cache && ctx.cacheMode !== "bypass") {
    for (const [i, target] of targets.entries()) {
      const started = performance.now();
      const hit = ctx.cache.get(keys[i] as string);
      if (hit) return { text: hit.text, record: record(target, keys[i] as string, started, hit, true, {}), requestHash: keys[i] as string };
    }
  }
  if (ctx.cacheMode !== "replay") {
    for (const [i, target] of targets.entries()) {
      const key = keys[i] as string;
      const loaded = await prepare(target); // a missing API key fails here, before the budget is touched
      const started = performance.now();
      ctx.budget?.take();
      try {
        const { reply, attempts } = await withRetries(loaded, target, request, ctx);
        if (ctx.cache && ctx.cacheMode === "use") ctx.cache.put(key, reply, { provider: target.provider, model: target.model });
        return { text: reply.text, record: record(target, key, started, reply, false, { attempts }), requestHash: key };
      } catch (e) {
        if (!(e instanceof AttemptsFailed)) throw e;
        record(target, key, started, undefined, false, { attempts: e.attempts, error: redact(e.failure.detail, ctx.secrets) });
        lastFailure = { target, error: e };
        if (FALLBACK.has(e.failure.kind) && target.route === "primary" && route.secondary) {
          fallbackReason = `${e.failure.kind}: ${redact(e.failure.detail, ctx.secrets)}`;
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
  let message = describe(target, error, ctx.secrets ?? []);
  if (target.route === "secondary" && fallbackReason) message += ` (the primary '${route.primary.provider}' (${route.primary.model}) failed first: ${fallbackReason})`;
  if (error.failure.kind === "auth") throw new ProviderAuthError(message);
  throw new ProviderError(message, { cause: messageOf(error) });
}
