/** A reply exactly as the provider sent it, with its usage — what the cache stores. */
export interface CachedReply {
  text: string;
  input_tokens: number;
  output_tokens: number;
  finish_reason: string;
}

/** Content-addressed reply cache port; the store provides the SQLite adapter. */
export interface ReplyCache {
  get(key: string): CachedReply | undefined;
  put(key: string, reply: CachedReply, meta: { provider: string; model: string }): void;
}

/** An in-memory cache, for the library and tests. */
export function memoryCache(): ReplyCache & { size(): number } {
  const map = new Map<string, CachedReply>();
  return {
    get: (key) => map.get(key),
    put: (key, reply) => void map.set(key, reply),
    size: () => map.size,
  };
}
