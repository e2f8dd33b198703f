import type * as JsonRepair from "jsonrepair";
import { canonicalJson } from "../hash.js";
import { jsonRegions, opensJson, proseResumes, type Region } from "./json-regions.js";
import { isObject, type Read } from "../contracts/lenient.js";
import { lazyRequire } from "../lazy-require.js";

/**
 * Tolerant reading of model replies (docs/configuration.md). Every function here is linear in the reply's
 * length (or bounded by a small multiple of it): a hostile reply of 10 MB of `{` costs one scan,
 * never a quadratic search, so a run always answers a signal.
 */

const TAG = /<(\/?)(think|thinking|reasoning)>/gi;

/**
 * Reasoning is never an answer (docs/configuration.md): `<think>…</think>` blocks are removed, and so is
 * everything before a lone `</think>` and everything after an unclosed `<think>`.
 */
export function stripThink(text: string): string {
  if (!text.includes("<")) return text;
  let out = "";
  let depth = 0;
  let from = 0; // start of the text not yet copied (outside any block)
  TAG.lastIndex = 0;
  for (let m = TAG.exec(text); m; m = TAG.exec(text)) {
    if (m[1] === "") {
      if (depth === 0) out += text.slice(from, m.index);
      depth++;
    } else if (depth > 0) {
      depth--;
      if (depth === 0) from = m.index + m[0].length;
    } else {
      // A lone closing tag: everything before it was reasoning.
      out = "";
      from = m.index + m[0].length;
    }
  }
  if (depth > 0) return out; // an unclosed <think>: what follows it is reasoning
  return out + text.slice(from);
}

/** A balanced `{…}` or `[…]` span in a text. */
interface Span {
  start: number;
  end: number; // index of the closing bracket
  depth: number; // 0 = not inside another closed span of the same scan
  /** Ended at a mismatched bracket: one broken value, read whole or not at all. */
  broken?: boolean;
}

/** Extra scans after a candidate that never closed (a stray quote can hide a later object): bounded. */
const MAX_RESCANS = 8;
/** Parse attempts per reply, at most, and the characters they may read in all (a multiple of the reply's length). */
const MAX_PARSES = 256;
const PARSE_BUDGET_FACTOR = 4;
/** Structured replies are read from their last 2 MiB at most (docs/run.md "Replies"). */
export const MAX_SCAN = 2 * 1024 * 1024;

/**
 * One left-to-right scan from `from`: brackets on a stack, strings honoured only inside a
 * candidate (prose quotes stay prose). Returns every closed span and where an unclosed one began.
 */
function scan(text: string, from: number, brackets: "{" | "{["): { spans: Span[]; unclosed: number; openString: boolean } {
  const spans: Span[] = [];
  let openString = false;
  const stack: { pos: number; close: number }[] = [];
  const openArray = brackets === "{[";
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (stack.length > 0 && c === 34 /* " */) {
      // Skip the string: its end is the next unescaped quote.
      let closed = false;
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 92 /* \ */) i++;
        else if (s === 34) {
          closed = true;
          break;
        }
      }
      if (!closed) openString = true;
      continue;
    }
    // Inside a candidate both bracket kinds nest; at the top level an array starts one only when asked for.
    if (c === 123 /* { */ || (c === 91 /* [ */ && (openArray || stack.length > 0))) {
      stack.push({ pos: i, close: c === 123 ? 125 : 93 });
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      const top = stack[stack.length - 1];
      if (!top) continue;
      if (top.close !== c) {
        // Mismatched (`[{"i":1{"i":2}]`): the outermost opening up to here is one broken value, which
        // repair may read whole; what closed inside it is part of it, never a value of its own.
        const outer = stack[0];
        if (outer && (text[outer.pos] === "{" || openArray)) spans.push({ start: outer.pos, end: i, depth: 0, broken: true });
        stack.length = 0;
        continue;
      }
      stack.pop();
      if (c === 125 || openArray) spans.push({ start: top.pos, end: i, depth: stack.length });
    }
  }
  return { spans, unclosed: stack[0]?.pos ?? -1, openString };
}

