import { normalize } from "../adversarial/grounding.js";
import type { DriftToken } from "../contracts/audit.js";
import type { ChallengeInput } from "./challenge.js";

/**
 * Revision drift (docs/run.md, "Revision drift"; ADR-015 §7; ADR-008 §5): facts in a revision that
 * nothing the executor was given supports — numbers, dates, URLs and capitalised names that occur
 * in none of the prompt, the draft, the constraints and the policies. A revision may remove or
 * hedge a claim; it must not swap in a new figure, date, source or name. The gate reports it in
 * `audit_meta.revision_drift`, and `dissent eval gate` measures it, with this one function.
 */

const URL_RE = /\b(?:https?:\/\/|www\.)[^\s<>()"'`\]]+/giu;
const MONTH = "(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";
const DATE_RE = new RegExp(
  [
    "\\b\\d{4}-\\d{1,2}-\\d{1,2}\\b", // 2024-03-01
    "\\b\\d{1,2}[/.]\\d{1,2}[/.]\\d{2,4}\\b", // 1/3/2024, 01.03.24
    `\\b${MONTH}\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?,?\\s+\\d{4}\\b`, // March 3, 2024
    `\\b\\d{1,2}(?:st|nd|rd|th)?\\s+${MONTH}\\.?,?\\s+\\d{4}\\b`, // 3 March 2024
    `\\b${MONTH}\\.?\\s+\\d{4}\\b`, // March 2024
  ].join("|"),
  "giu",
);
/** A list marker at a line's start ("1. ", "2) ") is numbering, not a figure. */
const LIST_NUMBER = /^([ \t]*)\d{1,3}[.)](?=[ \t])/gmu;
/** A figure: digits, with thousands separators or a decimal part; not part of a word (v2, H2O). */
const NUMBER_RE = /(?<![\p{L}\d.,])\d+(?:[.,]\d+)*(?![\p{L}\d])/gu;
/** A run of capitalised words (or an acronym); single letters ("I", "A") are not names. */
const NAME_RE = /\p{Lu}[\p{L}\p{N}'’&-]*(?:[ \t]+\p{Lu}[\p{L}\p{N}'’&-]*)*/gu;
/** What may stand just before the first word of a sentence (the word's capital is grammar, not a name). */
const SENTENCE_START = /(?:^|[.!?:;]["'”’)\]]*\s+|\n[ \t]*(?:[-*+•>#]+[ \t]*|\d{1,3}[.)][ \t]*)?|^[ \t]*(?:[-*+•>#]+[ \t]*|\d{1,3}[.)][ \t]*)|["“([]\s*)$/u;

/**
 * Every match of a global regex, read with `exec` from the start: what `matchAll` gives, without the
 * regex copy and iterator it makes per call (the drift check runs on every revision).
 */
function matchesOf(text: string, re: RegExp): RegExpExecArray[] {
  const found: RegExpExecArray[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    found.push(m);
    if (m[0] === "") re.lastIndex++; // never loops on an empty match (none of these patterns has one)
  }
  re.lastIndex = 0;
  return found;
}

/** Every date has four digits in a row or a digit, `/` or `.`, digit: a text with neither holds none (the date scan is the costly one). */
const MAY_HOLD_DATE = /\d{4}|\d[/.]\d/;

/**
 * The matches of a global regex, and the text with them blanked out (keeping offsets, so a date's
 * digits are not also read as numbers), from one scan rather than a scan and a replace.
 */
function scan(text: string, re: RegExp): { found: RegExpExecArray[]; rest: string } {
  const found = matchesOf(text, re);
  if (found.length === 0) return { found, rest: text };
  let rest = "";
  let at = 0;
  for (const m of found) {
    rest += text.slice(at, m.index) + " ".repeat(m[0].length);
    at = m.index + m[0].length;
  }
  return { found, rest: rest + text.slice(at) };
}

const numberKey = (n: string) => (/^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(n) ? n.replace(/,/g, "") : n);
const dateKey = (d: string) =>
  normalize(d)
    .replace(/(\d)(?:st|nd|rd|th)\b/g, "$1")
    .replace(/[.,]/g, "")
    .replace(/\s+/g, " ");
const urlKey = (u: string) =>
  normalize(u)
    .replace(/[.,;:!?]+$/, "")
    .replace(/^https?:\/\//, "")
    .replace(/\/$/, "");

/** The facts of one text, each as the key it is compared by. */
interface Facts {
  urls: Map<string, string>;
  dates: Map<string, string>;
  numbers: Map<string, string>;
  names: Map<string, string>;
}

/** No facts of a kind: one shared empty map, read only (most texts have no URLs and no dates; a Map is ~150 bytes). */
const NO_FACTS: Map<string, string> = new Map();

/** The map to add a fact of a kind to: a fresh one the first time, never the shared empty one. */
const adding = (m: Map<string, string>) => (m === NO_FACTS ? new Map<string, string>() : m);

function factsOf(text: string): Facts {
  let urls = NO_FACTS;
  let dates = NO_FACTS;
  let numbers = NO_FACTS;
  let names = NO_FACTS;
  const url = scan(text, URL_RE);
  for (const m of url.found) (urls = adding(urls)).set(urlKey(m[0]), m[0].replace(/[.,;:!?]+$/, ""));
  const date = MAY_HOLD_DATE.test(url.rest) ? scan(url.rest, DATE_RE) : { found: [], rest: url.rest };
  for (const m of date.found) (dates = adding(dates)).set(dateKey(m[0]), m[0]);
  const rest = date.rest.replace(LIST_NUMBER, (m, indent: string) => indent + " ".repeat(m.length - indent.length));
  for (const m of matchesOf(rest, NUMBER_RE)) (numbers = adding(numbers)).set(numberKey(m[0]), m[0]);
  for (const m of matchesOf(rest, NAME_RE)) {
    let words = m[0].split(/[ \t]+/);
    // The capital of a sentence's first word is grammar: drop that word, keep any name after it.
    if (SENTENCE_START.test(rest.slice(Math.max(0, (m.index ?? 0) - 12), m.index))) words = words.slice(1);
    const name = words.join(" ").replace(/['’-]+$/u, "");
    if (name.replace(/[^\p{L}]/gu, "").length < 2) continue;
    (names = adding(names)).set(normalize(name), name);
  }
  return { urls, dates, numbers, names };
}

const WORD_CHAR = /[\p{L}\p{N}]/u;
const isWordChar = (c: string | undefined) => c !== undefined && WORD_CHAR.test(c);

/**
 * "Does the (normalised) source mention this word or phrase as a whole word?", indexed once per
 * source: a plain word is a set lookup, a phrase one native scan — so a revision full of names
 * against a long conversation costs milliseconds, not one regex pass over the source per name.
 */
function wordFinder(source: string): (word: string) => boolean {
  const words = new Set(source.match(/[\p{L}\p{N}]+/gu) ?? []);
  return (word) => {
    if (/^[\p{L}\p{N}]+$/u.test(word)) return words.has(word);
    for (let at = source.indexOf(word); at !== -1; at = source.indexOf(word, at + 1)) {
      if (!isWordChar(source[at - 1]) && !isWordChar(source[at + word.length])) return true;
    }
    return false;
  };
}

/**
 * The drifted tokens of a revision, in the order of kinds (URLs, dates, numbers, names) and then of
 * first appearance. `given` is everything the executor was given: prompt, draft, constraints, policies.
 */
export function revisionDrift(revision: string, given: readonly string[]): DriftToken[] {
  const rev = factsOf(revision);
  // A revision with no facts drifts from nothing: the sources need not be read.
  if (rev.urls.size + rev.dates.size + rev.numbers.size + rev.names.size === 0) return [];
  const source = given.join("\n");
  const src = factsOf(source);
  // The normalised source and its word index are built only when a fact is not among the source's own.
  let normalized: string | undefined;
  const normSource = () => (normalized ??= normalize(source));
  let finder: ((word: string) => boolean) | undefined;
  const hasWord = (word: string) => (finder ??= wordFinder(normSource()))(word);
  const out: DriftToken[] = [];
  for (const [key, text] of rev.urls) if (!src.urls.has(key) && !normSource().includes(key)) out.push({ kind: "url", text });
  for (const [key, text] of rev.dates) if (!src.dates.has(key) && !normSource().includes(normalize(text))) out.push({ kind: "date", text });
  for (const [key, text] of rev.numbers) if (!src.numbers.has(key)) out.push({ kind: "number", text });
  for (const [key, text] of rev.names) {
    if (src.names.has(key) || hasWord(key)) continue;
    // A run of capitalised words is new only if one of its words is: "Safe Food" over "safe food" is not.
    if (key.split(" ").every((w) => hasWord(w))) continue;
    out.push({ kind: "name", text });
  }
  return out;
}

/** The drift of a gate revision: against everything the executor was given for the draft it revised. */
export function driftOfRevision(input: ChallengeInput, revision: string): DriftToken[] {
  return revisionDrift(revision, [input.prompt, input.draft, ...(input.constraints ?? []), ...(input.policies ?? [])]);
}

/** The one warning line for a drifted revision (never the whole list when it is long: the line stays readable). */
export function driftWarning(drift: readonly DriftToken[]): string {
  const shown = drift.slice(0, 6).map((d) => d.text.replace(/\s+/g, " "));
  const more = drift.length > shown.length ? ` and ${drift.length - shown.length} more` : "";
  return `the revision added facts found in none of the prompt, draft, constraints and policies — check them before use: ${shown.join(", ")}${more} (audit_meta.revision_drift; docs/run.md)`;
}
