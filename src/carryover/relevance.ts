import MiniSearch from "minisearch";
import { termOf, words } from "../adversarial/fingerprint.js";
import type { Config } from "../contracts/config.js";
import type { KnownGaps } from "../pipeline/stage-runner.js";
import type { Store } from "../store/port.js";
import { readWiki, searchableText, type WikiEntry } from "./wiki.js";

/** A query must share at least this many distinct (stemmed, non-stop) terms with an entry to be relevant. */
const MIN_SHARED_TERMS = 2;

/**
 * Ranks non-stale wiki entries against an issue's text with a lexical search (minisearch, BM25),
 * keeping at most `maxEntries` within `maxChars`. An unrelated issue gets none.
 */
export function relevantEntries(entries: readonly WikiEntry[], text: string, limits: { maxEntries: number; maxChars: number }): WikiEntry[] {
  const live = entries.filter((e) => !e.stale);
  if (!live.length || !text.trim()) return [];
  const search = new MiniSearch<{ id: string; title: string; body: string; category: string }>({
    fields: ["title", "body", "category"],
    // Same normalisation as fingerprints: lower case, stop words dropped, stemmed.
    tokenize: (text) => words(text),
    processTerm: (t) => termOf(t),
    searchOptions: { boost: { title: 2 }, combineWith: "OR" },
  });
  search.addAll(live.map((e) => ({ id: e.id, title: e.title, body: searchableText(e), category: e.category.replace(/[_-]+/g, " ") })));
  const byId = new Map(live.map((e) => [e.id, e]));
  const chosen: WikiEntry[] = [];
  let chars = 0;
  for (const hit of search.search(text)) {
    if (new Set(hit.queryTerms).size < MIN_SHARED_TERMS) continue;
    const entry = byId.get(String(hit.id));
    if (!entry) continue;
    const size = entry.title.length + entry.body.length;
    if (chars + size > limits.maxChars && chosen.length > 0) break;
    chosen.push(entry);
    chars += size;
    if (chosen.length >= limits.maxEntries) break;
  }
  return chosen;
}

/** Sentences of a text, each with its closing punctuation (a text with none is one sentence). */
function sentences(text: string): string[] {
  const flat = text.replace(/\s+/g, " ").trim();
  return (
    flat
      .match(/[^.!?]+(?:[.!?]+["')\]]*|$)(?:\s+|$)/g)
      ?.map((x) => x.trim())
      .filter(Boolean) ?? [flat]
  );
}

/**
 * What a known gap is about, in whole sentences (docs/issue.md: a title is never cut mid-sentence):
 * the entry's heading (the concern as raised) when its front-matter title was shortened, then as many
 * sentences as fit in `maxChars` — the first one always whole.
 */
export function gapTitle(e: Pick<WikiEntry, "title" | "body">, maxChars: number): string {
  const heading = /^#\s+(.+)$/m.exec(e.body)?.[1]?.trim();
  const full = heading && /(?:…|\.\.\.)$/.test(e.title.trim()) ? heading : e.title;
  const [first = "", ...rest] = sentences(full);
  let out = first;
  for (const s of rest) {
    if (out.length + 1 + s.length > maxChars) break;
    out = `${out} ${s}`;
  }
  return out;
}

/** One known gap as the assumption surfacer is shown it: `- [id] SEVERITY title (shipped in PR #n)`. */
const gapLine = (e: WikiEntry, maxChars: number) => {
  const shipped = e.prs.length ? `shipped in ${e.prs.map((p) => `PR #${p}`).join(", ")}` : "shipped";
  return `- [${e.id}] ${e.severity ? `${e.severity} ` : ""}${gapTitle(e, maxChars)} (${shipped})`;
};

/** How known gaps are shown to the assumption surfacer, one line each. */
export function renderGaps(entries: readonly WikiEntry[], maxChars: number): string {
  return entries.map((e) => gapLine(e, maxChars)).join("\n");
}

/** The known gaps whose whole lines fit in `maxChars` together, most relevant first: a line is left out, never cut. */
export function fittingGaps(entries: readonly WikiEntry[], maxChars: number): WikiEntry[] {
  const out: WikiEntry[] = [];
  let used = 0;
  for (const e of entries) {
    const size = gapLine(e, maxChars).length + (out.length ? 1 : 0);
    if (used + size > maxChars) continue;
    out.push(e);
    used += size;
  }
  return out;
}

/** The pipeline's `knownGaps` port over the store's wiki, loaded once per invocation. */
export function knownGapsFor(config: Pick<Config, "wiki">, store: Store, warn: (message: string) => void): (text: string) => Promise<KnownGaps | undefined> {
  let entries: Promise<WikiEntry[]> | undefined;
  return async (text) => {
    entries ??= readWiki(store.wiki, warn);
    const chosen = fittingGaps(relevantEntries(await entries, text, config.wiki), config.wiki.maxChars);
    return chosen.length ? { ids: chosen.map((e) => e.id), text: renderGaps(chosen, config.wiki.maxChars) } : undefined;
  };
}
