/** Unit tests of choosing wiki entries for an issue (src/carryover/relevance.ts), over a real SQLite store in a temp home. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { knownGapsFor, relevantEntries, renderGaps } from "../../src/carryover/relevance.js";
import { readWiki, setFrontMatter, upsertGap, type WikiEntry } from "../../src/carryover/wiki.js";
import type { Config } from "../../src/contracts/config.js";
import { sqliteHome, type SqliteHome } from "../support/sqlite-home.js";
import { concern } from "./fixtures.js";

const AT = "2025-04-05T06:07:08.000Z";
const WIDE = { maxEntries: 5, maxChars: 4000 };

let h: SqliteHome;
let dir: string;
beforeEach(async () => {
  h = await sqliteHome();
  dir = h.wikiDir;
});
afterEach(async () => h.cleanup());

const load = () => readWiki(h.store.wiki);

const UPLOAD = concern({ severity: "CRITICAL", category: "security", concern: "Nobody checked that the upload endpoint rejects oversized payloads" });
const WRITERS = concern({ severity: "HIGH", category: "edge_cases", concern: "Concurrent writers to the same upload can corrupt the stored file" });
const CACHE = concern({ severity: "HIGH", category: "performance", concern: "The session cache is never invalidated after a password change" });

/** Writes entries for the given gaps (PR 100+i, issue i+1) and loads the wiki back. */
async function wiki(...gaps: ReturnType<typeof concern>[]): Promise<{ entries: WikiEntry[]; ids: string[] }> {
  const ids: string[] = [];
  for (const [i, g] of gaps.entries()) ids.push((await upsertGap(h.store.wiki, await load(), g, 100 + i, String(i + 1), AT)).id);
  return { entries: await load(), ids };
}

const RELATED_TO_UPLOADS = "Resumable uploads\nThe upload endpoint should accept oversized payloads in chunks.";
const UNRELATED = "Dark mode for the settings page\nPeople want a darker colour scheme at night.";

describe("relevantEntries", () => {
  it("an issue about the same thing gets the entry; an unrelated issue gets none", async () => {
    const { entries, ids } = await wiki(UPLOAD, CACHE);
    expect(relevantEntries(entries, RELATED_TO_UPLOADS, WIDE).map((e) => e.id)).toEqual([ids[0]]);
    expect(relevantEntries(entries, UNRELATED, WIDE)).toEqual([]);
    expect(relevantEntries(entries, "", WIDE)).toEqual([]);
    expect(relevantEntries(entries, "   \n ", WIDE)).toEqual([]);
  });

  // Every generated entry carries the same template ("Shipped with this gap in PR #…", "Raised by … phase",
  // "Severity", "category", "Confidence is low … adversarial pipeline … before merge"). Words of that
  // template say nothing about the gap, so sharing them must not make an issue "related".
  it.each(["Add a severity filter to the issue list", "Phase out the old merge queue", "Show confidence intervals on the dashboard, low priority"])(
    "an issue sharing only the entry template's words is not related: %s",
    async (text) => {
      const { entries } = await wiki(UPLOAD, CACHE);
      expect(relevantEntries(entries, text, WIDE).map((e) => e.id)).toEqual([]);
    },
  );

  it("matches across inflection and case (stemmed, like fingerprints)", async () => {
    const { entries, ids } = await wiki(UPLOAD);
    expect(relevantEntries(entries, "UPLOADING an OVERSIZED payload to the Endpoints", WIDE).map((e) => e.id)).toEqual([ids[0]]);
  });

  it("ranks the more relevant entry first", async () => {
    const { entries, ids } = await wiki(UPLOAD, WRITERS, CACHE);
    const chosen = relevantEntries(entries, "Concurrent writers corrupt the stored file during an upload", WIDE).map((e) => e.id);
    expect(chosen[0]).toBe(ids[1]);
    expect(chosen).not.toContain(ids[2]);
  });

  it("a stale entry is never chosen, however relevant", async () => {
    const { ids } = await wiki(UPLOAD, WRITERS);
    await setFrontMatter(h.store.wiki, ids[0] ?? "", { stale: true });
    expect(h.wikiText(ids[0] ?? "")).toMatch(/^stale: true$/m);
    const entries = await load();
    expect(entries.find((e) => e.id === ids[0])?.stale).toBe(true);
    const chosen = relevantEntries(entries, `${UPLOAD.concern}\n${WRITERS.concern}`, WIDE).map((e) => e.id);
    expect(chosen).toEqual([ids[1]]);
    expect(relevantEntries(entries, UPLOAD.concern, WIDE)).toEqual([]);
  });

  it("keeps at most maxEntries", async () => {
    const { entries } = await wiki(
      UPLOAD,
      WRITERS,
      concern({ severity: "HIGH", category: "security", concern: "Upload endpoint stores oversized payloads on the web server disk" }),
    );
    const text = `${UPLOAD.concern}\n${WRITERS.concern}\nupload endpoint stores oversized payloads on the web server disk`;
    expect(relevantEntries(entries, text, WIDE)).toHaveLength(3);
    expect(relevantEntries(entries, text, { maxEntries: 2, maxChars: 100_000 })).toHaveLength(2);
    expect(relevantEntries(entries, text, { maxEntries: 1, maxChars: 100_000 })).toHaveLength(1);
  });

  it("keeps within the character budget", async () => {
    const { entries } = await wiki(UPLOAD, WRITERS);
    const text = `${UPLOAD.concern}\n${WRITERS.concern}`;
    const both = relevantEntries(entries, text, WIDE);
    expect(both).toHaveLength(2);
    const one = both[0] as WikiEntry;
    const budget = one.title.length + one.body.length + 10;
    const chosen = relevantEntries(entries, text, { maxEntries: 5, maxChars: budget });
    expect(chosen.map((e) => e.id)).toEqual([one.id]);
  });
});

