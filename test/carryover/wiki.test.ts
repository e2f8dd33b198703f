/** Unit tests of the wiki files (src/carryover/wiki.ts): writing, updating, loading, hand edits, malformed files. */
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadWiki, parseEntry, updateFrontMatter, upsertGap } from "../../src/carryover/wiki.js";
import { concern, tempDir } from "./fixtures.js";

const AT = "2025-04-05T06:07:08.000Z";
const LATER = "2025-05-06T07:08:09.000Z";

let tmp: ReturnType<typeof tempDir>;
let dir: string;
beforeEach(() => {
  tmp = tempDir();
  dir = join(tmp.dir, "wiki");
});
afterEach(() => tmp.cleanup());

const mdFiles = () => readdirSync(dir).filter((n) => n.endsWith(".md")).sort();
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
  it("writes one markdown file whose front matter carries the contract fields", () => {
    const r = upsertGap(dir, [], gap, 42, "7", AT);
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

  it("the body says what the concern is, where it was raised and what it had to be addressed by", () => {
    const { id } = upsertGap(dir, [], gap, 42, "7", AT);
    const { body } = split(read(id));
    expect(body).toContain(gap.concern);
    expect(body).toContain(gap.raised_by);
    expect(body).toContain(gap.phase);
    expect(body).toContain(gap.must_address_by);
    expect(body).toContain("#42");
  });

  it("loads back as the entry it describes", () => {
    const { id } = upsertGap(dir, [], gap, 42, "7", AT);
    const warnings: string[] = [];
    const [entry, ...rest] = loadWiki(dir, (m) => warnings.push(m));
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

  it("a concern full of YAML and markdown metacharacters still makes a valid, loadable entry", () => {
    const nasty = concern({ severity: "HIGH", category: "edge_cases", concern: 'Retry: the `--force` flag\'s #1 problem is "quotes" & {braces}: [x] | > *' });
    const { id } = upsertGap(dir, [], nasty, 3, "9", AT);
    const entries = loadWiki(dir, (m) => {
      throw new Error(m);
    });
    expect(entries.map((e) => e.id)).toEqual([id]);
    expect(entries[0]?.fingerprint).toBe(nasty.fingerprint);
    expect(entries[0]?.title).toBe(nasty.concern);
  });

  it("two different gaps get two files, never overwriting each other", () => {
    const a = upsertGap(dir, [], gap, 1, "1", AT);
    const other = concern({ severity: "HIGH", category: "security", concern: "Nobody checked that the upload endpoint rejects oversized filenames" });
    const b = upsertGap(dir, loadWiki(dir), other, 1, "1", AT);
    expect(b.id).not.toBe(a.id);
    expect(mdFiles()).toHaveLength(2);
    expect(split(read(a.id)).fm.fingerprint).toBe(gap.fingerprint);
    expect(split(read(b.id)).fm.fingerprint).toBe(other.fingerprint);
  });
});

describe("upsertGap: the same gap again", () => {
  it("same fingerprint from another issue and PR updates the one entry, listing both", () => {
    const first = upsertGap(dir, [], gap, 42, "7", AT);
    const before = read(first.id);
    // Reworded, same fingerprint (case, punctuation, plural, stop words).
    const again = concern({ severity: "HIGH", category: "security", concern: "nobody checked the upload endpoints reject oversized payload!" });
    expect(again.fingerprint).toBe(gap.fingerprint);
    const second = upsertGap(dir, loadWiki(dir), again, 43, "8", LATER);
    expect(second).toEqual({ id: first.id, changed: true });
    expect(mdFiles()).toEqual([`${first.id}.md`]);
    const after = split(read(first.id));
    expect(after.fm.prs).toEqual([42, 43]);
    expect(after.fm.issues).toEqual(["7", "8"]);
    expect(after.fm).toMatchObject({ updated: LATER, created: AT, confidence: "low", stale: false, source: "shipped-with-known-gap" });
    expect(after.body).toBe(split(before).body);
    expect(loadWiki(dir)[0]?.prs).toEqual([42, 43]);
  });

  it("the same PR and issue again changes nothing, byte for byte", () => {
    const first = upsertGap(dir, [], gap, 42, "7", AT);
    const before = readFileSync(join(dir, `${first.id}.md`));
    const again = upsertGap(dir, loadWiki(dir), gap, 42, "7", LATER);
    expect(again).toEqual({ id: first.id, changed: false });
    expect(readFileSync(join(dir, `${first.id}.md`)).equals(before)).toBe(true);
    expect(mdFiles()).toHaveLength(1);
  });

  it("leaves no temporary files behind", () => {
    upsertGap(dir, [], gap, 42, "7", AT);
    upsertGap(dir, loadWiki(dir), gap, 43, "8", LATER);
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
  it("still load, with the human's extra keys in meta and the edited body", () => {
    const { id } = upsertGap(dir, [], gap, 42, "7", AT);
    const edited = handEdited(id);
    writeFileSync(join(dir, `${id}.md`), edited);
    const warnings: string[] = [];
    const [entry] = loadWiki(dir, (m) => warnings.push(m));
    expect(warnings).toEqual([]);
    expect(entry?.meta).toMatchObject({ owner: "alice", links: ["https://example.com/postmortem/123"] });
    expect(entry?.body).toContain("Alice added this section by hand.");
    expect(entry?.fingerprint).toBe(gap.fingerprint);
  });

  it("an entry written wholly by hand (pr only, CRLF line endings, a date-typed field) loads", () => {
    mkdirSync(dir, { recursive: true });
    const text = ["---", "fingerprint: abc123", "pr: 17", "issue: 4", "stale: false", "created: 2024-01-02", "---", "# Upload limits are not enforced", "", "Written by hand.", ""].join("\r\n");
    writeFileSync(join(dir, "by-hand.md"), text);
    const warnings: string[] = [];
    const [entry] = loadWiki(dir, (m) => warnings.push(m));
    expect(warnings).toEqual([]);
    expect(entry).toMatchObject({ id: "by-hand", fingerprint: "abc123", prs: [17], issues: ["4"], stale: false, title: "Upload limits are not enforced" });
    expect(Number.isNaN(Date.parse(entry?.updated ?? ""))).toBe(false);
  });

  it("when the same gap ships again, comments, extra keys and the edited body are kept", () => {
    const { id } = upsertGap(dir, [], gap, 42, "7", AT);
    const edited = handEdited(id);
    writeFileSync(join(dir, `${id}.md`), edited);
    upsertGap(dir, loadWiki(dir), gap, 43, "8", LATER);
    const after = read(id);
    expect(split(after).body).toBe(split(edited).body);
    expect(after).toContain("# Reviewed by alice on 2025-04-10: still true.\n");
    expect(after).toContain("owner: alice\n");
    expect(after).toContain("links:\n  - https://example.com/postmortem/123\n");
    expect(split(after).fm).toMatchObject({ prs: [42, 43], issues: ["7", "8"], updated: LATER, owner: "alice" });
  });

  it("updateFrontMatter keeps every line it does not update byte-for-byte (spacing, flow lists, long lines)", () => {
    mkdirSync(dir, { recursive: true });
    const lines = [
      "fingerprint: 0123456789abcdef",
      "title: 'Single-quoted: kept as written'",
      "owner:   alice    # aligned by hand",
      "tags: [uploads, limits]",
      "note: this is a long hand-written note that runs well past the eighty column mark of any YAML printer, on one line",
      "stale: false",
      "prs: [1]",
    ];
    const body = "# Title\n\nBody as written.\n";
    const path = join(dir, "hand.md");
    writeFileSync(path, `---\n${lines.join("\n")}\n---\n${body}`);
    updateFrontMatter(path, { stale: true });
    const after = readFileSync(path, "utf8");
    expect(split(after).body).toBe(body);
    expect(split(after).fm).toMatchObject({ stale: true, owner: "alice", tags: ["uploads", "limits"], prs: [1] });
    for (const line of lines.filter((l) => !l.startsWith("stale:"))) expect(after.split("\n"), `line changed: ${line}\n${after}`).toContain(line);
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
  };

  it.each(Object.entries(cases))("%s", (name, text) => {
    upsertGap(dir, [], gap, 42, "7", AT);
    writeFileSync(join(dir, name), text);
    const warnings: string[] = [];
    const entries = loadWiki(dir, (m) => warnings.push(m));
    expect(entries.map((e) => e.fingerprint)).toEqual([gap.fingerprint]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(name);
    expect(typeof parseEntry(text, join(dir, name))).toBe("string");
  });

  it("files that are not .md are ignored silently; a missing folder is an empty wiki", () => {
    expect(loadWiki(join(tmp.dir, "nowhere"))).toEqual([]);
    upsertGap(dir, [], gap, 42, "7", AT);
    writeFileSync(join(dir, "README.txt"), "not an entry");
    writeFileSync(join(dir, ".DS_Store"), "\0\0");
    const warnings: string[] = [];
    expect(loadWiki(dir, (m) => warnings.push(m))).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it("an unreadable .md (dangling symlink as editors leave for locks, or a folder) is skipped, not thrown", () => {
    upsertGap(dir, [], gap, 42, "7", AT);
    symlinkSync("alice@laptop.4242:1700000000", join(dir, ".#lock.md"));
    mkdirSync(join(dir, "drafts.md"));
    const warnings: string[] = [];
    let entries: ReturnType<typeof loadWiki> = [];
    expect(() => (entries = loadWiki(dir, (m) => warnings.push(m)))).not.toThrow();
    expect(entries.map((e) => e.fingerprint)).toEqual([gap.fingerprint]);
  });

  it("upsertGap next to malformed files still writes and updates its entry", () => {
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(cases)) writeFileSync(join(dir, name), text);
    const { id } = upsertGap(dir, loadWiki(dir), gap, 42, "7", AT);
    upsertGap(dir, loadWiki(dir), gap, 43, "8", LATER);
    expect(split(read(id)).fm.prs).toEqual([42, 43]);
    for (const [name, text] of Object.entries(cases)) expect(readFileSync(join(dir, name), "utf8")).toBe(text);
  });
});
