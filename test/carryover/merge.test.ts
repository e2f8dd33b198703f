/** Unit tests of `issue merged` / `issue resolve` logic (src/carryover/merge.ts) over a real SQLite store in a temp home. */
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { mergeIssue, resolveConcern, type MergeDeps } from "../../src/carryover/merge.js";
import type { Concern, ConcernResolution } from "../../src/contracts/concern.js";
import type { DissentEvent } from "../../src/contracts/events.js";
import { exitCodeOf } from "../../src/cli/exit-codes.js";
import { UsageError } from "../../src/errors.js";
import type { Store } from "../../src/store/port.js";
import { foldState } from "../../src/store/state.js";
import { localTracker, type LocalTracker } from "../../src/trackers/local.js";
import { sqliteHome, type SqliteHome } from "../support/sqlite-home.js";
import { concern } from "./fixtures.js";

const AT = "2025-04-05T06:07:08.000Z";

let h: SqliteHome;
let store: Store;
let tracker: LocalTracker;
let wikiDir: string;
let warnings: string[];

beforeEach(async () => {
  h = await sqliteHome();
  store = h.store;
  tracker = localTracker(store);
  wikiDir = h.wikiDir;
  warnings = [];
});
afterEach(async () => h.cleanup());

const deps = (over: Partial<MergeDeps> = {}): MergeDeps => ({
  tracker,
  store,
  warn: (m) => warnings.push(m),
  now: () => AT,
  ...over,
});

async function issueWith(pending: Concern[], labels = ["dissent-ready"]): Promise<string> {
  const issue = await tracker.create({ title: "Accept uploads", body: "Up to 10 MB.", labels });
  await store.append(pending.map((c) => ({ type: "ConcernForwarded" as const, issue_id: issue.id, concern: c, reason: "review" as const })));
  return issue.id;
}

const wikiFiles = () => h.wikiFiles();
const frontOf = (name: string) => parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(readFileSync(join(wikiDir, name), "utf8"))?.[1] ?? "") as Record<string, unknown>;
const shipped = async (id?: string) =>
  (await store.events(id ? { issueId: id } : undefined)).filter(
    (e): e is Extract<DissentEvent, { type: "ShippedWithKnownGap" }> & { seq: number } => e.type === "ShippedWithKnownGap",
  );
const claim = (c: Concern): ConcernResolution => ({
  concern_id: c.id,
  fingerprint: c.fingerprint,
  resolution_kind: "addressed-in-code",
  note: "the planner says it is handled",
  resolved_by: "planner",
  resolved_at: AT,
  settled: false,
});

const crit = () => concern({ severity: "CRITICAL", category: "security", concern: "Nobody checked that the upload endpoint rejects oversized payloads" });
const high = () => concern({ severity: "HIGH", category: "edge_cases", concern: "Concurrent writers to the same upload can corrupt the file" });
const med = () => concern({ severity: "MEDIUM", category: "test_strategy", concern: "No test for a flaky network during upload" });
const low = () => concern({ severity: "LOW", category: "ux", concern: "Rejection message wording" });

