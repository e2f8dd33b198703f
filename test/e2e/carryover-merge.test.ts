/**
 * Issue #5 end to end: `dissent issue merged` turns the concerns that survived planning into a
 * ShippedWithKnownGap event and (CRITICAL/HIGH only) wiki entries; resolutions keep a concern
 * out of it; merging is idempotent; the same gap shipped twice updates one entry.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TRANSIENT_LABELS } from "../../src/contracts/labels.js";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import {
  bodyOf,
  findings,
  frontMatter,
  pendingIdsGiven,
  pipelineWorld,
  type ConcernJson,
  type Event,
  type FindingSpec,
  type PipelineWorld,
  type RoleScript,
} from "../carryover/pipeline-world.js";

const CRIT: FindingSpec = { severity: "CRITICAL", category: "security", concern: "Nobody checked that the upload endpoint rejects oversized payloads" };
const HIGH: FindingSpec = { severity: "HIGH", category: "edge_cases", concern: "Acceptance criteria never mention concurrent writers to the same upload" };
const MED: FindingSpec = { severity: "MEDIUM", category: "test_strategy", concern: "Test plan lacks a case for a flaky network during upload" };
const LOW: FindingSpec = { severity: "LOW", category: "ux", concern: "Wording of the rejection message could be friendlier" };

const TITLE = "Accept file uploads on the profile page";
const BODY = "Users attach a file of up to 10 MB to their profile through the upload endpoint.";

/** CRITICAL every round from one discovery critic (oscillates, forwarded), HIGH every round from the spec judge, a MEDIUM and a LOW advisory. */
const GAPS_SCRIPT = {
  "discovery.problem_sharpener": findings([CRIT]),
  "spec.judge": findings([HIGH]),
  "plan.tester": findings([MED]),
  "shape.user_advocate": findings([LOW]),
};

// Each test spawns the CLI several times and runs whole planning cycles; give a loaded machine room.
vi.setConfig({ testTimeout: 120_000 });

let w: PipelineWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const ofType = (events: Event[], type: string) => events.filter((e) => e.type === type);
const bySeverity = (cs: ConcernJson[], s: string) => cs.filter((c) => c.severity === s);

async function plannedWithGaps(script: Partial<Record<string, RoleScript>> = GAPS_SCRIPT): Promise<{ w: PipelineWorld; id: string }> {
  const world = await pipelineWorld(script);
  w = world;
  const id = await world.newIssue(TITLE, BODY, ["dissent-load-bearing"]);
  const planned = await world.plan(id);
  expect(planned.status).toBe("ready");
  return { w: world, id };
}

