import { stemmer } from "stemmer";
import { sha256 } from "../hash.js";

/**
 * Words that carry no distinction between two concerns. Deliberately short: negations
 * (not, no, never, without, …), quantifiers and order words (before, after, only, all)
 * are NOT here, because they are what tells a concern from its opposite.
 */
const STOP_WORDS = new Set(
  (
    "a an the this that these those it its it's of for to in on at by from into onto with as " +
    "is are was were be been being am do does did doing has have had having " +
    "and or but if because about than also then there here which who whom whose what where when why how " +
    "i we you he she they me us him her them my our your his their itself themselves yourself ourselves " +
    "should would could can may might must shall will " +
    "very really just so such some any"
  ).split(" "),
);

const CONTRACTIONS: [RegExp, string][] = [
  [/\bcan['’]t\b/g, "can not"],
  [/\bwon['’]t\b/g, "will not"],
  [/\bshan['’]t\b/g, "shall not"],
  [/\bcannot\b/g, "can not"],
  [/n['’]t\b/g, " not"],
];

/** Lower-cased, accent-free words with contractions expanded ("doesn't" → "does not"). */
export function words(text: string): string[] {
  let s = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase();
  s = s.replace(/['’]s\b/g, ""); // possessive: "the path's test" = "the path test"
  for (const [re, to] of CONTRACTIONS) s = s.replace(re, to);
  // Any script's letters and digits are words: a Cyrillic or Chinese concern must not hash to nothing.
  return s.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

/** One word's search/fingerprint term: its stem, or null for a stop word. */
export function termOf(word: string): string | null {
  return STOP_WORDS.has(word) ? null : stem(word);
}

/**
 * The Porter stemmer is for English words: other scripts keep their words whole, and so do words
 * with no vowel ("https", "ssl": stemming would merge HTTPS into HTTP) and words with digits ("v2").
 */
const stem = (word: string) => (/^[a-z]+$/.test(word) && /[aeiouy]/.test(word) ? stemmer(word) : word);

/** The normalised, stemmed, order-free word set a fingerprint is made of (exported for tests and debugging). */
export function fingerprintTokens(text: string): string[] {
  const all = words(text);
  const kept = all.filter((w) => !STOP_WORDS.has(w));
  return [...new Set((kept.length ? kept : all).map(stem))].sort();
}

/**
 * A concern's identity (docs/library.md): deterministic, over the `concern` text alone — `category`
 * is free-form across critics and is not part of it — and insensitive to case, punctuation,
 * whitespace, word order, inflection and stop words. "Missing test for the retry path." and
 * "missing tests for retry path" fingerprint alike; a concern and its negation do not; nor do
 * HTTP and HTTPS, or v1 and v2.
 */
export function fingerprint(concern: { concern: string; category?: string | undefined }): string {
  return sha256(`concern|${fingerprintTokens(concern.concern).join(" ")}`).slice(0, 16);
}
