/**
 * Unit tests of the wiki (src/carryover/wiki.ts) over a real SQLite store in a temp home, whose
 * wiki port is the folder `<home>/wiki`: writing, updating, loading, hand edits, malformed files.
 */
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { parseEntry, readWiki, setFrontMatter, updateFrontMatter, upsertGap, type WikiEntry } from "../../src/carryover/wiki.js";
import type { Store } from "../../src/store/port.js";
import { memoryStore } from "../../src/store/sqlite.js";
import { sqliteHome, type SqliteHome } from "../support/sqlite-home.js";
import { concern } from "./fixtures.js";

const AT = "2025-04-05T06:07:08.000Z";
const LATER = "2025-05-06T07:08:09.000Z";

let h: SqliteHome;
let store: Store;
let dir: string;
beforeEach(async () => {
  h = await sqliteHome();
  store = h.store;
  dir = h.wikiDir;
});
afterEach(async () => h.cleanup());

const wiki = () => store.wiki;
const load = (warn?: (m: string) => void): Promise<WikiEntry[]> => readWiki(store.wiki, warn);
const mdFiles = () => h.wikiFiles();
const read = (id: string) => readFileSync(join(dir, `${id}.md`), "utf8");
function split(text: string): { fm: Record<string, unknown>; fmText: string; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) throw new Error(`no front matter:\n${text}`);
  return { fm: parseYaml(m[1] ?? "") as Record<string, unknown>, fmText: m[1] ?? "", body: text.slice(m[0].length) };
}

const gap = concern({
  severity: "CRITICAL",
  category: "security",
  concern: "Nobody checked that the upload endpoint rejects oversized payloads",
  evidence: "POST /upload accepts   any\nsize",
  raised_by: "discovery.problem_sharpener",
  phase: "discover",
  stage: "discovery_council",
  must_address_by: "implement",
});

describe("upsertGap: a new gap", () => {
  it("writes one markdown file whose front matter carries the contract fields", async () => {
    const r = await upsertGap(wiki(), [], gap, 42, "7", AT);
    expect(r.changed).toBe(true);
    expect(mdFiles()).toEqual([`${r.id}.md`]);
    const { fm } = split(read(r.id));
    expect(fm).toMatchObject({
      confidence: "low",
      stale: false,
      pr: 42,
      issue: "7",
      source: "shipped-with-known-gap",
      fingerprint: gap.fingerprint,
      created: AT,
      updated: AT,
    });
  });

  it("the body says what the concern is, where it was raised and what it had to be addressed by", async () => {
    const { id } = await upsertGap(wiki(), [], gap, 42, "7", AT);
    const { body } = split(read(id));
    expect(body).toContain(gap.concern);
    expect(body).toContain(gap.raised_by);
    expect(body).toContain(gap.phase);
    expect(body).toContain(gap.must_address_by);
    expect(body).toContain("#42");
  });

  it("loads back as the entry it describes", async () => {
    const { id } = await upsertGap(wiki(), [], gap, 42, "7", AT);
    const warnings: string[] = [];
    const [entry, ...rest] = await load((m) => warnings.push(m));
    expect(rest).toEqual([]);
    expect(warnings).toEqual([]);
    expect(entry).toMatchObject({
      id,
      path: join(dir, `${id}.md`),
      fingerprint: gap.fingerprint,
      severity: "CRITICAL",
      category: "security",
      confidence: "low",
      stale: false,
      prs: [42],
      issues: ["7"],
      created: AT,
      updated: AT,
      title: gap.concern,
    });
  });

  it("a concern full of YAML and markdown metacharacters still makes a valid, loadable entry", async () => {
    const nasty = concern({ severity: "HIGH", category: "edge_cases", concern: 'Retry: the `--force` flag\'s #1 problem is "quotes" & {braces}: [x] | > *' });
    const { id } = await upsertGap(wiki(), [], nasty, 3, "9", AT);
    const entries = await load((m) => {
      throw new Error(m);
    });
    expect(entries.map((e) => e.id)).toEqual([id]);
    expect(entries[0]?.fingerprint).toBe(nasty.fingerprint);
    expect(entries[0]?.title).toBe(nasty.concern);
  });

  it("two different gaps get two files, never overwriting each other", async () => {
    const a = await upsertGap(wiki(), [], gap, 1, "1", AT);
    const other = concern({ severity: "HIGH", category: "security", concern: "Nobody checked that the upload endpoint rejects oversized filenames" });
    const b = await upsertGap(wiki(), await load(), other, 1, "1", AT);
    expect(b.id).not.toBe(a.id);
    expect(mdFiles()).toHaveLength(2);
    expect(split(read(a.id)).fm.fingerprint).toBe(gap.fingerprint);
    expect(split(read(b.id)).fm.fingerprint).toBe(other.fingerprint);
  });

  // r2: file names are capped — a slug of at most 48 characters, then the fingerprint's first 8.
  it.each([
    [
      "many long words",
      "Internationalisation misconfigurations overwhelmingly destabilise asynchronous authentication subsystems whenever administrators reconfigure",
    ],
    ["one enormous word", "x".repeat(400)],
    ["punctuation only around words", `${"!?".repeat(50)} upload ${"#".repeat(80)} limits`],
  ])("the file name of a long concern is capped (%s)", async (_what, text) => {
    const c = concern({ severity: "HIGH", concern: text });
    const { id } = await upsertGap(wiki(), [], c, 1, "1", AT);
    expect(mdFiles()).toEqual([`${id}.md`]);
    const m = /^(.+)-([0-9a-f]{8})$/.exec(id);
    expect(m, id).not.toBeNull();
    expect(m?.[2]).toBe(c.fingerprint.slice(0, 8));
    expect(m?.[1]?.length ?? 0).toBeGreaterThan(0);
    expect(m?.[1]?.length ?? 99).toBeLessThanOrEqual(48);
    expect(m?.[1]).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
    // A title is the concern's first sentence(s), whole: never cut mid-sentence (r3).
    const title = (await load())[0]?.title ?? "";
    const flat = c.concern.replace(/\s+/g, " ").trim();
    expect(flat.startsWith(title), title).toBe(true);
    expect(title === flat || (/[.!?]$/.test(title) && flat[title.length] === " "), title).toBe(true);
  });
});

