import { normalize } from "../adversarial/grounding.js";
import type { DriftToken } from "../contracts/audit.js";
import type { ChallengeInput } from "./challenge.js";
import { apiNames, blank, codeRegions, PROSE_KEYWORDS, type ApiName } from "./drift-code.js";
import { FigureIndex, figuresOf, isDerived, Operands, sameQuantity, type Figure } from "./drift-quantities.js";

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
/** Day and month without a year (`3 June`, `5–6 June`, `June 3`): a date, so its day is no figure. */
const DAY_MONTH_RE = new RegExp(
  [
    `\\b\\d{1,2}(?:st|nd|rd|th)?(?:\\s?[–-]\\s?\\d{1,2}(?:st|nd|rd|th)?)?\\s+${MONTH}\\b\\.?`,
    `\\b${MONTH}\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?(?:\\s?[–-]\\s?\\d{1,2}(?:st|nd|rd|th)?)?\\b`,
  ].join("|"),
  "giu",
);
/** A list marker at a line's start ("1. ", "2) ", "## 3. "): numbering, not a figure. */
const LIST_NUMBER = /^([ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+)?)\d{1,3}[.)](?=[ \t])/gmu;
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

/** Every full date has four digits in a row or a digit, `/` or `.`, digit; a day and month has a month's name. */
const MAY_HOLD_DATE = /\d{4}|\d[/.]\d/;
const MAY_HOLD_DAY_MONTH = /jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec/i;

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
    rest += text.slice(at, m.index) + m[0].replace(/[^\n]/g, " ");
    at = m.index + m[0].length;
  }
  return { found, rest: rest + text.slice(at) };
}

const dateKey = (d: string) =>
  normalize(d)
    .replace(/(\d)(?:st|nd|rd|th)\b/g, "$1")
    .replace(/[.,]/g, "")
    .replace(/\s+/g, " ");
/** The keys of a day and month: one per day it names (`5–6 June`: `5 jun`, `6 jun`), whichever order it is written in. */
function dayMonthKeys(d: string): string[] {
  const month = /[a-z]{3}/.exec(normalize(d).replace(/\d(?:st|nd|rd|th)/g, ""))?.[0] ?? "";
  return (d.match(/\d{1,2}/g) ?? []).map((day) => `${Number(day)} ${month}`);
}
const urlKey = (u: string) =>
  normalize(u)
    .replace(/[.,;:!?]+$/, "")
    .replace(/^https?:\/\//, "")
    .replace(/\/$/, "");

/** The facts of one text, each as the key it is compared by. */
interface Facts {
  urls: Map<string, string>;
  dates: Map<string, string>;
  figures: Figure[];
  /** The numbers of its numbered lists and headings (`1.`, `## 2.`): what `step 2` may point at. */
  numbering: Set<number>;
  names: Map<string, string>;
  apis: ApiName[];
}

/** No facts of a kind: one shared empty map, read only (most texts have no URLs and no dates; a Map is ~150 bytes). */
const NO_FACTS: Map<string, string> = new Map();

/** The map to add a fact of a kind to: a fresh one the first time, never the shared empty one. */
const adding = (m: Map<string, string>) => (m === NO_FACTS ? new Map<string, string>() : m);

/** Which kinds of fact a reading needs: a source is read only for the kinds its revision holds. */
interface Need {
  figures: boolean;
  names: boolean;
  apis: boolean;
}
const ALL: Need = { figures: true, names: true, apis: true };

/** The cheap tests that say a text may hold a kind of fact at all; the costly scans run only then. */
const MAY_HOLD_URL = /:\/\/|www\./i;
const MAY_HOLD_FIGURE = /\d|[¼½¾⅓⅔⅛⅜⅝⅞]/;
const MAY_HOLD_NUMBER_WORD =
  /(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|dozen)\b/i;
const MAY_HOLD_NUMBERING = /^[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+)?\d{1,3}[.)][ \t]/m;

