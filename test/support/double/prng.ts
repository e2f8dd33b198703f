import { createHash } from "node:crypto";

/** A small seeded PRNG (mulberry32): the double never calls Math.random. */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  /** True with probability `rate` (0 never draws true, 1 always does). */
  chance(rate: number): boolean;
}

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    pick<T>(items: readonly T[]): T {
      const item = items[int(items.length)];
      if (item === undefined) throw new Error("pick from an empty list");
      return item;
    },
    chance: (rate) => (rate <= 0 ? false : rate >= 1 ? true : next() < rate),
  };
}

/** Hex SHA-256 of the parts, joined unambiguously. */
export function hashOf(...parts: (string | number)[]): string {
  return createHash("sha256").update(parts.map(String).join("\u0000")).digest("hex");
}

/** A PRNG keyed by a hash of the parts: the same parts always give the same stream. */
export function rngFor(...parts: (string | number)[]): Rng {
  return mulberry32(Number.parseInt(hashOf(...parts).slice(0, 8), 16));
}
