import { isMap, isScalar, parseDocument, stringify, type Document } from "yaml";
import type { Concern } from "../contracts/concern.js";
import type { WikiEntryFields } from "../contracts/wiki.js";
import { type Store, type StoredWikiEntry, UNREADABLE_WIKI } from "../store/port.js";

/** Where wiki entries live: the store's wiki (files under the home with SQLite, rows with PostgreSQL). */
export type WikiPort = Store["wiki"];

/** One wiki entry: a known gap that shipped. The markdown file is the source of truth. */
export interface WikiEntry extends WikiEntryFields {
  /** Where it lives, for messages (a file path, or `database:<id>`). */
  path: string;
  /** The markdown after the front matter. */
  body: string;
  /** All front-matter fields, human additions included. */
  meta: Record<string, unknown>;
}

const FRONT = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Lines of the entry template (not what the gap is about): left out of relevance search. */
const TEMPLATE_LINE = /^(?:Shipped with this gap in PR .*|- \*\*(?:Raised by|Severity|Had to be addressed by):\*\*.*|Confidence is low: .*)$/;

/** What an entry is about, for search: title, category and body without the template's own lines. */
export function searchableText(entry: WikiEntry): string {
  const body = entry.body
    .split(/\r?\n/)
    .filter((l) => !TEMPLATE_LINE.test(l.trim()))
    .map((l) => l.replace(/^- \*\*Evidence:\*\*\s*/, ""))
    .join("\n");
  return body;
}

/** Reads every wiki entry; a malformed one is skipped with a warning naming it, never a crash. */
export async function readWiki(wiki: WikiPort, warn: (message: string) => void = () => undefined): Promise<WikiEntry[]> {
  return parseEntries(await wiki.list(), wiki.where, warn);
}

/** Parses stored entries, skipping (with a warning) what cannot be used. */
export function parseEntries(stored: readonly StoredWikiEntry[], where: string, warn: (message: string) => void = () => undefined): WikiEntry[] {
  const entries: WikiEntry[] = [];
  for (const s of stored) {
    const path = where === "database" || where === "memory" ? `${where}:${s.id}` : `${where}/${s.id}.md`;
    if (s.text.startsWith(UNREADABLE_WIKI)) {
      warn(`skipping wiki entry ${path}: ${s.text.slice(UNREADABLE_WIKI.length)}`);
      continue;
    }
    const parsed = parseEntry(s.text, path, s.id);
    if (typeof parsed === "string") warn(`skipping wiki entry ${path}: ${parsed}`);
    else entries.push(parsed);
  }
  return entries;
}

const asNumbers = (v: unknown): number[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]).map(Number).filter((n) => Number.isInteger(n));
const asStrings = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]).map(String);
const dateText = (v: unknown): string => (v instanceof Date ? v.toISOString() : typeof v === "string" ? v : "");

/** Parses one entry file; returns a reason string when it cannot be used. */
export function parseEntry(raw: string, path: string, entryId?: string): WikiEntry | string {
  const text = raw.replace(/^\uFEFF/, ""); // a byte-order mark some editors add
  const m = FRONT.exec(text);
  if (!m) return "no front matter (--- … ---)";
  const doc = parseDocument(m[1] ?? "");
  if (doc.errors.length) return `invalid front matter: ${doc.errors[0]?.message.split("\n")[0]}`;
  let meta: unknown;
  try {
    meta = doc.toJS({ maxAliasCount: 100 }); // an alias bomb is skipped, never expanded
  } catch (e) {
    return `invalid front matter: ${(e as Error).message.split("\n")[0]}`;
  }
  if (!meta || typeof meta !== "object" || Array.isArray(meta)) return "front matter is not a mapping";
  const fm = meta as Record<string, unknown>;
  if (typeof fm.fingerprint !== "string" || !fm.fingerprint) return "front matter has no fingerprint";
  const body = text.slice(m[0].length);
  const heading = /^#\s+(.+)$/m.exec(body)?.[1]?.trim();
  const id = entryId ?? path.split(/[\\/]/).pop()?.replace(/\.md$/, "") ?? path;
  const prs = [...new Set([...asNumbers(fm.prs), ...asNumbers(fm.pr)])];
  const issues = [...new Set([...asStrings(fm.issues), ...asStrings(fm.issue)])];
  return {
    id,
    path,
    title: typeof fm.title === "string" ? fm.title : (heading ?? id),
    fingerprint: fm.fingerprint,
    severity: String(fm.severity ?? ""),
    category: String(fm.category ?? ""),
    confidence: String(fm.confidence ?? "low"),
    stale: fm.stale === true,
    prs,
    issues,
    created: dateText(fm.created),
    updated: dateText(fm.updated) || dateText(fm.created),
    body,
    meta: fm,
  };
}

/** The longest slug in an entry's name: with its fingerprint suffix a name stays far below any file system's limit. */
const MAX_SLUG = 48;

function slug(text: string): string {
  const words = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .split("-")
    .slice(0, 8);
  let out = "";
  for (const w of words) {
    const next = out ? `${out}-${w}` : w;
    if (next.length > MAX_SLUG) break;
    out = next;
  }
  return out || words[0]?.slice(0, MAX_SLUG) || "gap";
}