describe("mergeIssue", () => {
  it("records every unresolved concern in one ShippedWithKnownGap; only CRITICAL and HIGH become wiki entries", async () => {
    const gaps = [crit(), high(), med(), low()];
    const id = await issueWith(gaps);
    const r = await mergeIssue(id, 42, deps());
    expect(r.already_merged).toBe(false);
    expect(r.gaps.map((c) => c.id)).toEqual(gaps.map((c) => c.id));
    expect(r.wiki_entries).toHaveLength(2);

    const [ev, ...more] = await shipped(id);
    expect(more).toEqual([]);
    expect(ev).toMatchObject({ issue_id: id, pr: 42 });
    expect(ev?.concerns).toEqual(gaps);
    expect(ev?.wiki_entries.sort()).toEqual(r.wiki_entries.sort());

    const files = wikiFiles();
    expect(files.map((f) => f.replace(/\.md$/, "")).sort()).toEqual([...r.wiki_entries].sort());
    const fps = files.map((f) => frontOf(f).fingerprint).sort();
    expect(fps).toEqual([gaps[0]?.fingerprint, gaps[1]?.fingerprint].sort());
    for (const f of files) {
      expect(frontOf(f)).toMatchObject({ confidence: "low", stale: false, pr: 42, issue: id, source: "shipped-with-known-gap", created: AT, updated: AT });
    }
    expect(warnings).toEqual([]);
  });

  it("moves the issue to dissent-fixed, removes transient labels and clears the pending state", async () => {
    const id = await issueWith([crit(), med()], ["dissent-plan", "dissent-adv-plan-running", "dissent-load-bearing"]);
    const r = await mergeIssue(id, 3, deps());
    expect(r.labels).toEqual(expect.arrayContaining(["dissent-fixed", "dissent-load-bearing"]));
    expect(r.labels).not.toContain("dissent-plan");
    expect(r.labels).not.toContain("dissent-adv-plan-running");
    expect((await tracker.get(id)).labels).toEqual(r.labels);
    expect((await store.state(id)).pending_concerns).toEqual([]);
    expect((await store.plan(id))?.status).toBe("fixed");
    const label = (await store.events({ issueId: id })).filter((e) => e.type === "LabelChanged").at(-1);
    expect(label).toMatchObject({ added: ["dissent-fixed"] });
  });

  it.each([["dissent-find"], ["dissent-hitl"], ["dissent-ready"]])("an issue in %s can be merged", async (state) => {
    const id = await issueWith([high()], [state]);
    const r = await mergeIssue(id, 9, deps());
    expect(r.labels).toContain("dissent-fixed");
    expect(r.labels).not.toContain(state);
  });

  it("no surviving concern: no wiki entry and no gap", async () => {
    const id = await issueWith([]);
    const r = await mergeIssue(id, 5, deps());
    expect(r).toMatchObject({ gaps: [], wiki_entries: [], already_merged: false });
    expect(wikiFiles()).toEqual([]);
    for (const e of await shipped(id)) expect(e.concerns).toEqual([]);
    expect(r.labels).toContain("dissent-fixed");
  });

  it("a concern resolved (by a producer or by hand) is not a gap", async () => {
    const [a, b, c] = [crit(), high(), med()];
    const id = await issueWith([a, b, c] as Concern[]);
    await store.append([
      {
        type: "ConcernAddressed",
        issue_id: id,
        resolution: {
          concern_id: a.id,
          fingerprint: a.fingerprint,
          resolution_kind: "addressed-in-code",
          note: "limit enforced",
          resolved_by: "planner",
          resolved_at: AT,
        },
      },
    ]);
    await resolveConcern(id, b.id, "deferred", "tracked in #99", { store, now: () => AT });
    const r = await mergeIssue(id, 11, deps());
    expect(r.gaps.map((g) => g.id)).toEqual([c.id]);
    expect(r.wiki_entries).toEqual([]);
    expect(wikiFiles()).toEqual([]);
    expect((await shipped(id))[0]?.concerns.map((g) => g.id)).toEqual([c.id]);
  });

  // r2 (docs/issue.md): a producer's resolution of a CRITICAL or HIGH concern is a claim (settled: false);
  // unconfirmed by the reviewer or a person, the concern is still pending, so it ships as a known gap.
  it("a producer's unconfirmed claim on a CRITICAL concern does not resolve it: it ships as a gap and gets its wiki entry", async () => {
    const a = crit();
    const id = await issueWith([a]);
    await store.append([{ type: "ConcernAddressed", issue_id: id, resolution: claim(a) }]);
    expect((await store.state(id)).addressed_concerns).toEqual([claim(a)]);
    const r = await mergeIssue(id, 12, deps());
    expect(r.gaps.map((g) => g.id)).toEqual([a.id]);
    expect(r.wiki_entries).toHaveLength(1);
    expect(wikiFiles()).toEqual([`${r.wiki_entries[0]}.md`]);
    expect((await shipped(id))[0]?.concerns.map((g) => g.id)).toEqual([a.id]);
  });

  it("is idempotent: a second merge adds no event, no file, and changes no byte", async () => {
    const id = await issueWith([crit(), high(), low()]);
    await mergeIssue(id, 42, deps());
    const before = await store.events();
    const files = wikiFiles();
    const bytes = files.map((f) => readFileSync(join(wikiDir, f)));
    for (const pr of [42, 43]) {
      const again = await mergeIssue(id, pr, deps({ now: () => "2030-01-01T00:00:00.000Z" }));
      expect(again).toMatchObject({ already_merged: true, gaps: [], wiki_entries: [] });
    }
    expect(await store.events()).toEqual(before);
    expect(wikiFiles()).toEqual(files);
    for (const [i, f] of files.entries()) expect(readFileSync(join(wikiDir, f)).equals(bytes[i] as Buffer)).toBe(true);
  });

  it("the same gap (same fingerprint, reworded) shipped by another issue updates the one entry with both PRs", async () => {
    const first = crit();
    // r2 (docs/library.md): the fingerprint is the concern text alone, so another critic's category does not matter.
    const reworded = concern({ severity: "HIGH", category: "edge_cases", concern: "nobody checked the upload endpoints reject an oversized payload" });
    expect(reworded.fingerprint).toBe(first.fingerprint);
    const a = await issueWith([first]);
    const b = await issueWith([reworded]);
    const ra = await mergeIssue(a, 101, deps());
    const rb = await mergeIssue(b, 102, deps({ now: () => "2025-06-01T00:00:00.000Z" }));
    expect(rb.wiki_entries).toEqual(ra.wiki_entries);
    expect(wikiFiles()).toHaveLength(1);
    const fm = frontOf(wikiFiles()[0] ?? "");
    expect(fm).toMatchObject({ prs: [101, 102], issues: [a, b], created: AT, updated: "2025-06-01T00:00:00.000Z" });
  });

  it("a merge that stopped after writing its wiki file is completed by running it again, without a duplicate", async () => {
    const { upsertGap } = await import("../../src/carryover/wiki.js");
    const gap = crit();
    const id = await issueWith([gap]);
    // As if an earlier `issue merged` crashed between the file and the event.
    const { id: entry } = await upsertGap(store.wiki, [], gap, 42, id, AT);
    const bytes = readFileSync(join(wikiDir, `${entry}.md`));
    const r = await mergeIssue(id, 42, deps({ now: () => "2025-09-09T00:00:00.000Z" }));
    expect(r.wiki_entries).toEqual([entry]);
    expect(wikiFiles()).toEqual([`${entry}.md`]);
    expect(readFileSync(join(wikiDir, `${entry}.md`)).equals(bytes)).toBe(true);
    expect(await shipped(id)).toHaveLength(1);
  });

  it("an entry a person renamed is still found by its fingerprint and updated in place", async () => {
    const { renameSync } = await import("node:fs");
    const first = crit();
    const a = await issueWith([first]);
    const [entry] = (await mergeIssue(a, 1, deps())).wiki_entries;
    renameSync(join(wikiDir, `${entry}.md`), join(wikiDir, "upload-size-limit.md"));
    const b = await issueWith([concern({ ...first, id: "PLAN-BUILDER-077" })]);
    const r = await mergeIssue(b, 2, deps());
    expect(r.wiki_entries).toEqual(["upload-size-limit"]);
    expect(wikiFiles()).toEqual(["upload-size-limit.md"]);
    expect(frontOf("upload-size-limit.md").prs).toEqual([1, 2]);
  });

  it("a malformed wiki file is warned about once, by name, and does not stop the merge", async () => {
    mkdirSync(wikiDir, { recursive: true });
    writeFileSync(join(wikiDir, "broken.md"), "no front matter\n");
    const id = await issueWith([crit(), high()]);
    const r = await mergeIssue(id, 7, deps());
    expect(r.wiki_entries).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("broken.md");
    expect(readFileSync(join(wikiDir, "broken.md"), "utf8")).toBe("no front matter\n");
  });

  it.each([0, -1, 1.5, Number.NaN])("rejects --pr %s as a usage error, changing nothing", async (pr) => {
    const id = await issueWith([crit()]);
    const before = await store.events();
    const err = await mergeIssue(id, pr, deps()).catch((e: unknown) => e);
    expect(UsageError.isInstance(err)).toBe(true);
    expect(exitCodeOf(err)).toBe(2);
    expect(await store.events()).toEqual(before);
    expect(wikiFiles()).toEqual([]);
  });
});

