/** A reply exactly as the provider sent it (secrets redacted), with its usage — what the cache stores. */
export interface CachedReply {
  text: string;
  input_tokens: number;
  output_tokens: number;
  /** Of `input_tokens`, those the provider's prompt cache served and stored (docs/serve.md "Cost"). */
  cached_input_tokens?: number;
  cache_write_input_tokens?: number;
  finish_reason: string;
}

/** Content-addressed reply cache port; the store provides the SQLite and PostgreSQL adapters. */
export interface ReplyCache {
  get(key: string): Promise<CachedReply | undefined>;
  /** Stores (or replaces) the reply for `key`. */
  put(key: string, reply: CachedReply, meta: { provider: string; model: string }): Promise<void>;
}

/** An in-memory cache, for the library and tests. */
export function memoryCache(): ReplyCache & { size(): number } {
  const map = new Map<string, CachedReply>();
  return {
    get: async (key) => map.get(key),
    put: async (key, reply) => void map.set(key, reply),
    size: () => map.size,
  };
}