/** A place JSON may be: a balanced span (with the spans directly inside it), or an opening that never closed. */
interface Candidate {
  start: number;
  end: number;
  inner: Span[];
  /** The opening bracket never closed: the value runs to `end` and is closed by repair. */
  unclosed?: boolean;
  /** Ended at a mismatched bracket: read whole or not at all. */
  broken?: boolean;
}

/**
 * Top-level bracketed spans in order of appearance, each with the spans directly inside it (tried
 * when the outer one does not parse); and, when an opening that looks like JSON never closed, that
 * opening up to where prose resumes, holding every span inside it.
 */
function candidates(text: string, brackets: "{" | "{["): Candidate[] {
  const all: Span[] = [];
  let from = 0;
  let unclosed = -1;
  for (let pass = 0; pass <= MAX_RESCANS && from < text.length; pass++) {
    const scanned = scan(text, from, brackets);
    for (const s of scanned.spans) all.push(s);
    unclosed = scanned.unclosed;
    // Only a string that never closed can have swallowed a real object: otherwise a rescan sees the same spans.
    if (unclosed === -1 || !scanned.openString) break;
    from = unclosed + 1;
  }
  // Keep spans not inside another span; remember each outer span's direct children.
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  const top: Candidate[] = [];
  for (const s of all) {
    const parent = top[top.length - 1];
    if (parent && s.start > parent.start && s.end <= parent.end) {
      const last = parent.inner[parent.inner.length - 1];
      if (!parent.broken && (!last || s.start > last.end)) parent.inner.push(s);
      continue;
    }
    if (parent && s.start === parent.start && s.end === parent.end) continue; // found again by a rescan
    top.push({ start: s.start, end: s.end, inner: [], ...(s.broken ? { broken: true } : {}) });
  }
  if (unclosed === -1 || !opensJson(text, unclosed)) return top;
  // An unclosed value owns every span inside it: an inner object is never the reply on its own.
  const end = proseResumes(text, unclosed);
  const before = top.filter((c) => c.end < unclosed);
  const inside = top.filter((c) => c.start > unclosed && c.end < end);
  const after = top.filter((c) => c.start >= end);
  return [...before, { start: unclosed, end: end - 1, inner: inside.map((c) => ({ start: c.start, end: c.end, depth: 1 })), unclosed: true }, ...after];
}

/**
 * A candidate as JSON: parsed as it is, else repaired by jsonrepair (unquoted keys, single and curly
 * quotes, missing commas and colons, comments, Python and JS literals, raw newlines in strings,
 * trailing commas, an unclosed end) and parsed again. A candidate beyond repair is not JSON.
 */
function tryParse(candidate: string, budget: RepairBudget, repair = true): { ok: true; value: unknown } | { ok: false } {
  // No reply nests this deep: a hostile `[[[[…` is refused in one linear pass, before any parser recurses into it.
  if (bracketDepth(candidate, MAX_NESTING) > MAX_NESTING) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(candidate) };
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
  }
  if (!repair) return { ok: false };
  const repaired = repairJson(candidate, budget);
  if (repaired === candidate) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(repaired) };
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    return { ok: false };
  }
}

/**
 * jsonrepair is not linear on hostile input (nested broken strings cost it quadratic time): it is
 * given candidates up to this size and nested no deeper than this, and a reply this much in all.
 */
const MAX_REPAIR = 16 * 1024;
const MAX_REPAIR_DEPTH = 64;
/** Deeper than this, a candidate is not a reply at all. */
const MAX_NESTING = 512;

/** jsonrepair, loaded on the first candidate JSON.parse refuses (most replies never need it). */
const repairer: () => typeof JsonRepair = lazyRequire("jsonrepair");

/** What jsonrepair may still read for one reply, in characters. */
interface RepairBudget {
  left: number;
}
/** A reply's budget: jsonrepair's worst case over it stays well under a second. */
const replyBudget = (): RepairBudget => ({ left: 2 * MAX_REPAIR });

/** Nesting depth of brackets, strings ignored (a bound, not a parse): linear. */
function bracketDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length && max <= limit; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if ((c === 125 || c === 93) && depth > 0) depth--;
  }
  return max;
}

