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

/** How known gaps are shown to the assumption surfacer. */
export function renderGaps(entries: readonly WikiEntry[], maxChars: number): string {
  return entries
    .map((e) => {
      const shipped = e.prs.length ? `shipped in ${e.prs.map((p) => `PR #${p}`).join(", ")}` : "shipped";
      const text = `- [${e.id}] ${e.severity ? `${e.severity} ` : ""}${e.title} (${shipped})`;
      return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
    })
    .join("\n");
}

/** The pipeline's `knownGaps` port over the store's wiki, loaded once per invocation. */
export function knownGapsFor(config: Pick<Config, "wiki">, store: Store, warn: (message: string) => void): (text: string) => Promise<KnownGaps | undefined> {
  let entries: Promise<WikiEntry[]> | undefined;
  return async (text) => {
    entries ??= readWiki(store.wiki, warn);
    const chosen = relevantEntries(await entries, text, config.wiki);
    return chosen.length ? { ids: chosen.map((e) => e.id), text: renderGaps(chosen, config.wiki.maxChars) } : undefined;
  };
}