describe("upsertGap: the same gap again", () => {
  it("same fingerprint from another issue and PR updates the one entry, listing both", async () => {
    const first = await upsertGap(wiki(), [], gap, 42, "7", AT);
    const before = read(first.id);
    // Reworded, same fingerprint (case, punctuation, plural, stop words).
    const again = concern({ severity: "HIGH", category: "security", concern: "nobody checked the upload endpoints reject oversized payload!" });
    expect(again.fingerprint).toBe(gap.fingerprint);
    const second = await upsertGap(wiki(), await load(), again, 43, "8", LATER);
    expect(second).toEqual({ id: first.id, changed: true });
    expect(mdFiles()).toEqual([`${first.id}.md`]);
    const after = split(read(first.id));
    expect(after.fm.prs).toEqual([42, 43]);
    expect(after.fm.issues).toEqual(["7", "8"]);
    expect(after.fm).toMatchObject({ updated: LATER, created: AT, confidence: "low", stale: false, source: "shipped-with-known-gap" });
    expect(after.body).toBe(split(before).body);
    expect((await load())[0]?.prs).toEqual([42, 43]);
  });

  // r2 (docs/library.md): the fingerprint is the concern text alone; a critic's free-form category is not part of it.
  it("the same concern under another category is the same gap: one entry", async () => {
    const first = await upsertGap(wiki(), [], gap, 42, "7", AT);
    const recategorised = concern({ severity: "HIGH", category: "edge_cases", concern: gap.concern });
    expect(recategorised.fingerprint).toBe(gap.fingerprint);
    const second = await upsertGap(wiki(), await load(), recategorised, 43, "8", LATER);
    expect(second).toEqual({ id: first.id, changed: true });
    expect(mdFiles()).toEqual([`${first.id}.md`]);
    expect(split(read(first.id)).fm.prs).toEqual([42, 43]);
  });

  it("the same PR and issue again changes nothing, byte for byte", async () => {
    const first = await upsertGap(wiki(), [], gap, 42, "7", AT);
    const before = readFileSync(join(dir, `${first.id}.md`));
    const again = await upsertGap(wiki(), await load(), gap, 42, "7", LATER);
    expect(again).toEqual({ id: first.id, changed: false });
    expect(readFileSync(join(dir, `${first.id}.md`)).equals(before)).toBe(true);
    expect(mdFiles()).toHaveLength(1);
  });

  it("leaves no temporary files behind", async () => {
    await upsertGap(wiki(), [], gap, 42, "7", AT);
    await upsertGap(wiki(), await load(), gap, 43, "8", LATER);
    expect(readdirSync(dir)).toHaveLength(1);
  });
});

