import type { CachedReply, ReplyCache } from "../models/cache.js";
import type { Db } from "./db.js";

/** The reply cache in the SQLite store (CONTRACT §3 "Determinism"). */
export function sqliteCache(db: Db): ReplyCache {
  const get = db.prepare<[string], { reply: string }>("SELECT reply FROM cache WHERE key = ?");
  const put = db.prepare(
    "INSERT OR REPLACE INTO cache (key, provider, model, reply, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  return {
    get(key) {
      const row = get.get(key);
      return row ? (JSON.parse(row.reply) as CachedReply) : undefined;
    },
    put(key, reply, meta) {
      put.run(key, meta.provider, meta.model, JSON.stringify(reply), new Date().toISOString());
    },
  };
}
