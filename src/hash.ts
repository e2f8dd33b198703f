import { createHash } from "node:crypto";

/** JSON with object keys sorted, so equal values always serialise alike (cache keys, fingerprints). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) sorted[key] = (v as Record<string, unknown>)[key];
      return sorted;
    }
    return v;
  });
}

/** Hex SHA-256 of a string. */
export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