/** A hand-edited entry: extra keys, comments, an edited body. */
function handEdited(id: string): string {
  const generated = read(id);
  const { body } = split(generated);
  const fmEnd = generated.indexOf("\n---\n", 4);
  return (
    `${generated.slice(0, fmEnd)}\n` +
    "# Reviewed by alice on 2025-04-10: still true.\n" +
    "owner: alice\n" +
    "links:\n  - https://example.com/postmortem/123\n" +
    `---\n${body.replace("Confidence is low", "Confidence is low (alice: we saw this in prod once)")}\n## Notes\n\nAlice added this section by hand.\n`
  );
}

describe("hand-edited entries", () => {
  it("still load, with the human's extra keys in meta and the edited body", async () => {
    const { id } = await upsertGap(wiki(), [], gap, 42, "7", AT);
    const edited = handEdited(id);
    writeFileSync(join(dir, `${id}.md`), edited);
    const warnings: string[] = [];
    const [entry] = await load((m) => warnings.push(m));
    expect(warnings).toEqual([]);
    expect(entry?.meta).toMatchObject({ owner: "alice", links: ["https://example.com/postmortem/123"] });
    expect(entry?.body).toContain("Alice added this section by hand.");
    expect(entry?.fingerprint).toBe(gap.fingerprint);
  });

  it("an entry written wholly by hand (pr only, CRLF line endings, a date-typed field) loads", async () => {
    mkdirSync(dir, { recursive: true });
    const text = [
      "---",
      "fingerprint: abc123",
      "pr: 17",
      "issue: 4",
      "stale: false",
      "created: 2024-01-02",
      "---",
      "# Upload limits are not enforced",
      "",
      "Written by hand.",
      "",
    ].join("\r\n");
    writeFileSync(join(dir, "by-hand.md"), text);
    const warnings: string[] = [];
    const [entry] = await load((m) => warnings.push(m));
    expect(warnings).toEqual([]);
    expect(entry).toMatchObject({ id: "by-hand", fingerprint: "abc123", prs: [17], issues: ["4"], stale: false, title: "Upload limits are not enforced" });
    expect(Number.isNaN(Date.parse(entry?.updated ?? ""))).toBe(false);
  });

  it("when the same gap ships again, comments, extra keys and the edited body are kept", async () => {
    const { id } = await upsertGap(wiki(), [], gap, 42, "7", AT);
    const edited = handEdited(id);
    writeFileSync(join(dir, `${id}.md`), edited);
    await upsertGap(wiki(), await load(), gap, 43, "8", LATER);
    const after = read(id);
    expect(split(after).body).toBe(split(edited).body);
    expect(after).toContain("# Reviewed by alice on 2025-04-10: still true.\n");
    expect(after).toContain("owner: alice\n");
    expect(after).toContain("links:\n  - https://example.com/postmortem/123\n");
    expect(split(after).fm).toMatchObject({ prs: [42, 43], issues: ["7", "8"], updated: LATER, owner: "alice" });
  });

  const HAND_LINES = [
    "fingerprint: 0123456789abcdef",
    "title: 'Single-quoted: kept as written'",
    "owner:   alice    # aligned by hand",
    "tags: [uploads, limits]",
    "note: this is a long hand-written note that runs well past the eighty column mark of any YAML printer, on one line",
    "stale: false",
    "prs: [1]",
  ];
  const HAND_BODY = "# Title\n\nBody as written.\n";

  it("setFrontMatter keeps every line of the file it does not update byte-for-byte (spacing, flow lists, long lines)", async () => {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "hand.md");
    writeFileSync(path, `---\n${HAND_LINES.join("\n")}\n---\n${HAND_BODY}`);
    await setFrontMatter(wiki(), "hand", { stale: true });
    const after = readFileSync(path, "utf8");
    expect(split(after).body).toBe(HAND_BODY);
    expect(split(after).fm).toMatchObject({ stale: true, owner: "alice", tags: ["uploads", "limits"], prs: [1] });
    for (const line of HAND_LINES.filter((l) => !l.startsWith("stale:"))) expect(after.split("\n"), `line changed: ${line}\n${after}`).toContain(line);
    expect(after).toBe(`---\n${HAND_LINES.map((l) => (l.startsWith("stale:") ? "stale: true" : l)).join("\n")}\n---\n${HAND_BODY}`);
  });

  it("updateFrontMatter (on the text) keeps CRLF endings, a byte-order mark and unchanged lines; adds missing keys", () => {
    const text = `\uFEFF---\r\n${HAND_LINES.join("\r\n")}\r\n---\r\n${HAND_BODY.replace(/\n/g, "\r\n")}`;
    const after = updateFrontMatter(text, { stale: true, reviewed: "2025-06-01" });
    expect(after.startsWith("\uFEFF---\r\n")).toBe(true);
    expect(after.endsWith(`---\r\n${HAND_BODY.replace(/\n/g, "\r\n")}`)).toBe(true);
    const lines = after.slice(1).split("\r\n");
    for (const line of HAND_LINES.filter((l) => !l.startsWith("stale:"))) expect(lines, `line changed: ${line}\n${after}`).toContain(line);
    expect(lines).toContain("stale: true");
    expect(lines).toContain("reviewed: 2025-06-01");
    expect(after.replace(/\r\n/g, "")).not.toContain("\n");
    // Text with no front matter is left alone.
    expect(updateFrontMatter("# no front matter\n", { stale: true })).toBe("# no front matter\n");
  });

  it("setFrontMatter on an entry that does not exist writes nothing", async () => {
    await setFrontMatter(wiki(), "nobody", { stale: true });
    expect(mdFiles()).toEqual([]);
  });
});

