import { normalize, type GroundingText } from "../adversarial/grounding.js";

/**
 * Grounding loss (ADR-015 §4): a concern dropped as ungrounded although its evidence *nearly* is in
 * the draft — the auditor pointed at real text and the grounding rule threw the concern away.
 * "Nearly": after the same normalisation grounding applies, some passage of the draft is within an
 * edit distance of 20 % of the excerpt's length (at least 4 in 5 characters agree: a slip of the
 * pen, a dropped word, an unnormalised symbol — a paraphrase changes far more). Evidence with `...`
 * is judged part by part; each part must be near.
 */
export const NEAR_SIMILARITY = 0.8;

/** Excerpts longer than this are judged on their first this-many characters (the cost is length × draft). */
const MAX_EXCERPT = 400;

/**
 * The least edit distance between `needle` and any substring of `hay` (Sellers' algorithm: the
 * substring may start and end anywhere), in O(|needle|·|hay|) time and O(|needle|) memory.
 */
export function substringDistance(needle: string, hay: string): number {
  const m = needle.length;
  if (m === 0) return 0;
  let prev = new Uint32Array(m + 1);
  let cur = new Uint32Array(m + 1);
  for (let i = 0; i <= m; i++) prev[i] = i;
  let best = m;
  for (let j = 1; j <= hay.length; j++) {
    cur[0] = 0; // a match may start at any position of the hay
    const h = hay.charCodeAt(j - 1);
    for (let i = 1; i <= m; i++) {
      const sub = (prev[i - 1] as number) + (needle.charCodeAt(i - 1) === h ? 0 : 1);
      const del = (prev[i] as number) + 1;
      const ins = (cur[i - 1] as number) + 1;
      cur[i] = sub < del ? (sub < ins ? sub : ins) : del < ins ? del : ins;
    }
    if ((cur[m] as number) < best) best = cur[m] as number;
    [prev, cur] = [cur, prev];
  }
  return best;
}

/** How close an excerpt comes to the text: 1 − distance / length, the worst of its `...` parts; 0 for an empty excerpt. */
export function nearness(text: GroundingText, evidence: string): number {
  const parts = normalize(evidence)
    .replace(/^(?:["'`]|\.\.\.|\s)+|(?:["'`]|\.\.\.|\s)+$/g, "")
    .split("...")
    .map((p) => p.trim().slice(0, MAX_EXCERPT))
    .filter((p) => p !== "");
  if (parts.length === 0) return 0;
  let worst = 1;
  for (const part of parts) {
    const sim = 1 - substringDistance(part, text.normalized) / part.length;
    if (sim < worst) worst = sim;
  }
  return Math.max(0, Math.round(worst * 1000) / 1000);
}