describe("resolveConcern (dissent issue resolve)", () => {
  it("records a human ConcernResolution as a ConcernAddressed event and takes the concern off the pending list", async () => {
    const c = high();
    const id = await issueWith([c, med()]);
    const r = await resolveConcern(id, c.id, "addressed-in-test", "test_concurrent_writers", { store, now: () => AT });
    expect(r).toEqual({
      concern_id: c.id,
      fingerprint: c.fingerprint,
      resolution_kind: "addressed-in-test",
      note: "test_concurrent_writers",
      resolved_by: "human",
      resolved_at: AT,
    });
    const ev = (await store.events({ issueId: id })).filter((e) => e.type === "ConcernAddressed");
    expect(ev).toEqual([expect.objectContaining({ issue_id: id, resolution: r })]);
    const state = await store.state(id);
    expect(state.pending_concerns.map((p) => p.id)).not.toContain(c.id);
    expect(state.addressed_concerns).toEqual([r]);
    expect(state).toEqual(foldState(await store.events({ issueId: id })));
  });

  // r2 (docs/issue.md): a claim leaves the concern pending until "a person resolves it (dissent issue resolve)".
  it("a concern with only a producer's claim (settled: false) can still be resolved by a person", async () => {
    const c = crit();
    const id = await issueWith([c]);
    await store.append([{ type: "ConcernAddressed", issue_id: id, resolution: claim(c) }]);
    const r = await resolveConcern(id, c.id, "addressed-in-code", "checked the limit by hand", { store, now: () => AT });
    const state = await store.state(id);
    expect(state.pending_concerns).toEqual([]);
    expect(state.addressed_concerns).toEqual([claim(c), r]);
    await expect(resolveConcern(id, c.id, "ignored", "", { store })).rejects.toThrow(/already resolved/);
  });

  it("an unknown concern is a usage error naming it; a resolved one says so", async () => {
    const c = high();
    const id = await issueWith([c]);
    const opts = { store };
    const unknown = await resolveConcern(id, "PLAN-NOBODY-999", "deferred", "", opts).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(UsageError.isInstance(unknown)).toBe(true);
    expect((unknown as Error).message).toContain("PLAN-NOBODY-999");

    await resolveConcern(id, c.id, "deferred", "", opts);
    const count = (await store.events()).length;
    const again = await resolveConcern(id, c.id, "ignored", "", opts).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(UsageError.isInstance(again)).toBe(true);
    expect((again as Error).message).toMatch(/already resolved/);
    expect(await store.events()).toHaveLength(count);
  });
});