describe("issue merged with surviving concerns", () => {
  it("emits ShippedWithKnownGap with every unresolved concern and writes one wiki entry per CRITICAL/HIGH gap", async () => {
    const { w, id } = await plannedWithGaps();
    const pending = (await w.show(id)).pending_concerns;
    expect(bySeverity(pending, "CRITICAL")).toHaveLength(1);
    expect(bySeverity(pending, "HIGH")).toHaveLength(1);
    expect(pending.length).toBeGreaterThanOrEqual(4);

    const r = await w.run(["issue", "merged", id, "--pr", "42", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { issue: string; pr: number; already_merged: boolean; gaps: ConcernJson[]; wiki_entries: string[]; labels: string[] };
    expect(out).toMatchObject({ issue: id, pr: 42, already_merged: false });

    const shipped = ofType(await w.events(id), "ShippedWithKnownGap");
    expect(shipped).toHaveLength(1);
    const ev = shipped[0] as Event & { pr: number; concerns: ConcernJson[]; wiki_entries: string[] };
    expect(ev.issue_id).toBe(id);
    expect(ev.pr).toBe(42);
    expect(ev.concerns.map((c) => c.id).sort()).toEqual(pending.map((c) => c.id).sort());
    expect(ev.concerns.map((c) => c.concern)).toEqual(expect.arrayContaining([CRIT.concern, HIGH.concern, MED.concern, LOW.concern]));

    // One file per CRITICAL/HIGH gap, none for MEDIUM/LOW.
    const files = w.wikiFiles();
    expect(files).toHaveLength(2);
    expect(ev.wiki_entries.sort()).toEqual(files.map((f) => f.replace(/\.md$/, "")).sort());
    expect(out.wiki_entries.sort()).toEqual(ev.wiki_entries.sort());
    const texts = files.map((f) => w.wikiText(f));
    const all = texts.join("\n");
    expect(all).toContain(CRIT.concern);
    expect(all).toContain(HIGH.concern);
    expect(all).not.toContain(MED.concern);
    expect(all).not.toContain(LOW.concern);

    for (const gap of [...bySeverity(pending, "CRITICAL"), ...bySeverity(pending, "HIGH")]) {
      const text = texts.find((t) => t.includes(gap.concern));
      expect(text, `no wiki file for ${gap.id}`).toBeDefined();
      const fm = frontMatter(text ?? "");
      expect(fm).toMatchObject({ confidence: "low", stale: false, pr: 42, issue: id, source: "shipped-with-known-gap", fingerprint: gap.fingerprint });
      expect(Number.isNaN(Date.parse(String(fm.created)))).toBe(false);
      expect(Number.isNaN(Date.parse(String(fm.updated)))).toBe(false);
      // Body: the concern, where it was raised, what it had to be addressed by.
      const body = bodyOf(text ?? "");
      expect(body).toContain(gap.concern);
      expect(body).toContain(gap.raised_by);
      expect(body).toContain(gap.must_address_by);
    }
  });

  it("moves the issue to dissent-fixed, drops its transient label and clears its pending state", async () => {
    w = await pipelineWorld(GAPS_SCRIPT);
    // A killed run can leave a transient label behind; merging clears it.
    const id = await w.newIssue(TITLE, BODY, ["dissent-load-bearing"]);
    await w.plan(id);
    const stuck = await w.newIssue("Leftover", "A run was killed here.", ["dissent-adv-plan-running"]);

    for (const [issue, pr] of [
      [id, "7"],
      [stuck, "8"],
    ] as const) {
      const r = await w.run(["issue", "merged", issue, "--pr", pr]);
      expect(r.code, r.stderr).toBe(0);
      const shown = await w.show(issue);
      expect(shown.labels).toContain("dissent-fixed");
      for (const l of ["dissent-find", "dissent-plan", "dissent-ready", "dissent-hitl", ...TRANSIENT_LABELS]) expect(shown.labels).not.toContain(l);
      expect(shown.status).toBe("fixed");
      expect(shown.pending_concerns).toEqual([]);
    }
    const labelEvents = ofType(await w.events(id), "LabelChanged");
    expect(labelEvents.at(-1)).toMatchObject({ added: ["dissent-fixed"] });
    expect((labelEvents.at(-1) as Event & { removed: string[] }).removed).toContain("dissent-ready");
  });

  it("plain output names the gaps and the wiki entries", async () => {
    const { w, id } = await plannedWithGaps();
    const r = await w.run(["issue", "merged", id, "--pr", "42"]);
    expect(r.code, r.stderr).toBe(0);
    for (const f of w.wikiFiles()) expect(r.stdout).toContain(f.replace(/\.md$/, ""));
    expect(r.stdout).toContain("#42");
  });
});

describe("issue merged with no surviving concern", () => {
  it("a planned issue whose councils converged: no wiki entry, no gap recorded, still dissent-fixed", async () => {
    w = await pipelineWorld();
    const id = await w.newIssue(TITLE, BODY, ["dissent-load-bearing"]);
    const planned = await w.plan(id);
    expect(planned.pending_concerns).toEqual([]);
    const r = await w.run(["issue", "merged", id, "--pr", "5", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ gaps: [], wiki_entries: [] });
    expect(w.wikiFiles()).toEqual([]);
    for (const e of ofType(await w.events(id), "ShippedWithKnownGap")) expect(e.concerns).toEqual([]);
    expect((await w.show(id)).labels).toContain("dissent-fixed");
  });

  it("an issue with only MEDIUM/LOW concerns left: they are in the event, the wiki stays empty", async () => {
    const { w, id } = await plannedWithGaps({ "plan.tester": findings([MED]), "shape.user_advocate": findings([LOW]) });
    const r = await w.run(["issue", "merged", id, "--pr", "6"]);
    expect(r.code, r.stderr).toBe(0);
    const shipped = ofType(await w.events(id), "ShippedWithKnownGap");
    expect(shipped).toHaveLength(1);
    expect((shipped[0]?.concerns as ConcernJson[]).map((c) => c.concern).sort()).toEqual([LOW.concern, MED.concern].sort());
    expect(shipped[0]?.wiki_entries).toEqual([]);
    expect(w.wikiFiles()).toEqual([]);
  });
});

describe("resolutions keep a concern out of the gaps", () => {
  /** The shape challenger raises a CRITICAL every round: it reaches the planner as a pending concern. */
  const SHAPE_CRIT: FindingSpec = { severity: "CRITICAL", category: "scope", concern: "The shape ignores uploads from the mobile app entirely" };

  it("by a producer: the planner's `addressed` item becomes a ConcernAddressed event; by hand: `issue resolve`", async () => {
    const givenToPlanner: string[][] = [];
    w = await pipelineWorld({
      "shape.challenger": findings([SHAPE_CRIT]),
      "spec.judge": findings([HIGH]),
      planner: (req) => {
        const ids = pendingIdsGiven(req);
        givenToPlanner.push(ids);
        return JSON.stringify({
          artifact: "# Plan\n\nHandle uploads from the web and the mobile app alike.\n",
          addressed: ids.map((concern_id) => ({ concern_id, resolution_kind: "addressed-in-code", note: "mobile uploads share the endpoint" })),
        });
      },
      // A producer's word on a CRITICAL is a claim: the reviewer, shown it, confirms it (docs/issue.md).
      plan_reviewer: (req) => {
        const claims = readDataBlocks(req.body.messages.map((m) => m.content).join("\n")).find((b) => b.kind === "claims");
        const ids = claims ? (JSON.parse(claims.text) as { concern_id: string }[]).map((c) => c.concern_id) : [];
        return JSON.stringify({
          findings: [],
          addressed: ids.map((concern_id) => ({ concern_id, resolution_kind: "addressed-in-code", note: "step 1 covers mobile uploads" })),
        });
      },
    });
    const id = await w.newIssue(TITLE, BODY, ["dissent-load-bearing"]);
    const planned = await w.plan(id);

    // The planner was given the shape CRITICAL and answered it.
    const shapeConcern = ofType(await w.events(id), "ConcernForwarded")
      .map((e) => e.concern as ConcernJson)
      .find((c) => c.concern === SHAPE_CRIT.concern);
    expect(shapeConcern).toBeDefined();
    expect(givenToPlanner.flat()).toContain(shapeConcern?.id);
    expect(planned.pending_concerns.map((c) => c.concern)).not.toContain(SHAPE_CRIT.concern);
    const byPlanner = ofType(await w.events(id), "ConcernAddressed").map((e) => e.resolution as Record<string, unknown>);
    expect(byPlanner).toContainEqual(
      expect.objectContaining({
        concern_id: shapeConcern?.id,
        resolution_kind: "addressed-in-code",
        resolved_by: "planner",
        fingerprint: shapeConcern?.fingerprint,
        note: "mobile uploads share the endpoint",
        settled: false,
      }),
    );
    expect(byPlanner).toContainEqual(expect.objectContaining({ concern_id: shapeConcern?.id, resolved_by: "plan_reviewer" }));

    // The spec judge's HIGH is still pending: a person defers it.
    const high = planned.pending_concerns.find((c) => c.concern === HIGH.concern);
    expect(high).toBeDefined();
    const r = await w.run(["issue", "resolve", id, high?.id ?? "", "--kind", "deferred", "--note", "tracked in #99"]);
    expect(r.code, r.stderr).toBe(0);
    const shown = await w.show(id);
    expect(shown.pending_concerns.map((c) => c.id)).not.toContain(high?.id);
    expect(shown.addressed_concerns).toContainEqual(
      expect.objectContaining({ concern_id: high?.id, resolution_kind: "deferred", note: "tracked in #99", resolved_by: "human" }),
    );
    const byHand = ofType(await w.events(id), "ConcernAddressed").map((e) => e.resolution as Record<string, unknown>);
    expect(byHand).toContainEqual(
      expect.objectContaining({ concern_id: high?.id, resolution_kind: "deferred", note: "tracked in #99", fingerprint: high?.fingerprint }),
    );

    // Neither is a gap at merge.
    const m = await w.run(["issue", "merged", id, "--pr", "12", "--json"]);
    expect(m.code, m.stderr).toBe(0);
    const gaps = (JSON.parse(m.stdout) as { gaps: ConcernJson[] }).gaps.map((c) => c.concern);
    expect(gaps).not.toContain(SHAPE_CRIT.concern);
    expect(gaps).not.toContain(HIGH.concern);
    for (const e of ofType(await w.events(id), "ShippedWithKnownGap")) {
      const texts = (e.concerns as ConcernJson[]).map((c) => c.concern);
      expect(texts).not.toContain(SHAPE_CRIT.concern);
      expect(texts).not.toContain(HIGH.concern);
    }
    expect(w.wikiFiles()).toEqual([]);
  });

  it("by the plan reviewer: its `addressed` items resolve pending concerns; an id it was never given is ignored", async () => {
    const givenToReviewer: string[][] = [];
    w = await pipelineWorld({
      "spec.judge": findings([HIGH]),
      "plan.tester": findings([MED]),
      plan_reviewer: (req) => {
        const ids = pendingIdsGiven(req);
        givenToReviewer.push(ids);
        return JSON.stringify({
          findings: [],
          addressed: [
            ...ids.map((concern_id) => ({ concern_id, resolution_kind: "Trivial", note: "the plan already covers it" })),
            { concern_id: "PLAN-GHOST-999", resolution_kind: "ignored", note: "not a real concern" },
          ],
        });
      },
    });
    const id = await w.newIssue(TITLE, BODY, ["dissent-load-bearing"]);
    const planned = await w.plan(id);
    expect(givenToReviewer.flat().length).toBeGreaterThanOrEqual(2);
    expect(planned.pending_concerns).toEqual([]);
    const resolutions = ofType(await w.events(id), "ConcernAddressed").map((e) => e.resolution as Record<string, unknown>);
    expect(resolutions.map((r) => r.concern_id).sort()).toEqual([...new Set(givenToReviewer.flat())].sort());
    for (const r of resolutions) expect(r).toMatchObject({ resolution_kind: "trivial", resolved_by: "plan_reviewer", note: "the plan already covers it" });
    expect(resolutions.map((r) => r.concern_id)).not.toContain("PLAN-GHOST-999");

    const m = await w.run(["issue", "merged", id, "--pr", "13", "--json"]);
    expect(m.code, m.stderr).toBe(0);
    expect(JSON.parse(m.stdout)).toMatchObject({ gaps: [], wiki_entries: [] });
    expect(w.wikiFiles()).toEqual([]);
  });

  it("issue resolve --json prints the resolution; resolving it again is a usage error", async () => {
    const { w, id } = await plannedWithGaps({ "spec.judge": findings([HIGH]) });
    const high = (await w.show(id)).pending_concerns.find((c) => c.concern === HIGH.concern);
    const r = await w.run(["issue", "resolve", id, high?.id ?? "", "--kind", "addressed-in-test", "--note", "test_concurrent_writers", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      concern_id: high?.id,
      resolution_kind: "addressed-in-test",
      note: "test_concurrent_writers",
      fingerprint: high?.fingerprint,
    });
    const again = await w.run(["issue", "resolve", id, high?.id ?? "", "--kind", "ignored"]);
    expect(again.code).toBe(2);
    expect(again.stderr.trim().split("\n")).toHaveLength(1);
    expect(again.stderr).toMatch(/^dissent: error: .*already resolved/);
  });
});

describe("idempotent merge", () => {
  it("merging twice adds no event, no file, and leaves every file byte-for-byte", async () => {
    const { w, id } = await plannedWithGaps();
    const first = await w.run(["issue", "merged", id, "--pr", "42"]);
    expect(first.code, first.stderr).toBe(0);
    const events = await w.events();
    const files = w.wikiFiles();
    expect(files.length).toBe(2);
    const bytes = files.map((f) => readFileSync(join(w.wikiDir, f)));

    const second = await w.run(["issue", "merged", id, "--pr", "42", "--json"]);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ already_merged: true, wiki_entries: [] });
    // And a second merge naming another PR adds nothing either.
    const third = await w.run(["issue", "merged", id, "--pr", "43"]);
    expect(third.code, third.stderr).toBe(0);

    expect(await w.events()).toEqual(events);
    expect(w.wikiFiles()).toEqual(files);
    for (const [i, f] of files.entries()) expect(readFileSync(join(w.wikiDir, f)).equals(bytes[i] as Buffer), f).toBe(true);
  });
});

