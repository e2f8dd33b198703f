import { describe, expect, it } from "vitest";
import { draws, erfc, mcnemar, mulberry32, pairedDifference, quantile, ratio } from "../../src/eval/stats.js";

describe("bootstrap ratio", () => {
  it("gives the point estimate as a ratio of sums, and an interval that contains it", () => {
    // 10 items, 7 right: accuracy 0.7.
    const num = [1, 1, 1, 0, 1, 1, 0, 1, 0, 1];
    const den = num.map(() => 1);
    const est = ratio(num, den, draws(num.length));
    expect(est.value).toBe(0.7);
    expect(est.num).toBe(7);
    expect(est.den).toBe(10);
    const [lo, hi] = est.ci ?? [Number.NaN, Number.NaN];
    expect(lo).toBeLessThanOrEqual(0.7);
    expect(hi).toBeGreaterThanOrEqual(0.7);
    expect(lo).toBeGreaterThanOrEqual(0);
    expect(hi).toBeLessThanOrEqual(1);
    // With 10 items the interval is wide: about ±0.3.
    expect(hi - lo).toBeGreaterThan(0.4);
  });

  it("is deterministic for a seed, and differs for another", () => {
    const num = [3, 0, 2, 1, 4, 0, 1];
    const den = [4, 2, 2, 3, 5, 1, 1];
    const a = ratio(num, den, draws(num.length, { resamples: 2000, seed: 7, confidence: 0.95 }));
    const b = ratio(num, den, draws(num.length, { resamples: 2000, seed: 7, confidence: 0.95 }));
    const c = ratio(num, den, draws(num.length, { resamples: 2000, seed: 8, confidence: 0.95 }));
    expect(a).toEqual(b);
    expect(c.value).toBe(a.value);
    expect(c.ci).not.toEqual(a.ci);
  });

  it("collapses to the point when every item agrees, and is null when nothing was measured", () => {
    expect(ratio([1, 1, 1], [1, 1, 1], draws(3)).ci).toEqual([1, 1]);
    expect(ratio([0, 0], [1, 1], draws(2)).ci).toEqual([0, 0]);
    const empty = ratio([0, 0], [0, 0], draws(2));
    expect(empty).toEqual({ value: null, ci: null, num: 0, den: 0 });
  });

  it("computes each resample as a ratio of sums (hand-checked on one draw)", () => {
    // One resample that picks items 0, 0, 2: (1 + 1 + 0) / (2 + 2 + 3) = 2/7.
    const d = { n: 3, resamples: 1, idx: new Uint32Array([0, 0, 2]) };
    const est = ratio([1, 5, 0], [2, 5, 3], d);
    expect(est.value).toBe(0.6); // 6 / 10
    expect(est.ci?.[0]).toBeCloseTo(2 / 7, 9);
    expect(est.ci?.[1]).toBeCloseTo(2 / 7, 9);
  });

  it("draws with mulberry32: a fixed stream for a seed", () => {
    const r = mulberry32(7);
    const first = [r(), r(), r()];
    const again = mulberry32(7);
    expect([again(), again(), again()]).toEqual(first);
    for (const x of first) expect(x).toBeGreaterThanOrEqual(0);
    for (const x of first) expect(x).toBeLessThan(1);
  });

  it("takes percentiles by linear interpolation (type 7)", () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([0, 10], 0.025)).toBeCloseTo(0.25, 12);
    expect(quantile([5], 0.975)).toBe(5);
  });

  it("pairs two runs on the same resampled items", () => {
    const a = { num: [1, 0, 1, 0], den: [1, 1, 1, 1] };
    const b = { num: [1, 1, 1, 0], den: [1, 1, 1, 1] };
    const d = pairedDifference(a, b, draws(4));
    expect(d.a).toBe(0.5);
    expect(d.b).toBe(0.75);
    expect(d.diff).toBe(0.25);
    const [lo, hi] = d.ci ?? [Number.NaN, Number.NaN];
    // B is never worse than A on any item: no resample can make the difference negative.
    expect(lo).toBeGreaterThanOrEqual(0);
    expect(hi).toBeGreaterThanOrEqual(0.25);
    expect(pairedDifference(a, a, draws(4)).ci).toEqual([0, 0]);
  });
});

describe("McNemar", () => {
  it("is exact (binomial) below 25 discordant pairs: b = 3, c = 12 gives p = 0.03515625", () => {
    // 2 · (C(15,0) + C(15,1) + C(15,2) + C(15,3)) / 2^15 = 2 · 576 / 32768
    const m = mcnemar(3, 12);
    expect(m.method).toBe("exact");
    expect(m.p).toBeCloseTo(0.03515625, 9);
    expect(mcnemar(12, 3).p).toBeCloseTo(0.03515625, 9);
    expect(mcnemar(0, 5).p).toBeCloseTo(0.0625, 9);
    expect(mcnemar(4, 4).p).toBe(1);
    expect(mcnemar(0, 0)).toMatchObject({ p: 1, method: "exact" });
  });

  it("uses chi-square with continuity correction from 25 on: b = 10, c = 30 gives 9.025 and p ≈ 0.00266", () => {
    const m = mcnemar(10, 30);
    expect(m.method).toBe("chi2");
    expect(m.statistic).toBeCloseTo(9.025, 9);
    expect(m.p).toBeCloseTo(0.002663119, 6);
    expect(mcnemar(5, 20).p).toBeCloseTo(0.00511026, 6);
  });

  it("computes erfc to about 1e-7", () => {
    expect(erfc(0)).toBeCloseTo(1, 7);
    expect(erfc(1)).toBeCloseTo(0.157299207, 7);
    expect(erfc(-1)).toBeCloseTo(1.842700793, 7);
  });
});