/**
 * `candidate` repaired into JSON text: by jsonrepair when it is within the bounds above, else (or
 * when jsonrepair gives up) by one linear pass that escapes raw control characters in strings and
 * drops trailing commas — what models do to JSON of any length. Unchanged when beyond repair.
 */
export function repairJson(candidate: string, budget: RepairBudget = replyBudget()): string {
  const bounded = candidate.length <= MAX_REPAIR && budget.left >= candidate.length && bracketDepth(candidate, MAX_REPAIR_DEPTH) <= MAX_REPAIR_DEPTH;
  if (bounded) {
    budget.left -= candidate.length;
    const { JSONRepairError, jsonrepair } = repairer();
    try {
      return jsonrepair(candidate);
    } catch (e) {
      // JSONRepairError: not JSON at all; RangeError: nested deeper than the stack.
      if (!(e instanceof JSONRepairError || e instanceof RangeError)) throw e;
    }
  }
  return escapeAndTrim(candidate);
}

/** One string-aware linear pass: raw control characters inside strings escaped, trailing commas before `}`/`]` removed. */
function escapeAndTrim(candidate: string): string {
  let out = "";
  let inString = false;
  let changed = false;
  for (let i = 0; i < candidate.length; i++) {
    const ch = candidate[i] as string;
    const c = ch.charCodeAt(0);
    if (inString) {
      if (c === 92) {
        out += ch + (candidate[i + 1] ?? "");
        i++;
      } else if (c === 34) {
        inString = false;
        out += ch;
      } else if (c < 32) {
        out += c === 10 ? "\\n" : c === 13 ? "\\r" : c === 9 ? "\\t" : `\\u${c.toString(16).padStart(4, "0")}`;
        changed = true;
      } else out += ch;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 44 /* , */) {
      let j = i + 1;
      while (j < candidate.length && /\s/.test(candidate[j] as string)) j++;
      const next = candidate[j];
      if (next === "}" || next === "]") {
        changed = true;
        continue;
      }
    }
    out += ch;
  }
  return changed ? out : candidate;
}

/**
 * Is `value` what its opening bracket began? Repair may read two objects and the prose between
 * them as one array (newline-delimited JSON): then the text holds several values, not that array.
 */
const opened = (bracket: string | undefined, value: unknown): boolean => (bracket === "{" ? isObject(value) : Array.isArray(value));

/**
 * Every top-level JSON value in `text` — objects, and with `arrays` also arrays — in order of
 * appearance: fenced, bare or surrounded by prose. A value nested in another that parsed is not
 * listed; the parts of a closed one that did not parse are tried instead, but never the parts of an
 * unclosed one that did.
 */
export function jsonValues(text: string, opts: { arrays?: boolean } = {}): unknown[] {
  const source = text.length > MAX_SCAN ? text.slice(text.length - MAX_SCAN) : text;
  const repairBudget = replyBudget();
  // The usual structured reply is one JSON value and nothing else: then it is the only top-level value, no scan needed.
  const whole = source.trim();
  const open = whole[0];
  if ((open === "{" || (opts.arrays && open === "[")) && whole[whole.length - 1] === (open === "{" ? "}" : "]")) {
    const parsed = tryParse(whole, repairBudget);
    if (parsed.ok && opened(open, parsed.value)) return [parsed.value];
  }
  const found: { at: number; value: unknown }[] = [];
  let attempts = 0;
  let budget = PARSE_BUDGET_FACTOR * source.length + 1024;
  const attempt = (start: number, end: number, repair = true): unknown => {
    if (attempts >= MAX_PARSES || budget <= 0) return undefined;
    attempts++;
    budget -= end + 1 - start;
    const parsed = tryParse(source.slice(start, end + 1), repairBudget, repair);
    return parsed.ok && opened(source[start], parsed.value) ? parsed.value : undefined;
  };
  // A fenced body is read whole first: its end is certain, and repair can close what it left open.
  const regions = jsonRegions(source, opts.arrays ?? false);
  const taken: { start: number; end: number }[] = [];
  const overlaps = (c: { start: number; end: number }) => taken.some((r) => c.start < r.end && c.end >= r.start);
  const take = (start: number, end: number, value: unknown) => {
    found.push({ at: start, value });
    taken.push({ start, end: end + 1 });
  };
  const readRegion = (r: Region) => {
    const end = r.start + source.slice(r.start, r.end).trimEnd().length - 1;
    const value = attempt(r.start, end);
    if (value !== undefined) take(r.start, end, value);
  };
  for (const r of regions) if (r.fenced) readRegion(r);
  // In prose, brackets are often not JSON ("[RFC 7231]" repairs into an array): an array there is
  // repaired only when it opens like one (`[{`, `["`, `[1`), else it must parse as written.
  const repairs = (at: number) => source[at] === "{" || opensJson(source, at);
  const visit = (start: number, end: number, inner: readonly Span[]) => {
    const value = attempt(start, end, repairs(start));
    if (value !== undefined) return take(start, end, value);
    for (const s of inner) {
      const v = attempt(s.start, s.end, repairs(s.start)); // one level down only: bounded
      if (v !== undefined) take(s.start, s.end, v);
    }
  };
  for (const c of candidates(source, opts.arrays ? "{[" : "{")) if (!overlaps(c)) visit(c.start, c.end, c.inner);
  // Lines of JSON whose quotes or brackets do not balance (nothing above read them) are read up to where prose resumes.
  for (const r of regions) if (!r.fenced && !overlaps({ start: r.start, end: r.end - 1 })) readRegion(r);
  return found.sort((x, y) => x.at - y.at).map((f) => f.value);
}

