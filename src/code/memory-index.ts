import { CODE_INDEX_BYTES, CODE_INDEX_VALUE_BYTES, type CodeIndexCache } from "../store/port.js";

/** A code index in memory (the library without a store, tests): bounded by bytes, oldest-used out first. */
export function memoryCodeIndex(maxBytes = CODE_INDEX_BYTES): CodeIndexCache {
  const entries = new Map<string, string>();
  let bytes = 0;
  const stats = { hits: 0, misses: 0, puts: 0 };
  return {
    stats,
    async getMany(keys) {
      const out = new Map<string, string>();
      for (const key of new Set(keys)) {
        const value = entries.get(key);
        if (value === undefined) {
          stats.misses++;
          continue;
        }
        stats.hits++;
        entries.delete(key); // re-inserted last: the Map's order is the order of use
        entries.set(key, value);
        out.set(key, value);
      }
      return out;
    },
    async putMany(list) {
      for (const { key, value } of list) {
        const size = Buffer.byteLength(value);
        if (size > CODE_INDEX_VALUE_BYTES) continue;
        const old = entries.get(key);
        if (old !== undefined) bytes -= Buffer.byteLength(old);
        entries.delete(key);
        entries.set(key, value);
        bytes += size;
        stats.puts++;
      }
      for (const [key, value] of entries) {
        if (bytes <= maxBytes) break;
        entries.delete(key);
        bytes -= Buffer.byteLength(value);
      }
    },
    async size() {
      return { entries: entries.size, bytes };
    },
  };
}