describe("the same gap shipped by two issues", () => {
  it("updates one entry listing both PRs (and both issues) instead of duplicating it", async () => {
    w = await pipelineWorld({ "discovery.problem_sharpener": findings([CRIT]) });
    const a = await w.newIssue(TITLE, BODY, ["dissent-load-bearing"]);
    const b = await w.newIssue("Accept avatar uploads", "Avatars go through the same upload endpoint, up to 2 MB.", ["dissent-load-bearing"]);
    const pa = await w.plan(a);
    const pb = await w.plan(b);
    const fa = pa.pending_concerns.find((c) => c.concern === CRIT.concern)?.fingerprint;
    expect(fa).toBeDefined();
    expect(pb.pending_concerns.find((c) => c.concern === CRIT.concern)?.fingerprint).toBe(fa);

    expect((await w.run(["issue", "merged", a, "--pr", "101"])).code).toBe(0);
    const [file] = w.wikiFiles();
    expect(w.wikiFiles()).toHaveLength(1);
    const before = w.wikiText(file ?? "");
    expect((await w.run(["issue", "merged", b, "--pr", "102"])).code).toBe(0);

    expect(w.wikiFiles()).toEqual([file]);
    const after = w.wikiText(file ?? "");
    const fm = frontMatter(after);
    expect(fm.fingerprint).toBe(fa);
    expect(fm.prs).toEqual([101, 102]);
    expect(fm.issues).toEqual([a, b]);
    expect(fm).toMatchObject({ confidence: "low", stale: false, source: "shipped-with-known-gap" });
    // The body written by the first merge is left alone.
    expect(bodyOf(after)).toBe(bodyOf(before));

    const list = await w.run(["wiki", "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const entries = JSON.parse(list.stdout) as { id: string; prs: number[]; issues: string[] }[];
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ id: file?.replace(/\.md$/, ""), prs: [101, 102], issues: [a, b] });
    // Both merges name the one entry in their events.
    const shipped = ofType(await w.events(), "ShippedWithKnownGap");
    expect(shipped.map((e) => e.wiki_entries)).toEqual([[entries[0]?.id], [entries[0]?.id]]);
  });
});

