/**
 * The statistics of `dissent eval` (ADR-015): every rate is a ratio of per-item sums, with a 95 %
 * percentile bootstrap interval over items (seeded, so a report is reproducible to the digit), and
 * McNemar's test for two models' verdicts on the same items.
 */

/** How intervals are drawn: 2,000 resamples of the items, seed 7, the 2.5th and 97.5th percentiles. */
export interface BootstrapSpec {
  resamples: number;
  seed: number;
  confidence: number;
}
export const DEFAULT_BOOTSTRAP: BootstrapSpec = { resamples: 2000, seed: 7, confidence: 0.95 };

/** A rate: its value, its interval (null when no resample defines it), and the sums it is the ratio of. */
export interface Estimate {
  value: number | null;
  ci: [number, number] | null;
  num: number;
  den: number;
}

/** mulberry32: a small, fast, well-mixed 32-bit generator; the same seed gives the same stream on every platform. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Resampled item indices: `resamples` rows of `n` indices drawn with replacement, flat (row r is [r·n, r·n+n)). */
export interface Draws {
  n: number;
  resamples: number;
  idx: Uint32Array;
}

/** Draws the resamples once; every rate of a report is computed on the same draws. */
export function draws(n: number, spec: BootstrapSpec = DEFAULT_BOOTSTRAP): Draws {
  const rand = mulberry32(spec.seed);
  const idx = new Uint32Array(n * spec.resamples);
  for (let i = 0; i < idx.length; i++) idx[i] = Math.floor(rand() * n);
  return { n, resamples: spec.resamples, idx };
}

/** The q-quantile of sorted values, interpolated linearly between order statistics (R's type 7, numpy's default). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const a = sorted[lo] as number;
  const b = sorted[Math.min(lo + 1, sorted.length - 1)] as number;
  return a + (h - lo) * (b - a);
}

/** Rounds away floating-point dust (0.30000000000000004), so reports print and compare cleanly. */
export const tidy = (x: number) => Math.round(x * 1e9) / 1e9;

/** The percentile interval of resampled statistics; undefined ones (a resample with a zero denominator) are left out. */
function percentile(stats: number[], confidence: number): [number, number] | null {
  const defined = stats.filter((s) => Number.isFinite(s)).sort((a, b) => a - b);
  if (defined.length === 0) return null;
  const tail = (1 - confidence) / 2;
  return [tidy(quantile(defined, tail)), tidy(quantile(defined, 1 - tail))];
}

const sum = (xs: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i] as number;
  return s;
};

/**
 * A ratio of per-item sums (recall = defects found / defects planted, over items) with its bootstrap
 * interval: each resample takes items with replacement and recomputes the ratio. Items whose
 * denominator is 0 still count in a resample (they keep the item mix), they just add nothing.
 */
export function ratio(num: readonly number[], den: readonly number[], d: Draws, confidence = DEFAULT_BOOTSTRAP.confidence): Estimate {
  const N = sum(num);
  const D = sum(den);
  const value = D > 0 ? tidy(N / D) : null;
  if (value === null) return { value, ci: null, num: N, den: D };
  const stats: number[] = new Array(d.resamples);
  for (let r = 0; r < d.resamples; r++) {
    let n = 0;
    let m = 0;
    const base = r * d.n;
    for (let k = 0; k < d.n; k++) {
      const i = d.idx[base + k] as number;
      n += num[i] as number;
      m += den[i] as number;
    }
    stats[r] = m > 0 ? n / m : Number.NaN;
  }
  return { value, ci: percentile(stats, confidence), num: N, den: D };
}

/** The difference of two rates on paired items (B − A), with its paired bootstrap interval: both sides are resampled with the same items. */
export interface Difference {
  a: number | null;
  b: number | null;
  diff: number | null;
  ci: [number, number] | null;
}

export function pairedDifference(
  a: { num: readonly number[]; den: readonly number[] },
  b: { num: readonly number[]; den: readonly number[] },
  d: Draws,
  confidence = DEFAULT_BOOTSTRAP.confidence,
): Difference {
  const ra = sum(a.den) > 0 ? sum(a.num) / sum(a.den) : null;
  const rb = sum(b.den) > 0 ? sum(b.num) / sum(b.den) : null;
  const diff = ra === null || rb === null ? null : tidy(rb - ra);
  const out = { a: ra === null ? null : tidy(ra), b: rb === null ? null : tidy(rb), diff };
  if (diff === null) return { ...out, ci: null };
  const stats: number[] = new Array(d.resamples);
  for (let r = 0; r < d.resamples; r++) {
    let na = 0;
    let da = 0;
    let nb = 0;
    let db = 0;
    const base = r * d.n;
    for (let k = 0; k < d.n; k++) {
      const i = d.idx[base + k] as number;
      na += a.num[i] as number;
      da += a.den[i] as number;
      nb += b.num[i] as number;
      db += b.den[i] as number;
    }
    stats[r] = da > 0 && db > 0 ? nb / db - na / da : Number.NaN;
  }
  return { ...out, ci: percentile(stats, confidence) };
}

/** Below this many discordant pairs McNemar's test is exact (binomial); from it on, chi-square with continuity correction. */
export const MCNEMAR_EXACT_BELOW = 25;

/** McNemar's test on paired right/wrong outcomes: `b` items only A got right, `c` items only B got right. */
export interface McNemar {
  b: number;
  c: number;
  method: "exact" | "chi2";
  statistic: number | null;
  p: number;
}

/** log(n choose k), by summing logs: exact enough for any set size this tool sees. */
function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log(n - k + i) - Math.log(i);
  return s;
}

/** The complementary error function (W. J. Cody's rational approximations via Numerical Recipes' erfcc; |error| < 1.2e-7). */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/**
 * McNemar's test, two-sided. With fewer than 25 discordant pairs: the exact binomial test,
 * p = min(1, 2·P(X ≤ min(b, c))) for X ~ Bin(b + c, ½). Otherwise the chi-square statistic with
 * continuity correction, max(0, |b − c| − 1)² / (b + c), on one degree of freedom.
 */
export function mcnemar(b: number, c: number): McNemar {
  const n = b + c;
  if (n === 0) return { b, c, method: "exact", statistic: null, p: 1 };
  if (n < MCNEMAR_EXACT_BELOW) {
    const k = Math.min(b, c);
    let tail = 0;
    for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) - n * Math.LN2);
    return { b, c, method: "exact", statistic: null, p: tidy(Math.min(1, 2 * tail)) };
  }
  const chi2 = Math.max(0, Math.abs(b - c) - 1) ** 2 / n;
  // P(χ²₁ > x) = erfc(√(x/2)).
  return { b, c, method: "chi2", statistic: tidy(chi2), p: tidy(Math.min(1, erfc(Math.sqrt(chi2 / 2)))) };
}
