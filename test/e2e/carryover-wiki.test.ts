/**
 * Issue #5 end to end: the wiki that feeds the next issue. Relevant entries reach a later
 * issue's assumption_surfacer (and its ModelCall event), unrelated issues get none, stale
 * entries are never injected, hand edits are respected, malformed files never crash.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  bodyOf,
  findings,
  firstUser,
  frontMatter,
  issueOf,
  pipelineWorld,
  type Event,
  type FindingSpec,
  type PipelineWorld,
} from "../carryover/pipeline-world.js";

const CRIT: FindingSpec = { severity: "CRITICAL", category: "security", concern: "Nobody checked that the upload endpoint rejects oversized payloads" };
const HIGH: FindingSpec = { severity: "HIGH", category: "edge_cases", concern: "Acceptance criteria never mention concurrent writers to the same upload" };

const KNOWN_GAPS = '<data kind="known_gaps"';

// Each test spawns the CLI several times and runs whole planning cycles; give a loaded machine room.
vi.setConfig({ testTimeout: 120_000 });

let w: PipelineWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const firstIssueOnly = (list: FindingSpec[]) => (req: Parameters<typeof issueOf>[0]) => findings(issueOf(req) === "1" ? list : []);

/** Issue 1 ships a CRITICAL (from a discovery critic, also raised for `critFor`) and a HIGH (spec judge) gap as PR #42. */
async function shippedWorld(critFor: ReadonlySet<string> = new Set(["1"])): Promise<{ w: PipelineWorld; crit: string; high: string }> {
  const world = await pipelineWorld({
    "discovery.problem_sharpener": (req) => findings(critFor.has(issueOf(req) ?? "") ? [CRIT] : []),
    "spec.judge": firstIssueOnly([HIGH]),
  });
  w = world;
  const id = await world.newIssue("Accept file uploads on the profile page", "Users attach a file of up to 10 MB through the upload endpoint.", [
    "dissent-load-bearing",
  ]);
  expect(id).toBe("1");
  await world.plan(id);
  const r = await world.run(["issue", "merged", id, "--pr", "42", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  const files = world.wikiFiles();
  expect(files).toHaveLength(2);
  const idOf = (concern: string) => (files.find((f) => world.wikiText(f).includes(concern)) ?? "").replace(/\.md$/, "");
  const crit = idOf(CRIT.concern);
  const high = idOf(HIGH.concern);
  expect(crit).not.toBe("");
  expect(high).not.toBe("");
  return { w: world, crit, high };
}

const surfacerRequests = (w: PipelineWorld, issue: string) => w.server.requests.filter((r) => r.body.model === "assumption_surfacer" && issueOf(r) === issue);
const surfacerCalls = async (w: PipelineWorld, issue: string) =>
  (await w.events(issue)).filter((e) => e.type === "ModelCall" && e.role === "assumption_surfacer") as (Event & { wiki_entries?: string[] })[];

const RELATED = {
  title: "Resumable uploads",
  body: "The upload endpoint should accept oversized payloads in chunks, and cope with concurrent writers to the same upload.",
};
const UNRELATED = { title: "Dark mode for the settings page", body: "People want a darker colour scheme at night." };

describe("feeding the wiki back to the assumption surfacer", () => {
  it("a related later issue is told about the gap (request and ModelCall event); an unrelated one is not", async () => {
    const { w, crit, high } = await shippedWorld();
    const related = await w.newIssue(RELATED.title, RELATED.body, ["dissent-load-bearing"]);
    const unrelated = await w.newIssue(UNRELATED.title, UNRELATED.body, ["dissent-load-bearing"]);
    await w.plan(related);
    await w.plan(unrelated);

    // Related: every surfacer request (discover and plan stages) carries the entries.
    const rel = surfacerRequests(w, related);
    expect(rel.length).toBeGreaterThanOrEqual(2);
    for (const req of rel) {
      const text = firstUser(req);
      expect(text).toContain(KNOWN_GAPS);
      expect(text).toContain(crit);
      expect(text).toContain(CRIT.concern);
      expect(text).toContain(high);
    }
    const relCalls = await surfacerCalls(w, related);
    expect(relCalls.length).toBeGreaterThanOrEqual(2);
    for (const c of relCalls) expect(c.wiki_entries).toEqual(expect.arrayContaining([crit, high]));

    // Only the surfacer is given known gaps.
    const others = w.server.requests.filter((r) => issueOf(r) === related && r.body.model !== "assumption_surfacer");
    expect(others.length).toBeGreaterThan(0);
    for (const req of others) expect(firstUser(req)).not.toContain(KNOWN_GAPS);

    // Unrelated: nothing injected, nothing recorded.
    const unrel = surfacerRequests(w, unrelated);
    expect(unrel.length).toBeGreaterThanOrEqual(2);
    for (const req of unrel) {
      const text = firstUser(req);
      expect(text).not.toContain(KNOWN_GAPS);
      expect(text).not.toContain(crit);
      expect(text).not.toContain(CRIT.concern);
    }
    const unrelCalls = await surfacerCalls(w, unrelated);
    expect(unrelCalls.length).toBeGreaterThanOrEqual(2);
    for (const c of unrelCalls) expect(c.wiki_entries ?? []).toEqual([]);
  });

  it("an unrelated issue that merely uses words of the entry template (severity, issue, merge, pipeline) is not told", async () => {
    const { w, crit, high } = await shippedWorld();
    const other = await w.newIssue(
      "Add a severity filter to the issue list",
      "Reviewers want to see only the issues that still block a merge in the pipeline view.",
      ["dissent-load-bearing"],
    );
    await w.plan(other);
    const reqs = surfacerRequests(w, other);
    expect(reqs.length).toBeGreaterThan(0);
    for (const req of reqs) {
      expect(firstUser(req)).not.toContain(crit);
      expect(firstUser(req)).not.toContain(high);
    }
    for (const c of await surfacerCalls(w, other)) expect(c.wiki_entries ?? []).toEqual([]);
  });

  it("config wiki.max_entries bounds how many entries are injected", async () => {
    const { w, crit, high } = await shippedWorld();
    writeFileSync(join(w.dir, "dissent.config.yaml"), `${readFileSync(join(w.dir, "dissent.config.yaml"), "utf8")}wiki: { max_entries: 1 }\n`);
    const related = await w.newIssue(RELATED.title, RELATED.body, ["dissent-load-bearing"]);
    await w.plan(related);
    const calls = await surfacerCalls(w, related);
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) {
      expect(c.wiki_entries).toHaveLength(1);
      expect([crit, high]).toContain(c.wiki_entries?.[0]);
    }
  });
});

describe("wiki prune", () => {
  it("--older-than DAYS marks old entries stale, and a stale entry is never injected", async () => {
    const { w, crit, high } = await shippedWorld();
    const critFile = `${crit}.md`;
    const original = w.wikiText(critFile);
    const aged = original.replace(/^updated: .*$/m, "updated: 2020-01-02T03:04:05.000Z");
    expect(aged).not.toBe(original);
    writeFileSync(join(w.wikiDir, critFile), aged);
    const highBefore = w.wikiText(`${high}.md`);

    const r = await w.run(["wiki", "prune", "--older-than", "30", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ pruned: [crit] });

    const after = w.wikiText(critFile);
    expect(frontMatter(after)).toMatchObject({ stale: true, fingerprint: frontMatter(original).fingerprint, pr: 42 });
    expect(bodyOf(after)).toBe(bodyOf(original));
    // The fresh entry is untouched, byte for byte.
    expect(w.wikiText(`${high}.md`)).toBe(highBefore);

    const list = await w.run(["wiki", "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const entries = JSON.parse(list.stdout) as { id: string; stale: boolean }[];
    expect(entries.find((e) => e.id === crit)?.stale).toBe(true);
    expect(entries.find((e) => e.id === high)?.stale).toBe(false);

    // Pruning again finds nothing new.
    const again = await w.run(["wiki", "prune", "--older-than", "30", "--json"]);
    expect(JSON.parse(again.stdout)).toEqual({ pruned: [] });

    // A related issue is told about the fresh entry only.
    const related = await w.newIssue(RELATED.title, RELATED.body, ["dissent-load-bearing"]);
    await w.plan(related);
    const reqs = surfacerRequests(w, related);
    expect(reqs.length).toBeGreaterThan(0);
    for (const req of reqs) {
      expect(firstUser(req)).toContain(high);
      expect(firstUser(req)).not.toContain(crit);
      expect(firstUser(req)).not.toContain(CRIT.concern);
    }
    for (const c of await surfacerCalls(w, related)) {
      expect(c.wiki_entries).toContain(high);
      expect(c.wiki_entries).not.toContain(crit);
    }
  });

  it("entries newer than the cutoff are left alone; a bad --older-than is a usage error", async () => {
    const { w, crit, high } = await shippedWorld();
    const before = [w.wikiText(`${crit}.md`), w.wikiText(`${high}.md`)];
    const r = await w.run(["wiki", "prune", "--older-than", "30"]);
    expect(r.code, r.stderr).toBe(0);
    expect([w.wikiText(`${crit}.md`), w.wikiText(`${high}.md`)]).toEqual(before);

    const bad = await w.run(["wiki", "prune", "--older-than", "a-month"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toMatch(/^dissent: error: .*--older-than/);
  });
});

describe("hand-edited wiki files", () => {
  it("still load, steer relevance, and keep every hand edit byte-for-byte when the same gap ships again", async () => {
    // Issues 1 and 3 raise the same CRITICAL; issue 2 raises nothing.
    const { w, crit } = await shippedWorld(new Set(["1", "3"]));
    const file = `${crit}.md`;
    const generated = w.wikiText(file);
    const fmEnd = generated.indexOf("\n---\n", 4);
    expect(fmEnd).toBeGreaterThan(0);
    const handLines = ["# reviewed by alice: still true in 2025", "owner: alice", "tags: [uploads, limits]"];
    const edited = `${generated.slice(0, fmEnd)}\n${handLines.join("\n")}${generated.slice(fmEnd)}\nAlice: this also affects the thumbnail generator, which buffers whole files.\n`;
    writeFileSync(join(w.wikiDir, file), edited);

    const list = await w.run(["wiki", "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toBe("");
    expect((JSON.parse(list.stdout) as { id: string }[]).map((e) => e.id)).toContain(crit);
    const show = await w.run(["wiki", "show", crit]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toBe(edited);

    // The edited body is what the search reads: an issue about the thumbnail generator is told.
    const thumbs = await w.newIssue("Faster thumbnail generator", "Generating previews buffers whole files in memory.", ["dissent-load-bearing"]);
    expect(thumbs).toBe("2");
    await w.plan(thumbs);
    const calls = await surfacerCalls(w, thumbs);
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) expect(c.wiki_entries).toContain(crit);

    // The same gap ships again from issue 3: the entry is updated in place, hand edits kept.
    const again = await w.newIssue("Accept banner uploads", "Banners go through the upload endpoint too.", ["dissent-load-bearing"]);
    expect(again).toBe("3");
    const planned = await w.plan(again);
    expect(planned.pending_concerns.map((c) => c.concern)).toContain(CRIT.concern);
    const m = await w.run(["issue", "merged", again, "--pr", "77"]);
    expect(m.code, m.stderr).toBe(0);
    expect(w.wikiFiles().filter((f) => w.wikiText(f).includes(CRIT.concern))).toEqual([file]);

    const updated = w.wikiText(file);
    expect(frontMatter(updated)).toMatchObject({ prs: [42, 77], issues: ["1", "3"], owner: "alice", tags: ["uploads", "limits"], stale: false });
    expect(bodyOf(updated)).toBe(bodyOf(edited));
    // Every front-matter line that was not updated is still there, verbatim and in order.
    const updatedKeys = new Set(["prs", "issues", "updated", "stale"]);
    const kept: string[] = [];
    let skipping = false;
    for (const line of edited.slice(4, edited.indexOf("\n---\n", 4)).split("\n")) {
      const key = /^([A-Za-z_][\w-]*):/.exec(line)?.[1];
      if (key !== undefined) skipping = updatedKeys.has(key);
      else if (!/^\s+-|^-/.test(line)) skipping = false;
      if (!skipping) kept.push(line);
    }
    const updatedLines = updated.slice(4, updated.indexOf("\n---\n", 4)).split("\n");
    let at = 0;
    for (const line of kept) {
      const found = updatedLines.indexOf(line, at);
      expect(found, `front-matter line lost or reordered: ${JSON.stringify(line)}\n${updated}`).toBeGreaterThanOrEqual(0);
      at = found + 1;
    }
    for (const line of handLines) expect(updatedLines).toContain(line);
  });
});

describe("malformed wiki files", () => {
  const broken = {
    "notes.md": "Just some notes somebody dropped here, no front matter.\n",
    "bad-yaml.md": "---\nfingerprint: [oops\ntitle: x\n---\n# x\n",
    "no-fingerprint.md": "---\ntitle: A hand-written page\n---\n# A hand-written page\n",
    "a-list.md": "---\n- just\n- a list\n---\nbody\n",
  };

  it("are skipped with a warning naming each one: wiki list, wiki show, issue plan and issue merged all still work", async () => {
    const { w, crit } = await shippedWorld(new Set(["1", "2"]));
    for (const [name, text] of Object.entries(broken)) writeFileSync(join(w.wikiDir, name), text);

    const list = await w.run(["wiki", "list"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(crit);
    for (const name of Object.keys(broken)) expect(list.stderr).toContain(name);
    for (const line of list.stderr.split("\n").filter(Boolean)) expect(line).toMatch(/^dissent: warning: /);
    expect(list.stderr).not.toContain("dissent: error");

    const json = await w.run(["wiki", "list", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const ids = (JSON.parse(json.stdout) as { id: string }[]).map((e) => e.id).sort();
    expect(ids).toHaveLength(2);
    expect(ids).toContain(crit);

    const show = await w.run(["wiki", "show", crit]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toBe(w.wikiText(`${crit}.md`));

    // A related issue still plans (with the good entry injected) and merges.
    const related = await w.newIssue(RELATED.title, RELATED.body, ["dissent-load-bearing"]);
    const plan = await w.run(["issue", "plan", related, "--json"]);
    expect(plan.code, plan.stderr).toBe(0);
    for (const name of Object.keys(broken)) expect(plan.stderr).toContain(name);
    for (const c of await surfacerCalls(w, related)) expect(c.wiki_entries).toContain(crit);
    const merged = await w.run(["issue", "merged", related, "--pr", "50"]);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stderr).not.toContain("dissent: error");
    expect(frontMatter(w.wikiText(`${crit}.md`)).prs).toEqual([42, 50]);
    // The malformed files are left as they were.
    for (const [name, text] of Object.entries(broken)) expect(readFileSync(join(w.wikiDir, name), "utf8")).toBe(text);
  });

  it("an unreadable *.md (an editor's dangling lock symlink, a folder) never crashes wiki list", async () => {
    const { w, crit } = await shippedWorld();
    symlinkSync("alice@laptop.12345:1700000000", join(w.wikiDir, `.#${crit}.md`));
    mkdirSync(join(w.wikiDir, "drafts.md"));
    const list = await w.run(["wiki", "list", "--json"]);
    expect(list.stderr).not.toContain("dissent: error");
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((e) => e.id)).toContain(crit);
    const related = await w.newIssue(RELATED.title, RELATED.body, ["dissent-load-bearing"]);
    const plan = await w.run(["issue", "plan", related, "--json"]);
    expect(plan.stderr).not.toContain("dissent: error");
    expect(plan.code).toBe(0);
  });
});

describe("wiki show / list", () => {
  it("show prints the entry file as written (by id or file name); --json gives its fields; an unknown entry is a one-line error", async () => {
    const { w, crit } = await shippedWorld();
    const text = w.wikiText(`${crit}.md`);
    for (const arg of [crit, `${crit}.md`]) {
      const r = await w.run(["wiki", "show", arg]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(text);
    }
    const j = await w.run(["wiki", "show", crit, "--json"]);
    expect(j.code, j.stderr).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({
      id: crit,
      confidence: "low",
      stale: false,
      prs: [42],
      issues: ["1"],
      fingerprint: frontMatter(text).fingerprint,
      severity: "CRITICAL",
    });

    const missing = await w.run(["wiki", "show", "no-such-entry"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stdout).toBe("");
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
    expect(missing.stderr).toMatch(/^dissent: error: .*no-such-entry/);
  });

  it("list shows each entry's id and title; an empty wiki says so and exits 0", async () => {
    const { w, crit, high } = await shippedWorld();
    const r = await w.run(["wiki", "list"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(crit);
    expect(r.stdout).toContain(high);
    expect(r.stdout).toContain("#42");

    const empty = await pipelineWorld();
    try {
      const e = await empty.run(["wiki", "list", "--json"]);
      expect(e.code, e.stderr).toBe(0);
      expect(JSON.parse(e.stdout)).toEqual([]);
      const plain = await empty.run(["wiki", "list"]);
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout.trim()).not.toBe("");
    } finally {
      await empty.close();
    }
  });
});