/** Every top-level JSON object in `text`, in order of appearance. */
export function jsonObjects(text: string): unknown[] {
  return jsonValues(text).filter(isObject);
}

/** Why a reply could not be used: no JSON at all, or JSON that never had the right shape. */
export type ParseFailure = { ok: false; reason: "unparseable" | "schema"; error: string };
export type Parsed<T> = { ok: true; value: T; invalid: number; dropped: unknown[] } | ParseFailure;

/** Options of `parseStructured`. */
export interface ParseOptions {
  /** The texts under review (the draft, the issue, an artifact): a JSON value quoted from them is never the reply. */
  quotedFrom?: readonly string[];
  /** Read a bare top-level array too (a findings list given without its object). */
  arrays?: boolean;
}

/** Canonical forms of the JSON values a text contains, to recognise a quote of it. */
export function quotedValues(texts: readonly string[]): Set<string> {
  const set = new Set<string>();
  for (const t of texts) if (/[{[]/.test(t)) for (const v of jsonValues(t, { arrays: true })) set.add(canonicalJson(v));
  return set;
}

/**
 * Tolerant structured-reply parsing (docs/configuration.md): reasoning removed, every JSON value found, and
 * the last one the reader accepts is the reply — except a value equal (as parsed JSON) to one in
 * the text under review, which is a quote and never the reply (r2).
 */
export function parseStructured<T>(text: string, read: (value: unknown) => Read<T>, opts: ParseOptions = {}): Parsed<T> {
  const answer = stripThink(text);
  const values = jsonValues(answer, { arrays: opts.arrays ?? false });
  if (values.length === 0) {
    // A reply longer than the bound is read from its end: say so, or "no JSON" would mislead.
    const cut =
      answer.length > MAX_SCAN
        ? ` in its last ${MAX_SCAN / 1024 / 1024} MiB (the reply has ${(answer.length / 1024 / 1024).toFixed(1)} MiB; only its end is read)`
        : "";
    return { ok: false, reason: "unparseable", error: `reply holds no JSON object${cut}` };
  }
  const quotes = opts.quotedFrom?.length ? quotedValues(opts.quotedFrom) : undefined;
  let firstIssue = "";
  let quoted = 0;
  for (let k = values.length - 1; k >= 0; k--) {
    const value = values[k];
    if (quotes?.size && quotes.has(canonicalJson(value))) {
      quoted++;
      continue;
    }
    const r = read(value);
    if (r.ok) return r;
    firstIssue ||= r.error;
  }
  if (!firstIssue && quoted) return { ok: false, reason: "schema", error: "the only JSON in the reply is quoted from the text under review" };
  return { ok: false, reason: "schema", error: `reply does not match the schema (${firstIssue})` };
}