describe("knownGapsFor (the pipeline's port over the store's wiki: DISSENT_HOME/wiki with SQLite)", () => {
  const config = (wikiLimits = WIDE): Pick<Config, "wiki"> => ({ wiki: wikiLimits });

  it("gives the ids and a text naming each entry and its PRs; nothing for an unrelated issue", async () => {
    const { ids } = await wiki(UPLOAD, CACHE);
    const gaps = knownGapsFor(config(), h.store, () => undefined);
    const related = await gaps(RELATED_TO_UPLOADS);
    expect(related?.ids).toEqual([ids[0]]);
    expect(related?.text).toContain(`[${ids[0]}]`);
    expect(related?.text).toContain(UPLOAD.concern);
    expect(related?.text).toContain("#100");
    expect(related?.text).not.toContain(ids[1] ?? "");
    expect(await gaps(UNRELATED)).toBeUndefined();
  });

  it("an empty or missing wiki gives nothing", async () => {
    expect(await knownGapsFor(config(), h.store, () => undefined)(RELATED_TO_UPLOADS)).toBeUndefined();
    mkdirSync(dir, { recursive: true });
    expect(await knownGapsFor(config(), h.store, () => undefined)(RELATED_TO_UPLOADS)).toBeUndefined();
  });

  it("the injected text stays within wiki.max_chars", async () => {
    await wiki(UPLOAD, WRITERS, CACHE);
    const text = `${UPLOAD.concern}\n${WRITERS.concern}\n${CACHE.concern}`;
    for (const maxChars of [40, 120, 400, 1200, 4000]) {
      const gaps = await knownGapsFor(config({ maxEntries: 5, maxChars }), h.store, () => undefined)(text);
      // A gap whose whole line does not fit is left out, never cut mid-sentence: below the shortest line, none is given.
      const entries = await readWiki(h.store.wiki);
      const shortest = Math.min(...entries.map((e) => renderGaps([e], maxChars).length));
      if (shortest > maxChars) {
        expect(gaps, `maxChars ${maxChars}`).toBeUndefined();
        continue;
      }
      expect(gaps, `maxChars ${maxChars}`).toBeDefined();
      expect(gaps?.text.length ?? 0, `maxChars ${maxChars}: ${gaps?.text}`).toBeLessThanOrEqual(maxChars);
      expect(gaps?.ids.length).toBeGreaterThan(0);
      for (const id of gaps?.ids ?? []) expect(gaps?.text).toContain(`[${id}]`);
      for (const line of gaps?.text.split("\n") ?? [])
        expect(
          [UPLOAD, WRITERS, CACHE].some((g) => line.includes(g.concern)),
          line,
        ).toBe(true);
    }
  });

  it("skips a malformed file with a warning naming it and still answers", async () => {
    const { ids } = await wiki(UPLOAD);
    writeFileSync(join(dir, "broken.md"), "---\nfingerprint: [\n---\n");
    const warnings: string[] = [];
    const gaps = await knownGapsFor(config(), h.store, (m) => warnings.push(m))(RELATED_TO_UPLOADS);
    expect(gaps?.ids).toEqual([ids[0]]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("broken.md");
  });

  it("reads the files as they are now: a hand-edited body changes what is relevant", async () => {
    const { ids } = await wiki(UPLOAD);
    const path = join(dir, `${ids[0]}.md`);
    const thumbs = "Faster thumbnail generator\nGenerating previews buffers whole files in memory.";
    expect(await knownGapsFor(config(), h.store, () => undefined)(thumbs)).toBeUndefined();
    writeFileSync(path, `${readFileSync(path, "utf8")}\nAlso hits the thumbnail generator, which buffers whole files.\n`);
    expect((await knownGapsFor(config(), h.store, () => undefined)(thumbs))?.ids).toEqual([ids[0]]);
  });
});

describe("renderGaps", () => {
  it("one line per entry with its id, severity, title and PRs", async () => {
    const { entries, ids } = await wiki(UPLOAD);
    const text = renderGaps(entries, 4000);
    expect(text.split("\n")).toHaveLength(1);
    expect(text).toContain(`[${ids[0]}]`);
    expect(text).toContain("CRITICAL");
    expect(text).toContain(UPLOAD.concern);
    expect(text).toContain("PR #100");
  });
});