describe("malformed files are skipped with a warning naming them, never a crash", () => {
  const cases: Record<string, string> = {
    "no-front-matter.md": "# Just a heading\n\nNo front matter here.\n",
    "unclosed.md": "---\nfingerprint: abc\ntitle: never closed\n# body\n",
    "bad-yaml.md": "---\nfingerprint: [oops\n---\n# x\n",
    "not-a-mapping.md": "---\n- a\n- b\n---\n# x\n",
    "no-fingerprint.md": "---\ntitle: A page with no fingerprint\n---\n# x\n",
    "empty.md": "",
    // r2: an alias bomb (the "billion laughs") is skipped with a warning, never expanded.
    "alias-bomb.md": [
      "---",
      "fingerprint: bomb",
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
      "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
      "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
      "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
      "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]",
      "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]",
      "---",
      "# boom",
      "",
    ].join("\n"),
  };

  it.each(Object.entries(cases))("%s", async (name, text) => {
    await upsertGap(wiki(), [], gap, 42, "7", AT);
    writeFileSync(join(dir, name), text);
    const warnings: string[] = [];
    const entries = await load((m) => warnings.push(m));
    expect(entries.map((e) => e.fingerprint)).toEqual([gap.fingerprint]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(name);
    expect(typeof parseEntry(text, join(dir, name))).toBe("string");
    if (name === "alias-bomb.md") expect(warnings[0]).toMatch(/alias/i);
  });

  it("files that are not .md are ignored silently; a missing folder is an empty wiki", async () => {
    expect(mdFiles()).toEqual([]);
    expect(await load()).toEqual([]);
    await upsertGap(wiki(), [], gap, 42, "7", AT);
    writeFileSync(join(dir, "README.txt"), "not an entry");
    writeFileSync(join(dir, ".DS_Store"), "\0\0");
    const warnings: string[] = [];
    expect(await load((m) => warnings.push(m))).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it("an unreadable .md (dangling symlink as editors leave for locks, or a folder) is skipped, not thrown", async () => {
    await upsertGap(wiki(), [], gap, 42, "7", AT);
    symlinkSync("alice@laptop.4242:1700000000", join(dir, ".#lock.md"));
    mkdirSync(join(dir, "drafts.md"));
    const warnings: string[] = [];
    const entries = await load((m) => warnings.push(m));
    expect(entries.map((e) => e.fingerprint)).toEqual([gap.fingerprint]);
  });

  it("upsertGap next to malformed files still writes and updates its entry", async () => {
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(cases)) writeFileSync(join(dir, name), text);
    const { id } = await upsertGap(wiki(), await load(), gap, 42, "7", AT);
    await upsertGap(wiki(), await load(), gap, 43, "8", LATER);
    expect(split(read(id)).fm.prs).toEqual([42, 43]);
    for (const [name, text] of Object.entries(cases)) expect(readFileSync(join(dir, name), "utf8")).toBe(text);
  });
});

describe("the in-memory store's wiki", () => {
  it("writes, updates and loads entries the same way, naming them memory:<id>", async () => {
    const mem = await memoryStore();
    try {
      const first = await upsertGap(mem.wiki, [], gap, 42, "7", AT);
      const second = await upsertGap(mem.wiki, await readWiki(mem.wiki), gap, 43, "8", LATER);
      expect(second).toEqual({ id: first.id, changed: true });
      const [entry, ...rest] = await readWiki(mem.wiki);
      expect(rest).toEqual([]);
      expect(entry).toMatchObject({ id: first.id, path: `memory:${first.id}`, prs: [42, 43], issues: ["7", "8"], updated: LATER });
      expect(mdFiles()).toEqual([]);
    } finally {
      await mem.close();
    }
  });
});
