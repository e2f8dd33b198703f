import type { LanguageModel } from "ai";
import type { CallRecord } from "../contracts/audit.js";
import type { NewEvent } from "../contracts/events.js";
import type { ReplyCache } from "./cache.js";
import type { CacheTokens } from "./pricing.js";
import type { StructuredMode } from "./providers.js";

/** Runs `fn` when a slot of a provider's `max_concurrency` is free (docs/configuration.md). */
export type Limiter = <T>(fn: () => Promise<T>) => Promise<T>;

/** One concrete model a role may be sent to. */
export interface ModelTarget {
  /** Provider name as configured (shown in call records). */
  provider: string;
  model: string;
  route: "primary" | "secondary";
  /** Provider type and base URL (or model file hash): part of the cache key, so two endpoints never share replies. */
  endpoint: string;
  /** A model in this process (the llama-cpp engine), not across the network: its calls are `local` in what dissent shows. */
  local?: boolean;
  structured: StructuredMode;
  /**
   * What the provider's config adds to every request besides the model and the messages — its
   * `extra_body`, its `headers` as written in the config (a `${VAR}` by name, never its value) —
   * when it adds anything: part of the cache key, so two routes that send different requests never
   * share a reply.
   */
  requestExtras?: Record<string, unknown>;
  /** The environment variable holding this provider's key, named in auth errors. */
  keyHint?: string;
  /** What to tell the user when the endpoint does not answer (e.g. how to start Ollama). */
  unreachableHint?: string;
  /** Sent as the reply-token limit of every request. */
  maxTokens?: number;
  /** Bytes a reply may take as it arrives (docs/limits.md), and the setting that says so, for the error. */
  maxReplyBytes?: number;
  maxReplyBytesFrom?: string;
  /** The provider caches a prompt prefix only where a request marks it (Anthropic's `cache_control`): the shared prefix gets a breakpoint. */
  cacheBreakpoints?: boolean;
  /** The provider's concurrency slots, shared by every role routed to it. */
  limiter?: Limiter;
  /** The price of a call's tokens in USD; null when the model's price is unknown (then `cost_usd` is null, never 0). */
  cost(inputTokens: number, outputTokens: number, cache?: CacheTokens): Promise<number | null>;
  /** Creates the AI SDK model; imported lazily so cached runs never load a provider. */
  load(): Promise<LanguageModel>;
}

/** A role's route: the primary, and the secondary tried only when the primary cannot be reached. */
export interface RoleRoute {
  primary: ModelTarget;
  secondary?: ModelTarget;
}

/** Resolves a role (e.g. `plan.builder`) to its route, most specific first. */
export type Router = (role: string) => RoleRoute;

export interface ChatMessage {
  role: "user" | "assistant";
  content: string;
}

/** A JSON Schema sent as `response_format` for structured replies. */
export interface ReplySchema {
  name: string;
  jsonSchema: Record<string, unknown>;
}

/** What a caller asks of a model. Parameters (temperature 0, seed) are added by `callModel`. */
export interface ModelRequest {
  system: string;
  messages: ChatMessage[];
  schema?: ReplySchema;
  /** The prompt file the system message came from, hashed into the ModelCall event. */
  promptFile?: { name: string; hash: string };
  /**
   * Characters at the start of the first user message that every request of its round shares
   * (src/prompting/layout.ts): where a provider that caches only at a marked breakpoint (Anthropic) gets one.
   */
  sharedPrefix?: number;
}

/** A reserved network call: `done(true)` once its ModelCall event is recorded, `done(false)` if nothing was sent. */
export type BudgetTicket = (sent: boolean) => void;

/** A hard ceiling on network model calls (and, optionally, dollars), shared by every call of one issue. */
export interface CallBudget {
  /** Calls still allowed (recorded and in flight both count). */
  remaining(): number;
  /** Reserves one call (and its estimated dollars); throws BudgetExceeded when either ceiling would be crossed. */
  take(estimatedUsd?: number): BudgetTicket;
  /** True when a dollar ceiling is set: the door then estimates each call's cost before sending it. */
  readonly tracksUsd?: boolean;
  /** Adds a finished call's actual cost. */
  addCost?(usd: number | null): void;
}

/** Everything a model call needs besides the request: the one door's configuration. */
export interface CallContext {
  router: Router;
  cache?: ReplyCache;
  /** `use` reads and writes the cache; `bypass` (--no-cache) never reads it but replaces what it holds; `replay` never touches the network. */
  cacheMode: "use" | "bypass" | "replay";
  seed: number;
  timeoutMs: number;
  /** Transport retries per call (docs/configuration.md: at most 2). */
  maxRetries: number;
  /** First backoff delay; doubles per retry unless Retry-After says otherwise. */
  backoffMs: number;
  signal?: AbortSignal;
  budget?: CallBudget;
  /** Sink for ModelCall events; awaited, so an event is durable before the call's budget unit is settled. */
  emit?: (event: NewEvent) => void | Promise<void>;
  issueId?: string | null;
  runId?: string;
  logContent?: boolean;
  /** Redacts every secret the config named: replies and errors pass through it before anything sees them. */
  redact?: (text: string) => string;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The clock (milliseconds) latency and queue times are read from; default `performance.now`. */
  now?: () => number;
  /** Told of each finished call (telemetry spans, live displays). */
  observe?: (call: ObservedCall) => void;
  /**
   * Told of every call's record — a cache hit, a reply, a failed or interrupted call — the moment it
   * is made: the one place a run's calls, tokens and dollars are metered (`PlanResult.calls`, StageRun usage).
   */
  meter?: (record: CallRecord) => void;
  /**
   * Receives the AI SDK's warnings about a call (a parameter the model does not support), one line
   * each, unless the program set `globalThis.AI_SDK_LOG_WARNINGS` itself. Default: Node process warnings.
   */
  warn?: (message: string) => void;
}

/** A finished call as observers see it. */
export interface ObservedCall {
  role: string;
  target: ModelTarget;
  startedAt: number;
  endedAt: number;
  cached: boolean;
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those read from (and written to) the provider's prompt cache. */
  cachedInputTokens: number;
  cacheWriteInputTokens: number;
  finishReason?: string;
  /** HTTP requests the call made on its target, retries included (absent for a cache hit): a call is one span, its retries are not. */
  attempts?: number;
  error?: { kind: string; message: string };
  stage?: string;
  round?: number;
  request: ModelRequest;
  reply?: string;
  parseError?: string;
}
