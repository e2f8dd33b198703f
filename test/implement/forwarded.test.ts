/**
 * Forwarded concerns settled by the implementation's review (docs/implement.md "Forwarded concerns",
 * ADR-039): how review.acceptance's concern verdicts are read, the rule that an `addressed` counts
 * only when its quote is in the diff, the events the settlement records, the pull request's lines,
 * and the review stage asking and settling on the final attempt.
 */
import { describe, expect, it } from "vitest";
import { callBudget } from "../../src/adversarial/budget.js";
import type { Concern, StageRun } from "../../src/contracts/concern.js";
import type { CommandRun, DissentEvent, NewEvent } from "../../src/contracts/events.js";
import { parseAcceptance, readAcceptanceReply, settle, settlementEvents, type Settlement } from "../../src/implement/acceptance.js";
import type { DiffArtifact } from "../../src/implement/artifact.js";
import { renderPrBody } from "../../src/implement/pr-body.js";
import { reviewImplementation } from "../../src/implement/review-stage.js";
import type { CallDoor } from "../../src/models/call.js";
import { carryEvents } from "../../src/pipeline/resolutions.js";
import { Meter } from "../../src/pipeline/meter.js";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { foldState } from "../../src/store/state.js";

const run = (o: Partial<CommandRun> = {}): CommandRun => ({
  exit_code: 0,
  signal: null,
  timed_out: false,
  duration_ms: 900,
  output_tail: "sum: 3 tests passed",
  output_bytes: 20,
  ...o,
});

/** A diff that adds the negatives test a concern asked for (test.js) beside the sum itself (src/sum.js). */
const DIFF = [
  "diff --git a/src/sum.js b/src/sum.js",
  "--- a/src/sum.js",
  "+++ b/src/sum.js",
  "@@ -1,3 +1,3 @@",
  " export function sum(a, b) {",
  '-  throw new Error("not implemented");',
  "+  return a + b;",
  " }",
  "diff --git a/test.js b/test.js",
  "--- a/test.js",
  "+++ b/test.js",
  "@@ -3,4 +3,6 @@",
  " assert.equal(sum(2, 3), 5);",
  "+assert.equal(sum(-2, -3), -5);",
  "+assert.equal(sum(0, 4), 4);",
  '-console.log("sum: 1 test passed");',
  '+console.log("sum: 3 tests passed");',
  "",
].join("\n");

const artifact = (o: Partial<DiffArtifact> = {}): DiffArtifact => ({
  attempt: 1,
  outcome: "tested",
  commit: "abc",
  diff: DIFF,
  truncated: false,
  stats: { files: 2, insertions: 4, deletions: 2 },
  agent: run({ output_tail: "" }),
  testCommand: "node test.js",
  test: run(),
  ...o,
});

const concern = (id: string, text: string, o: Partial<Concern> = {}): Concern => ({
  id,
  phase: "spec",
  stage: "spec_judge",
  raised_by: "spec.judge",
  severity: "HIGH",
  category: "test_gap",
  concern: text,
  evidence: "sum(2, 3) returns 5.",
  must_address_by: "implement",
  human_required: false,
  fingerprint: `fp-${id}`,
  raised_at: "2026-01-01T00:00:00Z",
  ...o,
});
const NEG = concern("SPEC-JUDGE-001", "No criterion checks sum with negative numbers or zero");
const TYPES = concern("SPEC-JUDGE-002", "Nothing says what sum does with arguments that are not numbers", { category: "edge_cases" });
const tracked = [NEG, TYPES];