describe("bad input: one-line errors, exit 2", () => {
  const oneLine = (stderr: string) => {
    const lines = stderr.split("\n").filter((l) => l !== "");
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^dissent: error: /);
    return lines[0] ?? "";
  };

  it("issue merged --pr abc / --pr 0 / --pr -3 / --pr 1.5", async () => {
    w = await pipelineWorld();
    const id = await w.newIssue(TITLE, BODY);
    for (const pr of ["abc", "0", "1.5", "12abc"]) {
      const r = await w.run(["issue", "merged", id, "--pr", pr]);
      expect(r.code, `--pr ${pr}`).toBe(2);
      expect(oneLine(r.stderr)).toContain("--pr");
      expect(r.stdout).toBe("");
    }
    const neg = await w.run(["issue", "merged", id, "--pr=-3"]);
    expect(neg.code).toBe(2);
    oneLine(neg.stderr);
    // Nothing happened to the issue.
    expect((await w.show(id)).labels).not.toContain("dissent-fixed");
    expect(ofType(await w.events(id), "ShippedWithKnownGap")).toEqual([]);
  });

  it("issue merged without --pr", async () => {
    w = await pipelineWorld();
    const id = await w.newIssue(TITLE, BODY);
    const r = await w.run(["issue", "merged", id]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toContain("--pr");
  });

  it("issue resolve with an unknown concern, or a bad --kind", async () => {
    const { w, id } = await plannedWithGaps({ "spec.judge": findings([HIGH]) });
    const high = (await w.show(id)).pending_concerns.find((c) => c.concern === HIGH.concern);
    expect(high).toBeDefined();

    const unknown = await w.run(["issue", "resolve", id, "PLAN-NOBODY-999", "--kind", "deferred", "--note", "x"]);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown.stderr)).toContain("PLAN-NOBODY-999");

    const kind = await w.run(["issue", "resolve", id, high?.id ?? "", "--kind", "fixed-it", "--note", "x"]);
    expect(kind.code).toBe(2);
    expect(oneLine(kind.stderr)).toContain("--kind");

    // Neither recorded anything.
    expect(ofType(await w.events(id), "ConcernAddressed")).toEqual([]);
    expect((await w.show(id)).pending_concerns.map((c) => c.id)).toContain(high?.id);
  });
});
