import { canonicalJson } from "../hash.js";
import { isObject, type Read } from "../contracts/lenient.js";

/**
 * Tolerant reading of model replies (CONTRACT §2). Every function here is linear in the reply's
 * length (or bounded by a small multiple of it): a hostile reply of 10 MB of `{` costs one scan,
 * never a quadratic search, so a run always answers a signal.
 */

const TAG = /<(\/?)(think|thinking|reasoning)>/gi;

/**
 * Reasoning is never an answer (CONTRACT §2 r2): `<think>…</think>` blocks are removed, and so is
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
}

/** Extra scans after a candidate that never closed (a stray quote can hide a later object): bounded. */
const MAX_RESCANS = 8;
/** Parse attempts per reply, at most, and the characters they may read in all (a multiple of the reply's length). */
const MAX_PARSES = 256;
const PARSE_BUDGET_FACTOR = 4;
/** Structured replies are read from their last 2 MiB at most. */
const MAX_SCAN = 2 * 1024 * 1024;

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
        stack.length = 0; // mismatched: whatever was open is not JSON
        continue;
      }
      stack.pop();
      if (c === 125 || openArray) spans.push({ start: top.pos, end: i, depth: stack.length });
    }
  }
  return { spans, unclosed: stack[0]?.pos ?? -1, openString };
}

/**
 * Top-level bracketed spans in order of appearance, each with the spans directly inside it (tried
 * when the outer one does not parse).
 */
function candidates(text: string, brackets: "{" | "{["): { start: number; end: number; inner: Span[] }[] {
  const all: Span[] = [];
  let from = 0;
  for (let pass = 0; pass <= MAX_RESCANS && from < text.length; pass++) {
    const { spans, unclosed, openString } = scan(text, from, brackets);
    for (const s of spans) all.push(s);
    // Only a string that never closed can have swallowed a real object: otherwise a rescan sees the same spans.
    if (unclosed === -1 || !openString) break;
    from = unclosed + 1;
  }
  // Keep spans not inside another span; remember each outer span's direct children.
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  const top: { start: number; end: number; inner: Span[] }[] = [];
  for (const s of all) {
    const parent = top[top.length - 1];
    if (parent && s.start > parent.start && s.end <= parent.end) {
      const last = parent.inner[parent.inner.length - 1];
      if (!last || s.start > last.end) parent.inner.push(s);
      continue;
    }
    if (parent && s.start === parent.start && s.end === parent.end) continue; // found again by a rescan
    top.push({ start: s.start, end: s.end, inner: [] });
  }
  return top;
}

/**
 * One string-aware pass over a candidate: trailing commas before `}`/`]` removed, raw control
 * characters inside strings escaped (models write real newlines inside JSON strings).
 */
export function repairJson(candidate: string): string {
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

function tryParse(candidate: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(candidate) };
  } catch {
    const repaired = repairJson(candidate);
    if (repaired === candidate) return { ok: false };
    try {
      return { ok: true, value: JSON.parse(repaired) };
    } catch {
      return { ok: false };
    }
  }
}

/**
 * Every top-level JSON value in `text` — objects, and with `arrays` also arrays — in order of
 * appearance: fenced, bare or surrounded by prose. A value nested in another that parsed is not
 * listed; the parts of one that did not parse are tried instead.
 */
export function jsonValues(text: string, opts: { arrays?: boolean } = {}): unknown[] {
  const source = text.length > MAX_SCAN ? text.slice(text.length - MAX_SCAN) : text;
  // The usual structured reply is one JSON value and nothing else: then it is the only top-level value, no scan needed.
  const whole = source.trim();
  const open = whole[0];
  if ((open === "{" || (opts.arrays && open === "[")) && whole[whole.length - 1] === (open === "{" ? "}" : "]")) {
    const parsed = tryParse(whole);
    if (parsed.ok) return [parsed.value];
  }
  const found: unknown[] = [];
  let attempts = 0;
  let budget = PARSE_BUDGET_FACTOR * source.length + 1024;
  const visit = (start: number, end: number, inner: readonly Span[]) => {
    if (attempts >= MAX_PARSES || budget <= 0) return;
    attempts++;
    budget -= end + 1 - start;
    const parsed = tryParse(source.slice(start, end + 1));
    if (parsed.ok) {
      found.push(parsed.value);
      return;
    }
    for (const s of inner) visit(s.start, s.end, []); // one level down only: bounded
  };
  for (const c of candidates(source, opts.arrays ? "{[" : "{")) visit(c.start, c.end, c.inner);
  return found;
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
 * Tolerant structured-reply parsing (CONTRACT §2): reasoning removed, every JSON value found, and
 * the last one the reader accepts is the reply — except a value equal (as parsed JSON) to one in
 * the text under review, which is a quote and never the reply (r2).
 */
export function parseStructured<T>(text: string, read: (value: unknown) => Read<T>, opts: ParseOptions = {}): Parsed<T> {
  const values = jsonValues(stripThink(text), { arrays: opts.arrays ?? false });
  if (values.length === 0) return { ok: false, reason: "unparseable", error: "reply holds no JSON object" };
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
