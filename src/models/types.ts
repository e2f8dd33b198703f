import type { LanguageModel } from "ai";
import type { NewEvent } from "../contracts/events.js";
import type { ReplyCache } from "./cache.js";

/** One concrete model a role may be sent to. */
export interface ModelTarget {
  /** Provider name as configured (shown in call records). */
  provider: string;
  model: string;
  route: "primary" | "secondary";
  /** Provider type and base URL: part of the cache key, so two endpoints never share replies. */
  endpoint: string;
  /** How structured replies are requested: OpenAI `response_format` json_schema / json_object, or by prompt only. */
  structured: "json_schema" | "json_object" | "prompt";
  /** The environment variable holding this provider's key, named in auth errors. */
  keyHint?: string;
  /** What to tell the user when the endpoint does not answer (e.g. how to start Ollama). */
  unreachableHint?: string;
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
}

/** A hard ceiling on network model calls, shared by every call of one issue. */
export interface CallBudget {
  /** Calls still allowed. */
  remaining(): number;
  /** Takes one call; throws BudgetExceeded when none is left. */
  take(): void;
}

/** Everything a model call needs besides the request: the one door's configuration. */
export interface CallContext {
  router: Router;
  cache?: ReplyCache;
  /** `use` reads and writes the cache; `bypass` (--no-cache) ignores it; `replay` never touches the network. */
  cacheMode: "use" | "bypass" | "replay";
  seed: number;
  timeoutMs: number;
  /** Transport retries per call (CONTRACT §2: at most 2). */
  maxRetries: number;
  /** First backoff delay; doubles per retry unless Retry-After says otherwise. */
  backoffMs: number;
  signal?: AbortSignal;
  budget?: CallBudget;
  /** Sink for ModelCall events. */
  emit?: (event: NewEvent) => void;
  issueId?: string | null;
  runId?: string;
  logContent?: boolean;
  /** Values (API keys) that must never appear in an error message. */
  secrets?: readonly string[];
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}