/** A value as YAML source on one line: scalars as YAML writes them, lists in flow style. */
function inline(value: unknown): string {
  return stringify(value, { collectionStyle: "flow", flowCollectionPadding: false, lineWidth: 0 }).trimEnd();
}

/**
 * Replaces some front-matter fields of an entry file in place. Only the changed values' own source
 * text is rewritten: every other line — comments, spacing, key order, line endings — stays byte for byte.
 */
export function updateFrontMatter(raw: string, changes: Record<string, unknown>): string {
  const bom = raw.startsWith("\uFEFF") ? "\uFEFF" : "";
  const text = raw.slice(bom.length);
  const m = FRONT.exec(text);
  if (!m) return raw;
  const front = m[1] ?? "";
  const eol = front.includes("\r\n") ? "\r\n" : "\n";
  const doc: Document = parseDocument(front, { keepSourceTokens: true });
  const edits: { from: number; to: number; text: string }[] = [];
  const added: string[] = [];
  for (const [key, value] of Object.entries(changes)) {
    const pair = isMap(doc.contents) ? doc.contents.items.find((p) => isScalar(p.key) && p.key.value === key) : undefined;
    const range = (pair?.value as { range?: [number, number, number] } | null | undefined)?.range;
    if (pair && range) {
      const old = front.slice(range[0], range[1]);
      // A block list's range runs to the next key: keep the line break (and anything blank) it ends with.
      edits.push({ from: range[0], to: range[1], text: inline(value) + (/\s*$/.exec(old)?.[0] ?? "") });
    } else added.push(`${key}: ${inline(value)}`);
  }
  let updated = front;
  for (const e of edits.sort((a, b) => b.from - a.from)) updated = updated.slice(0, e.from) + e.text + updated.slice(e.to);
  if (added.length) updated = `${updated.replace(/\s+$/, "")}${eol}${added.join(eol)}`;
  const head = m[0].slice(0, m[0].indexOf("\n") + 1); // "---\n" or "---\r\n"
  const tail = m[0].slice(head.length + front.length);
  return `${bom}${head}${updated}${tail}${text.slice(m[0].length)}`;
}

/** Updates some front-matter fields of a stored entry, keeping every other byte (see updateFrontMatter). */
export async function setFrontMatter(wiki: WikiPort, id: string, changes: Record<string, unknown>): Promise<void> {
  const stored = await wiki.get(id);
  if (stored) await wiki.put({ id, text: updateFrontMatter(stored.text, changes) });
}

/** The first sentence of a concern, whole (a title is never cut mid-sentence). */
function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return /^.+?[.!?](?=\s|$)/.exec(flat)?.[0] ?? flat;
}

function entryText(c: Concern, pr: number, issueId: string, at: string): string {
  const meta = {
    title: firstSentence(c.concern),
    confidence: "low",
    stale: false,
    pr,
    prs: [pr],
    issue: issueId,
    issues: [issueId],
    source: "shipped-with-known-gap",
    fingerprint: c.fingerprint,
    severity: c.severity,
    category: c.category,
    concern_id: c.id,
    created: at,
    updated: at,
  };
  const lines = [
    `# ${c.concern}`,
    "",
    `Shipped with this gap in PR #${pr} (issue ${issueId}).`,
    "",
    `- **Raised by:** ${c.raised_by} in the ${c.phase} phase (${c.stage}), as ${c.id}`,
    `- **Severity:** ${c.severity} · **category:** ${c.category}`,
    `- **Had to be addressed by:** ${c.must_address_by}`,
    ...(c.evidence ? [`- **Evidence:** ${c.evidence.replace(/\s+/g, " ")}`] : []),
    "",
    "Confidence is low: the concern was raised by the adversarial pipeline and never confirmed or refuted before merge.",
  ];
  return `---\n${stringify(meta).trimEnd()}\n---\n${lines.join("\n")}\n`;
}

/**
 * Writes (or updates) the entry for a shipped gap (ADR-0064 "Carryover"). The same gap shipped
 * again — same fingerprint — updates its entry, listing every PR; the same PR twice changes nothing.
 */
export async function upsertGap(
  wiki: WikiPort,
  existing: readonly WikiEntry[],
  c: Concern,
  pr: number,
  issueId: string,
  at: string,
): Promise<{ id: string; changed: boolean }> {
  const known = existing.find((e) => e.fingerprint === c.fingerprint);
  if (known) {
    if (known.prs.includes(pr) && known.issues.includes(issueId) && !known.stale) return { id: known.id, changed: false };
    const prs = [...new Set([...known.prs, pr])];
    const issues = [...new Set([...known.issues, issueId])];
    await setFrontMatter(wiki, known.id, { prs, issues, stale: false, updated: at });
    return { id: known.id, changed: true };
  }
  let id = `${slug(c.concern)}-${c.fingerprint.slice(0, 8)}`;
  if (await wiki.get(id)) id = `${id}-${c.fingerprint.slice(8, 12)}`;
  await wiki.put({ id, text: entryText(c, pr, issueId, at) });
  return { id, changed: true };
}