describe("review.acceptance's verdicts on forwarded concerns are read leniently", () => {
  it("reads the concerns beside the criteria, in any case and spelling of the verdict, by id or concern_id, a number as an id", () => {
    const r = readAcceptanceReply({
      criteria: [{ criterion: "sum(2, 3) returns 5", evidence: "return a + b;", verdict: "met" }],
      concerns: [
        { id: "SPEC-JUDGE-001", evidence: "assert.equal(sum(-2, -3), -5);", verdict: "Addressed" },
        { concern_id: "SPEC-JUDGE-002", verdict: "Not addressed", reason: "nothing checks the types" },
        { id: 7, verdict: "CANNOT-TELL" },
        { id: "SPEC-JUDGE-003", verdict: "NOT_ADDRESSED" },
      ],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.criteria.map((c) => c.verdict)).toEqual(["met"]);
    expect(r.value.concerns?.map((c) => [c.id, c.verdict])).toEqual([
      ["SPEC-JUDGE-001", "addressed"],
      ["SPEC-JUDGE-002", "not_addressed"],
      ["7", "cannot_tell"],
      ["SPEC-JUDGE-003", "not_addressed"],
    ]);
  });

  it("a bare list holds the criteria, and the concerns where its items name one; an object with the concerns alone (no criteria) is a reply", () => {
    const mixed = readAcceptanceReply([
      { criterion: "sum(2, 3) returns 5", verdict: "met" },
      { id: "SPEC-JUDGE-001", evidence: "assert.equal(sum(-2, -3), -5);", verdict: "addressed" },
    ]);
    expect(mixed.ok && [mixed.value.criteria.length, mixed.value.concerns?.map((c) => c.id)]).toEqual([1, ["SPEC-JUDGE-001"]]);
    const alone = readAcceptanceReply({ concerns: [{ id: "SPEC-JUDGE-002", verdict: "not addressed" }] });
    expect(alone.ok && alone.value).toEqual({ criteria: [], concerns: [{ id: "SPEC-JUDGE-002", verdict: "not_addressed" }] });
  });

  it("an item that is not a verdict is dropped and counted; a reply with neither list is no reply", () => {
    const r = readAcceptanceReply({
      criteria: [],
      concerns: [
        { id: "SPEC-JUDGE-001", verdict: "fixed, probably" },
        { id: "SPEC-JUDGE-002", verdict: "addressed" },
      ],
    });
    expect(r.ok && [r.invalid, r.value.concerns?.length]).toEqual([1, 1]);
    expect(readAcceptanceReply({ findings: [] }).ok).toBe(false);
  });

  it("from a fenced reply with prose around it; the tracked concerns echoed back from the request are not the reply", () => {
    const brief = JSON.stringify([{ id: "SPEC-JUDGE-001", severity: "HIGH", concern: NEG.concern }]);
    const reply = `The concerns first:\n${brief}\n\nMy verdicts:\n\`\`\`json\n{"criteria": [], "concerns": [{"id": "spec-judge-001", "evidence": "assert.equal(sum(-2, -3), -5);", "verdict": "Addressed", "reason": "a test of negatives"}]}\n\`\`\``;
    const parsed = parseAcceptance(reply, [brief]);
    expect(parsed.ok && parsed.value.concerns?.map((c) => c.verdict)).toEqual(["addressed"]);
  });
});

describe("a forwarded concern is addressed only with its quote in the diff", () => {
  it("a near-verbatim quote of a diff line (case, its + marker, curly quotes) grounds: addressed, in the file it quotes", () => {
    const [neg, types] = settle(
      tracked,
      [
        { id: "SPEC-JUDGE-001", evidence: "+Assert.equal(sum(-2, -3), -5);", verdict: "addressed" },
        { id: "SPEC-JUDGE-002", evidence: "console.log(“sum: 3 tests passed”);", verdict: "addressed" },
      ],
      DIFF,
    );
    expect(neg).toMatchObject({ verdict: "addressed", file: "test.js", evidence: "+Assert.equal(sum(-2, -3), -5);" });
    expect(types).toMatchObject({ verdict: "addressed", file: "test.js" });
  });

  it("a quote over two lines of a hunk, or of the code as the change leaves it, grounds; one of the code's file is addressed in that file", () => {
    const [neg, types] = settle(
      tracked,
      [
        { id: "SPEC-JUDGE-001", evidence: "assert.equal(sum(-2, -3), -5); assert.equal(sum(0, 4), 4);", verdict: "addressed" },
        // The code as it is after the change: the hunk's new side, its removed line left out.
        { id: "SPEC-JUDGE-002", evidence: "export function sum(a, b) { return a + b;", verdict: "addressed" },
      ],
      DIFF,
    );
    expect(neg).toMatchObject({ verdict: "addressed", file: "test.js" });
    expect(types).toMatchObject({ verdict: "addressed", file: "src/sum.js" });
  });

  it("an addressed with no quote, a quote not in the diff (the test output, the plan, words of its own) or too short counts as cannot_tell", () => {
    const out = settle(
      [NEG, TYPES, concern("SPEC-JUDGE-003", "a"), concern("SPEC-JUDGE-004", "b")],
      [
        { id: "SPEC-JUDGE-001", verdict: "addressed", reason: "the tests pass" },
        { id: "SPEC-JUDGE-002", evidence: "sum: 3 tests passed", verdict: "addressed" },
        { id: "SPEC-JUDGE-003", evidence: "sum now rejects strings with a TypeError", verdict: "addressed" },
        { id: "SPEC-JUDGE-004", evidence: "sum", verdict: "addressed" },
      ],
      artifact().diff.replace('+console.log("sum: 3 tests passed");', "+console.log('done');"),
    );
    expect(out.map((s) => [s.verdict, s.ungrounded])).toEqual([
      ["cannot_tell", true],
      ["cannot_tell", true],
      ["cannot_tell", true],
      ["cannot_tell", true],
    ]);
  });

  it("not_addressed and cannot_tell stand as said; a concern the reply leaves out is cannot_tell; a renumbered one is matched by its place", () => {
    const out = settle(
      [...tracked, concern("SPEC-JUDGE-003", "c")],
      [
        { id: "SPEC-JUDGE-002", verdict: "not_addressed", reason: "no type check" },
        { id: "1", evidence: "assert.equal(sum(-2, -3), -5);", verdict: "addressed" },
      ],
      DIFF,
    );
    expect(out.map((s) => [s.concern.id, s.verdict])).toEqual([
      ["SPEC-JUDGE-001", "addressed"],
      ["SPEC-JUDGE-002", "not_addressed"],
      ["SPEC-JUDGE-003", "cannot_tell"],
    ]);
  });
});

describe("what a settlement records", () => {
  const settled: Settlement[] = [
    { concern: NEG, verdict: "addressed", evidence: "assert.equal(sum(-2, -3), -5);", reason: "a test of negatives", file: "test.js" },
    { concern: TYPES, verdict: "not_addressed", reason: "no type check" },
    { concern: concern("SPEC-JUDGE-003", "c"), verdict: "cannot_tell" },
    { concern: concern("SPEC-JUDGE-004", "d"), verdict: "addressed", evidence: "return a + b;", file: "src/sum.js" },
  ];
  const now = () => "2026-02-03T04:05:06Z";

  it("an addressed one is resolved by review.acceptance with its quote (in a test or in the code); the rest go on to the pull request, and only they stay pending", () => {
    const events = settlementEvents("7", settled, now);
    expect(events).toEqual([
      {
        type: "ConcernAddressed",
        issue_id: "7",
        resolution: {
          concern_id: "SPEC-JUDGE-001",
          fingerprint: "fp-SPEC-JUDGE-001",
          resolution_kind: "addressed-in-test",
          note: 'The diff (test.js): "assert.equal(sum(-2, -3), -5);" — a test of negatives',
          resolved_by: "review.acceptance",
          resolved_at: "2026-02-03T04:05:06Z",
        },
      },
      expect.objectContaining({ resolution: expect.objectContaining({ concern_id: "SPEC-JUDGE-004", resolution_kind: "addressed-in-code" }) }),
    ]);
    // The same inputs give the same events.
    expect(settlementEvents("7", settled, now)).toEqual(events);
    const carried = carryEvents(
      "7",
      settled.map((s) => s.concern),
      events,
      "pull_request",
      "carried",
    );
    expect(carried.map((e) => (e.type === "ConcernForwarded" ? e.concern.id : ""))).toEqual(["SPEC-JUDGE-002", "SPEC-JUDGE-003"]);
    const stamp = (e: NewEvent): DissentEvent => ({ at: "2026-02-03T04:05:06Z", ...e }) as DissentEvent;
    const forwarded = settled.map((s) => stamp({ type: "ConcernForwarded", issue_id: "7", concern: s.concern, reason: "review" }));
    const state = foldState([...forwarded, ...[...events, ...carried].map(stamp)]);
    expect(state.pending_concerns.map((c) => [c.id, c.must_address_by])).toEqual([
      ["SPEC-JUDGE-002", "pull_request"],
      ["SPEC-JUDGE-003", "pull_request"],
    ]);
  });

  it("the pull request tells each apart: settled with its quote cut on a word, not addressed, or the review could not tell", () => {
    const long = `assert.equal(sum(-2, -3), -5); ${"assert.equal(sum(-1, 1), 0); ".repeat(12)}`;
    const stage: StageRun = {
      stage: "implementation_review",
      phase: "implement",
      rounds: 1,
      retries: 0,
      outcome: "converged",
      concerns_raised: 0,
      concerns_forwarded: 0,
      duration_ms: 5,
      calls: 4,
    } as StageRun;
    const body = renderPrBody({
      issueId: "7",
      plan: "## Steps\n\nAdd sum.",
      criteria: [],
      verdicts: [],
      last: artifact(),
      attempts: 1,
      stage,
      pending: [TYPES, settled[2]?.concern as Concern],
      forwarded: [
        { ...(settled[0] as Settlement), evidence: long },
        settled[1] as Settlement,
        settled[2] as Settlement,
        { concern: concern("SPEC-JUDGE-005", "e"), verdict: "cannot_tell", evidence: "sum rejects strings now", ungrounded: true },
      ],
    });
    const line = body.split("\n").find((l) => l.includes("**SPEC-JUDGE-001**")) ?? "";
    expect(line).toMatch(
      /^- \[x\] \*\*SPEC-JUDGE-001\*\* HIGH \(spec\.judge\): No criterion checks sum with negative numbers or zero — settled: addressed in the diff \(`test\.js`\) — “assert\.equal/,
    );
    // Cut at a word (a space of the quote), within 200 characters, with an ellipsis.
    const cut = /“(.*)…”$/.exec(line)?.[1] ?? "";
    expect(cut.length).toBeLessThan(200);
    expect(long.startsWith(cut)).toBe(true);
    expect(long.slice(cut.length)).toMatch(/^,? /);
    expect(body).toContain(
      "- [ ] **SPEC-JUDGE-002** HIGH (spec.judge): Nothing says what sum does with arguments that are not numbers — **not addressed** by the diff: no type check",
    );
    expect(body).toContain("- [ ] **SPEC-JUDGE-003** HIGH (spec.judge): c — the review could not tell");
    expect(body).toContain("**SPEC-JUDGE-005** HIGH (spec.judge): e — the review could not tell (it said addressed, but its quote is not in the diff)");
    const unresolved = body.slice(body.indexOf("\n## Unresolved concerns\n"));
    expect(unresolved).toContain(
      "**SPEC-JUDGE-002** HIGH (spec.judge): Nothing says what sum does with arguments that are not numbers — “sum(2, 3) returns 5.” — forwarded, not addressed by the diff",
    );
    expect(unresolved).toContain("**SPEC-JUDGE-003** HIGH (spec.judge): c — “sum(2, 3) returns 5.” — forwarded, the review could not tell");
    expect(unresolved).not.toContain("SPEC-JUDGE-001");
  });
});

/**
 * A door whose review.acceptance reads the diff as a careful model does: a concern about negatives
 * is addressed when the diff carries the negatives test (quoting it), not addressed otherwise; the
 * other critics find nothing. It keeps every acceptance request it was sent.
 */
function door(asked: { role: string; text: string; schema?: string }[]): CallDoor {
  return (async (meta, request, parse) => {
    const text = request.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
    asked.push({ role: meta.role, text, ...(request.schema ? { schema: request.schema.name } : {}) });
    let answer = '{"findings": []}';
    if (meta.role === "review.acceptance") {
      const diff = readDataBlocks(text).find((b) => b.kind === "under_review")?.text ?? "";
      const concerns = JSON.parse(readDataBlocks(text).find((b) => b.kind === "tracked_concerns")?.text ?? "[]") as { id: string; concern: string }[];
      answer = JSON.stringify({
        criteria: [],
        concerns: concerns.map((c) =>
          /negative/.test(c.concern) && diff.includes("sum(-2, -3)")
            ? { id: c.id, evidence: "assert.equal(sum(-2, -3), -5);", verdict: "addressed", reason: "a test of negatives" }
            : { id: c.id, evidence: "", verdict: "Not addressed", reason: "the diff does not touch it" },
        ),
      });
    }
    const record = { role: meta.role, provider: "p", model: meta.role, route: "primary", cached: false, latency_ms: 1, input_tokens: 1, output_tokens: 1 };
    return { answer, record, requestHash: "h", ...(parse ? { parsed: parse(answer) } : {}) };
  }) as CallDoor;
}

async function review(attempts: DiffArtifact[], criteria: string[] = [], concerns: readonly Concern[] = tracked) {
  const asked: { role: string; text: string; schema?: string }[] = [];
  const outcome = await reviewImplementation({
    issueId: "7",
    cycle: 1,
    door: door(asked),
    costOf: async () => 1,
    append: async () => undefined,
    budget: callBudget(40),
    meter: new Meter(),
    context: () => ({ issue: { id: "7", title: "Add a sum function", body: "sum(a, b)", labels: [] }, artifacts: { plan: "Add sum." } }) as never,
    criteria,
    tracked: concerns,
    concernId: (fp) => `IMPLEMENT-${fp.slice(0, 6)}`,
    attempt: async (n) => attempts[n - 1] as DiffArtifact,
    now: () => "2026-02-03T04:05:06Z",
  });
  return { outcome, asked };
}

describe("the review stage settles the forwarded concerns", () => {
  it("with no acceptance criteria, review.acceptance is still asked, with the tracked concerns by id; the one the diff answers is settled", async () => {
    const { outcome, asked } = await review([artifact()]);
    const acceptance = asked.filter((a) => a.role === "review.acceptance");
    expect(acceptance).toHaveLength(1);
    expect(acceptance[0]?.schema).toBe("acceptance_and_concern_verdicts");
    expect(acceptance[0]?.text).toContain('for every concern of tracked_concerns, by its id, reply {"criteria": [], "concerns": [{"id"');
    expect(readDataBlocks(acceptance[0]?.text ?? "").find((b) => b.kind === "tracked_concerns")?.text).toContain(NEG.id);
    expect(outcome.settled.map((s) => [s.concern.id, s.verdict])).toEqual([
      [NEG.id, "addressed"],
      [TYPES.id, "not_addressed"],
    ]);
  });

  it("settles on the final attempt: a concern the first attempt addressed and the retry undid stays unresolved", async () => {
    const failing = artifact({ test: run({ exit_code: 1, output_tail: "AssertionError: 1 failed" }) });
    const undone = artifact({ attempt: 2, diff: DIFF.replace("+assert.equal(sum(-2, -3), -5);\n+assert.equal(sum(0, 4), 4);\n", "") });
    const { outcome, asked } = await review([failing, undone]);
    expect(outcome.result.stageRun.rounds).toBe(2);
    expect(asked.filter((a) => a.role === "review.acceptance")).toHaveLength(2);
    expect(outcome.settled.map((s) => s.verdict)).toEqual(["not_addressed", "not_addressed"]);
  });

  it("without tracked concerns, the acceptance request is the criteria's alone, as before", async () => {
    const { outcome, asked } = await review([artifact()], ["sum(2, 3) returns 5"], []);
    const acceptance = asked.find((a) => a.role === "review.acceptance");
    expect(acceptance?.schema).toBe("acceptance_verdicts");
    expect(readDataBlocks(acceptance?.text ?? "").some((b) => b.kind === "tracked_concerns")).toBe(false);
    expect(outcome.settled).toEqual([]);
  });
});