function factsOf(text: string, need: Need = ALL): Facts {
  let urls = NO_FACTS;
  let dates = NO_FACTS;
  let names = NO_FACTS;
  const url = MAY_HOLD_URL.test(text) ? scan(text, URL_RE) : { found: [], rest: text };
  for (const m of url.found) (urls = adding(urls)).set(urlKey(m[0]), m[0].replace(/[.,;:!?]+$/, ""));
  // Code is not prose: its API names are read apart, its numeric literals are figures, its strings and keywords are neither.
  const regions = codeRegions(url.rest);
  const apis = need.apis ? apiNames(url.rest, regions) : [];
  const codeFigures = regions.length && need.figures ? codeLiterals(url.rest, regions) : [];
  const prose = blank(url.rest, regions);
  const date = MAY_HOLD_DATE.test(prose) ? scan(prose, DATE_RE) : { found: [], rest: prose };
  for (const m of date.found) (dates = adding(dates)).set(dateKey(m[0]), m[0]);
  const dayMonth = MAY_HOLD_DAY_MONTH.test(date.rest) ? scan(date.rest, DAY_MONTH_RE) : { found: [], rest: date.rest };
  for (const m of dayMonth.found) for (const key of dayMonthKeys(m[0])) (dates = adding(dates)).set(key, m[0].trim());
  const numbering = new Set<number>();
  const rest = MAY_HOLD_NUMBERING.test(dayMonth.rest)
    ? dayMonth.rest.replace(LIST_NUMBER, (m, indent: string) => {
        numbering.add(Number(m.slice(indent.length, -1)));
        return indent + " ".repeat(m.length - indent.length);
      })
    : dayMonth.rest;
  const digits = MAY_HOLD_FIGURE.test(rest);
  const words = MAY_HOLD_NUMBER_WORD.test(rest);
  const figures = need.figures && (digits || words) ? figuresOf(rest, { digits, words }) : [];
  if (need.names)
    for (const m of matchesOf(rest, NAME_RE)) {
      let parts = m[0].split(/[ \t]+/);
      // The capital of a sentence's first word is grammar: drop that word, keep any name after it.
      if (SENTENCE_START.test(rest.slice(Math.max(0, (m.index ?? 0) - 12), m.index))) parts = parts.slice(1);
      // Keywords a text capitalises (None, True) are no names.
      parts = parts.filter((w) => !PROSE_KEYWORDS.has(w));
      const name = parts.join(" ").replace(/['’-]+$/u, "");
      if (name.replace(/[^\p{L}]/gu, "").length < 2) continue;
      (names = adding(names)).set(normalize(name), name);
    }
  return { urls, dates, figures: codeFigures.length ? [...figures, ...codeFigures] : figures, numbering, names, apis };
}

/** The numeric literals of code (its strings and comments left out): figures with no unit. */
function codeLiterals(text: string, regions: readonly [number, number][]): Figure[] {
  const out: Figure[] = [];
  for (const [s, e] of regions) {
    const code = text
      .slice(s, e)
      .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, (q) => " ".repeat(q.length))
      .replace(/(?:^|\s)(?:#|\/\/)[^\n]*/g, (c) => " ".repeat(c.length))
      .replace(/^[ \t]*(?:```|~~~)[^\n]*/, (f) => " ".repeat(f.length));
    for (const f of figuresOf(code, { digits: true, words: false })) out.push({ ...f, index: f.index + s, end: f.end + s, span: f.text, text: f.text });
  }
  return out.map(({ unit: _unit, ...f }) => f);
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

/** A sentence of a text: where it is, its normalised words, and its text as compared for "unchanged". */
interface Sentence {
  start: number;
  end: number;
  key: string;
  words: Set<string>;
}
/** At most this many sentences a side are paired (a revision is one answer; the pairing is quadratic). */
const MAX_SENTENCES = 400;

/** The sentences of a text: split at a line break, and at `.`, `!` or `?` before white space (never inside `1.05`). */
function sentencesOf(text: string): Sentence[] {
  const out: Sentence[] = [];
  let start = 0;
  const push = (end: number) => {
    const t = text.slice(start, end);
    if (/[\p{L}\p{N}]/u.test(t)) {
      const key = normalize(t);
      out.push({ start, end, key, words: new Set(key.match(/[\p{L}\p{N}]+/gu) ?? []) });
    }
    start = end;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\n") push(i + 1);
    else if ((c === "." || c === "!" || c === "?") && /\s/.test(text[i + 1] ?? " ")) push(i + 1);
  }
  push(text.length);
  return out;
}

/** How alike two sentences are: shared words over all (Dice). */
function likeness(a: Sentence, b: Sentence): number {
  let shared = 0;
  for (const w of a.words) if (b.words.has(w)) shared++;
  return (2 * shared) / Math.max(1, a.words.size + b.words.size);
}

/** Below this likeness a changed sentence of the revision is new, not a rewrite of one of the draft's. */
const PAIRED = 0.4;

/**
 * The revision's rewritten sentences, each with the draft sentence it rewrites: a revision sentence
 * that is not in the draft, paired with the most alike draft sentence that is not in the revision.
 */
function rewrites(revAll: readonly Sentence[], oldAll: readonly Sentence[]): [Sentence, Sentence][] {
  const rev = revAll.slice(0, MAX_SENTENCES);
  const old = oldAll.slice(0, MAX_SENTENCES);
  const revKeys = new Set(rev.map((s) => s.key));
  const oldKeys = new Set(old.map((s) => s.key));
  const gone = old.filter((s) => !revKeys.has(s.key));
  const pairs: [Sentence, Sentence][] = [];
  if (gone.length === 0) return pairs;
  for (const s of rev) {
    if (oldKeys.has(s.key)) continue;
    let best: Sentence | undefined;
    let score = PAIRED;
    for (const o of gone) {
      const l = likeness(s, o);
      if (l >= score) [best, score] = [o, l];
    }
    if (best) pairs.push([s, best]);
  }
  return pairs;
}

/** What a figure measures, for telling a replaced value: its dimension, or `bare`. */
const groupOf = (f: Figure) => f.unit?.dim ?? "bare";
const within = (f: Figure, s: Sentence) => f.index >= s.start && f.index < s.end;
/** The index of the last sentence starting at or before `index` (binary search; 0 when none does). */
function locate(sentences: readonly Sentence[], index: number): number {
  let lo = 0;
  let hi = sentences.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((sentences[mid] as Sentence).start <= index) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Where a drift check reads its facts from: the user's own words (prompt, constraints, policies) and the draft the revision rewrites. */
export interface DriftSources {
  /** The prompt, the constraints and the policies: what the user gave. */
  user: readonly string[];
  /** The draft the revision rewrites, when there is one: its figures count as given, its sentences are where a replacement is told. */
  draft?: string;
}

/**
 * The drifted tokens of a revision (docs/run.md "Revision drift"; docs/adr/ADR-036), in the order of
 * kinds (URLs, dates, numbers, names) and then of first appearance. `given` is everything the
 * executor was given: prompt, draft, constraints, policies (all read as the user's own here).
 */
export function revisionDrift(revision: string, given: readonly string[]): DriftToken[] {
  return driftAgainst(revision, { user: given });
}

/** The drifted tokens of a revision, against the user's words and the draft it rewrites. */
export function driftAgainst(revision: string, sources: DriftSources): DriftToken[] {
  const rev = factsOf(revision);
  // A revision with no facts drifts from nothing: the sources need not be read.
  if (rev.urls.size + rev.dates.size + rev.figures.length + rev.names.size + rev.apis.length === 0) return [];
  const userText = sources.user.join("\n");
  const source = sources.draft === undefined ? userText : `${userText}\n${sources.draft}`;
  // The sources are read only for the kinds of fact the revision holds (dates and URLs always: they blank digits).
  const need: Need = { figures: rev.figures.length > 0, names: rev.names.size > 0, apis: false };
  const user = factsOf(userText, need);
  const draft = sources.draft === undefined ? undefined : factsOf(sources.draft, need);
  const srcUrls = draft ? new Map([...user.urls, ...draft.urls]) : user.urls;
  const srcDates = draft ? new Map([...user.dates, ...draft.dates]) : user.dates;
  const srcNames = draft ? new Map([...user.names, ...draft.names]) : user.names;
  // The normalised source and its word index are built only when a fact is not among the source's own.
  let normalized: string | undefined;
  const normSource = () => (normalized ??= normalize(source));
  let finder: ((word: string) => boolean) | undefined;
  const hasWord = (word: string) => (finder ??= wordFinder(normSource()))(word);
  const out: DriftToken[] = [];
  for (const [key, text] of rev.urls) if (!srcUrls.has(key) && !normSource().includes(key)) out.push({ kind: "url", text });
  for (const [key, text] of rev.dates) if (!srcDates.has(key) && !normSource().includes(normalize(text))) out.push({ kind: "date", text });
  const reported = new Set<string>();
  for (const f of figureDrift(rev, user, draft, revision, sources.draft)) {
    if (reported.has(f)) continue;
    reported.add(f);
    out.push({ kind: "number", text: f });
  }
  for (const [key, text] of rev.names) {
    if (srcNames.has(key) || hasWord(key)) continue;
    // A run of capitalised words is new only if one of its words is: "Safe Food" over "safe food" is not.
    if (key.split(" ").every((w) => hasWord(w))) continue;
    out.push({ kind: "name", text });
  }
  // An API the code calls, imports or reaches through a dot is new when one of its names is.
  for (const api of rev.apis) if (api.names.some((n) => !hasWord(normalize(n)))) out.push({ kind: "name", text: api.text });
  return out;
}

/**
 * Could any figure of the revision replace one of the draft's: is there a kind (a dimension, or
 * bare) with a figure on each side that are not one quantity? A cheap, sound test before sentences
 * are paired — an unchanged answer, or one whose figures all stand as they were, skips the pairing.
 */
function mayReplace(revision: readonly Figure[], draft: readonly Figure[]): boolean {
  const kinds = (fs: readonly Figure[]) => {
    const m = new Map<string, Set<string>>();
    for (const f of fs) {
      const g = groupOf(f);
      const set = m.get(g) ?? new Set<string>();
      set.add(`${f.unit?.key ?? ""}|${f.value}`);
      m.set(g, set);
    }
    return m;
  };
  const now = kinds(revision);
  for (const [g, before] of kinds(draft)) {
    const after = now.get(g);
    if (!after) continue;
    if (after.size > 1 || before.size > 1) return true;
    if ([...after][0] !== [...before][0]) return true;
  }
  return false;
}

/** A figure that points at a numbered step of the text (`step 2`, `steps 1–3`): supported by the given text's numbering. */
const REFERENCE =
  /\b(?:steps?|sections?|items?|points?|stages?|parts?|phases?|chapters?|questions?|options?|rules?|no\.)\s*(?:\d{1,3}\s*(?:[–-]|to|and|or|,)\s*)?$/i;

/**
 * The revision's figures nothing given supports, as their drift tokens: a figure is supported by the
 * same quantity given (the same value, in no other unit), by a conversion of a given quantity, or by
 * plain arithmetic on given figures with its working beside it; and where it replaced another
 * figure of the same kind in a rewritten sentence, only by the user's own figures, a conversion or
 * arithmetic — never by the draft's figures elsewhere (`two days` → `4–5 days` beside `4–5 pounds`).
 */
function figureDrift(rev: Facts, user: Facts, draftFacts: Facts | undefined, revision: string, draft: string | undefined): string[] {
  const figures = rev.figures;
  if (figures.length === 0) return [];
  const draftFigures = draftFacts?.figures ?? [];
  const given = new FigureIndex(draftFigures.length ? [...user.figures, ...draftFigures] : user.figures);
  const numbering = draftFacts ? new Set([...user.numbering, ...draftFacts.numbering]) : user.numbering;
  const supported = new Set<Figure>();
  const direct = (f: Figure) =>
    given.has(f) || given.converts(f) || (numbering.has(f.value) && REFERENCE.test(revision.slice(Math.max(0, f.index - 24), f.index)));
  for (const f of figures) if (direct(f)) supported.add(f);
  const unsupported = figures.filter((f) => !supported.has(f));
  const tokenOf = (f: Figure) => (f.word || given.hasValue(f.value) ? f.span : f.text);
  // A replacement needs a draft figure and a revision figure of one kind that differ; with none, and every figure given, there is nothing to do.
  const vanished = draftFigures.length > 0 && mayReplace(figures, draftFigures);
  if (unsupported.length === 0 && !vanished) return [];
  // Arithmetic and replacements read the revision's sentences: each figure's, found once by binary search.
  const sentences = sentencesOf(revision);
  const sentenceOf = new Map(figures.map((f) => [f, locate(sentences, f.index)]));
  /** The supported figures of each sentence: what "beside it" may draw on (at most 64 a sentence). */
  const beside = new Map<number, Figure[]>();
  const support = (f: Figure) => {
    supported.add(f);
    const at = sentenceOf.get(f) ?? -1;
    const list = beside.get(at) ?? [];
    if (list.length < 64) list.push(f);
    beside.set(at, list);
  };
  for (const f of figures) if (supported.has(f)) support(f);
  let operands: Operands | undefined;
  const ops = () => {
    if (!operands) {
      operands = new Operands();
      for (const g of user.figures) operands.add(g);
      for (const g of draftFigures) operands.add(g);
    }
    return operands;
  };
  const derived = (f: Figure) => {
    const near = new Operands();
    for (const g of beside.get(sentenceOf.get(f) ?? -1) ?? []) if (g !== f) near.add(g);
    return isDerived(f, near, ops());
  };
  const drifted: string[] = [];
  /** Figures the revision worked out itself (and repeats of them): supported as replacements too. */
  const worked = new Set<Figure>();
  const workedValues = new Map<string, Figure[]>();
  const workedAlready = (f: Figure) => (workedValues.get(String(f.value)) ?? []).some((g) => sameQuantity(f, g));
  for (const f of unsupported) {
    // A value the revision worked out and then repeats (`= $11,025` … `you'd have $11,025`) is supported once it is.
    if (workedAlready(f) || derived(f)) {
      support(f);
      worked.add(f);
      const same = workedValues.get(String(f.value));
      if (same) same.push(f);
      else workedValues.set(String(f.value), [f]);
    } else drifted.push(tokenOf(f));
  }
  if (draft === undefined || draftFacts === undefined || supported.size === 0 || !vanished) return drifted;
  // Replacements: in a rewritten sentence, a figure of a kind whose draft figure of that kind is gone.
  const oldSentences = sentencesOf(draft);
  const byRevisionSentence = new Map<Sentence, Figure[]>();
  for (const f of figures) {
    const s = sentences[sentenceOf.get(f) ?? -1];
    if (!s || !supported.has(f)) continue;
    const list = byRevisionSentence.get(s);
    if (list) list.push(f);
    else byRevisionSentence.set(s, [f]);
  }
  const byDraftSentence = new Map<Sentence, Figure[]>();
  for (const f of draftFigures) {
    const s = oldSentences[locate(oldSentences, f.index)];
    if (!s || !within(f, s)) continue;
    const list = byDraftSentence.get(s);
    if (list) list.push(f);
    else byDraftSentence.set(s, [f]);
  }
  const userIndex = new FigureIndex(user.figures);
  for (const [s, old] of rewrites(sentences, oldSentences)) {
    // At most 256 figures a sentence are compared (the comparison is quadratic in them).
    const now = (byRevisionSentence.get(s) ?? []).slice(0, 256);
    const before = (byDraftSentence.get(old) ?? []).slice(0, 256);
    if (now.length === 0 || before.length === 0) continue;
    for (const f of now) {
      if (before.some((b) => sameQuantity(f, b))) continue; // kept
      const g = groupOf(f);
      if (!before.some((b) => groupOf(b) === g && !now.some((n) => sameQuantity(n, b)))) continue; // nothing of its kind was replaced
      if (worked.has(f) || userIndex.has(f) || given.converts(f) || derived(f)) continue;
      drifted.push(f.span);
    }
  }
  return drifted;
}

/** The drift of a gate revision: against everything the executor was given for the draft it revised. */
export function driftOfRevision(input: ChallengeInput, revision: string): DriftToken[] {
  return driftAgainst(revision, { user: [input.prompt, ...(input.constraints ?? []), ...(input.policies ?? [])], draft: input.draft });
}

/** The one warning line for a drifted revision (never the whole list when it is long: the line stays readable). */
export function driftWarning(drift: readonly DriftToken[]): string {
  const shown = drift.slice(0, 6).map((d) => d.text.replace(/\s+/g, " "));
  const more = drift.length > shown.length ? ` and ${drift.length - shown.length} more` : "";
  return `the revision added facts found in none of the prompt, draft, constraints and policies — check them before use: ${shown.join(", ")}${more} (audit_meta.revision_drift; docs/run.md)`;
}
