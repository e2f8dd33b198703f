/**
 * The implement phase's own rules, directly (docs/implement.md): how review.acceptance's verdicts
 * become findings and the checklist, what dissent's own checks raise, the pull request's body, the
 * agent's environment, and what counts as a write outside the worktree.
 */
import { describe, expect, it } from "vitest";
import type { Concern, StageRun } from "../../src/contracts/concern.js";
import type { CommandRun } from "../../src/contracts/events.js";
import { acceptanceFindings, parseAcceptance, verdictsFor } from "../../src/implement/acceptance.js";
import { renderDiffArtifact, type DiffArtifact } from "../../src/implement/artifact.js";
import { agentEnv } from "../../src/implement/attempt.js";
import { attemptChecks, skipEmpty } from "../../src/implement/checks.js";
import { changedPaths } from "../../src/implement/escape.js";
import { PR_BODY_CHARS, renderPrBody } from "../../src/implement/pr-body.js";
import { attemptStory } from "../../src/implement/story.js";
import { cutAtWord } from "../../src/github/markdown.js";
import type { DissentEvent } from "../../src/contracts/events.js";
import { ground, groundingText } from "../../src/adversarial/grounding.js";

const run = (o: Partial<CommandRun> = {}): CommandRun => ({
  exit_code: 0,
  signal: null,
  timed_out: false,
  duration_ms: 1200,
  output_tail: "",
  output_bytes: 0,
  ...o,
});
const artifact = (o: Partial<DiffArtifact> = {}): DiffArtifact => ({
  attempt: 1,
  outcome: "tested",
  commit: "abc",
  diff: "diff --git a/src/sum.js b/src/sum.js\n@@ -1,3 +1,3 @@\n export function sum(a, b) {\n-  throw new Error('x');\n+  return a - b;\n }\n",
  truncated: false,
  stats: { files: 1, insertions: 1, deletions: 1 },
  agent: run(),
  testCommand: "npm test",
  test: run(),
  ...o,
});

describe("review.acceptance's verdicts", () => {
  const criteria = ["sum(2, 3) returns 5", "The README documents sum"];

  it("are read leniently from a fenced reply with prose and a think block; a criterion left out is cannot_tell", () => {
    const reply =
      '<think>maybe met</think>Here is my review.\n```json\n{"criteria": [{"criterion": "sum(2, 3) returns 5", "evidence": "return a - b;", "verdict": "Not met", "reason": "it subtracts"}]}\n```';
    const parsed = parseAcceptance(reply, []);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const verdicts = verdictsFor(criteria, parsed.value.criteria);
    expect(verdicts.map((v) => v.verdict)).toEqual(["not_met", "cannot_tell"]);
  });

  it("not_met is a HIGH finding quoting its evidence, cannot_tell MEDIUM advice, met nothing; not_met first", () => {
    const f = acceptanceFindings([
      { criterion: "B", verdict: "cannot_tell", evidence: "x y z" },
      { criterion: "A", verdict: "met", evidence: "a b c" },
      { criterion: "C", verdict: "not_met", evidence: "return a - b;" },
    ]);
    expect(f.map((x) => [x.severity, x.concern])).toEqual([
      ["HIGH", "Acceptance criterion not met: C"],
      ["MEDIUM", "Cannot tell from the diff whether this criterion is met: B"],
    ]);
    expect(f[0]?.evidence).toBe("return a - b;");
  });

  it("a reply that is not a list of verdicts is a failed vote, not an empty one", () => {
    expect(parseAcceptance('{"findings": []}', []).ok).toBe(false);
  });
});

describe("dissent's own checks on an attempt", () => {
  it("a failing test run is a CRITICAL quoting the output's last line, which grounds in the change under review", () => {
    const a = artifact({ test: run({ exit_code: 1, output_tail: "running 3 tests\nAssertionError: 1 !== 5\n  1 failed, 2 passed" }) });
    const [finding] = attemptChecks(a);
    expect(finding).toMatchObject({ severity: "CRITICAL", category: "test_failure", evidence: "1 failed, 2 passed" });
    expect(ground(groundingText(renderDiffArtifact(a)), finding?.evidence ?? "").grounded).toBe(true);
  });

  it("an agent stopped at its time limit and an attempt that changed nothing are CRITICAL, quoting the agent's line", () => {
    const timedOut = artifact({ outcome: "timed_out", agent: run({ timed_out: true, exit_code: null, signal: "SIGTERM", duration_ms: 30_000 }) });
    const t = attemptChecks(timedOut);
    expect(t.map((f) => f.category)).toEqual(["timeout"]);
    expect(renderDiffArtifact(timedOut)).toContain(t[0]?.evidence ?? "-");
    const empty = artifact({ outcome: "no_changes", diff: "", stats: { files: 0, insertions: 0, deletions: 0 }, test: null });
    expect(attemptChecks(empty).map((f) => f.category)).toEqual(["incomplete"]);
  });

  it("the review reads what test_command did: run and passed, not run because the attempt changed nothing, or none configured", () => {
    expect(renderDiffArtifact(artifact())).toContain("Tests: `npm test` passed (exit 0).");
    const empty = artifact({ outcome: "no_changes", diff: "", stats: { files: 0, insertions: 0, deletions: 0 }, test: null });
    expect(renderDiffArtifact(empty)).toContain("Tests: `npm test` was not run: the attempt changed nothing.");
    expect(renderDiffArtifact(empty)).not.toContain("no test_command");
    expect(renderDiffArtifact(artifact({ testCommand: null, test: null, outcome: "untested" }))).toContain("Tests: no test_command is configured.");
  });

  it("a model critic is not asked about an attempt that changed nothing, and costs no call", async () => {
    let asked = 0;
    const critic = skipEmpty({
      role: "review.correctness",
      calls: async () => 1,
      review: async () => {
        asked++;
        return { findings: [{ severity: "LOW", concern: "x", evidence: "y" }] };
      },
    });
    const empty = artifact({ outcome: "no_changes", diff: "", stats: { files: 0, insertions: 0, deletions: 0 }, test: null });
    expect(await critic.calls?.(empty, { round: 1 })).toBe(0);
    expect(await critic.review(empty, { round: 1 })).toEqual({ findings: [] });
    expect(asked).toBe(0);
    expect(await critic.calls?.(artifact(), { round: 1 })).toBe(1);
    expect((await critic.review(artifact(), { round: 1 })).findings).toHaveLength(1);
    expect(asked).toBe(1);
  });

  it("passing tests raise nothing; no test_command raises nothing", () => {
    expect(attemptChecks(artifact())).toEqual([]);
    expect(attemptChecks(artifact({ testCommand: null, test: null, outcome: "untested" }))).toEqual([]);
  });
});

describe("the pull request's body", () => {
  const stage = { outcome: "converged", rounds: 2, calls: 9 } as StageRun;
  const concern = (o: Partial<Concern>): Concern => ({
    id: "IMPLEMENT-SECURITY-001",
    phase: "implement",
    stage: "implementation_review",
    raised_by: "review.security",
    severity: "CRITICAL",
    category: "injection",
    concern: "A file name reaches a shell.",
    evidence: 'execSync("convert " + name)',
    must_address_by: "pull_request",
    human_required: false,
    fingerprint: "f",
    raised_at: "2026-01-01T00:00:00Z",
    ...o,
  });

  it("closes the issue, checks the met criteria, says the test result, lists every unresolved concern with its id", () => {
    const body = renderPrBody({
      issueId: "7",
      plan: "## Steps\n\nAdd sum.",
      criteria: ["sum(2, 3) returns 5", "Errors are reported"],
      verdicts: [
        { criterion: "sum(2, 3) returns 5", verdict: "met", evidence: "Tests: `npm test` passed (exit 0)." },
        { criterion: "Errors are reported", verdict: "not_met", evidence: "return a - b;" },
      ],
      last: artifact(),
      attempts: 2,
      stage,
      pending: [concern({})],
    });
    expect(body.startsWith("Closes #7\n")).toBe(true);
    expect(body).toContain("- [x] sum(2, 3) returns 5 (met — “Tests: `npm test` passed (exit 0).”)");
    expect(body).toContain("- [ ] Errors are reported (**not met** — “return a - b;”)");
    expect(body).toContain("Tests: `npm test` passed (exit 0).");
    expect(body).toContain("- **IMPLEMENT-SECURITY-001** CRITICAL (review.security): A file name reaches a shell.");
    expect(body).toContain("<!-- dissent:pull-request -->");
  });

  it("tells the story: per attempt what blocked it and the attempt that fixed each, over two runs", () => {
    const base = { issue_id: "7", at: "2026-01-01T00:00:00Z", seq: 0 };
    const attemptEvent = (run: number, attempt: number, exit: number) =>
      ({
        ...base,
        type: "ImplementAttempt",
        run,
        attempt,
        branch: "b",
        base_sha: "s",
        commit: "c",
        outcome: "tested",
        agent: run0,
        diff: { files: 1, insertions: 1, deletions: 0 },
        test: { ...run0, exit_code: exit },
      }) as unknown as DissentEvent;
    const run0 = run();
    const blocked = (round: number, c: Partial<Concern>) =>
      ({ ...base, type: "ConcernBlocked", stage: "implementation_review", round, concern: concern(c) }) as unknown as DissentEvent;
    const subtracts = { id: "IMPLEMENT-CORRECTNESS-001", severity: "CRITICAL" as const, raised_by: "review.correctness", concern: "sum subtracts" };
    const tests = { id: "IMPLEMENT-TEST_COMMAND-001", severity: "CRITICAL" as const, raised_by: "test_command", concern: "The tests fail" };
    const story = attemptStory([
      // Run 1: attempts 1 and 2; its review's events are committed after them.
      attemptEvent(1, 1, 1),
      attemptEvent(1, 2, 1),
      blocked(1, subtracts),
      blocked(1, tests),
      blocked(2, tests),
      // Run 2: attempt 3 fixes the tests.
      attemptEvent(2, 3, 0),
    ]);
    expect(story.map((a) => [a.attempt, a.blocked.map((b) => [b.id, b.fixed_in])])).toEqual([
      [
        1,
        [
          ["IMPLEMENT-CORRECTNESS-001", 2],
          ["IMPLEMENT-TEST_COMMAND-001", null],
        ],
      ],
      [2, [["IMPLEMENT-TEST_COMMAND-001", 3]]],
      [3, []],
    ]);
    const body = renderPrBody({ issueId: "7", plan: "p", criteria: [], verdicts: [], last: artifact(), attempts: 1, stage, pending: [], story });
    expect(body).toContain("## Review history");
    expect(body).toContain(
      "- **Attempt 1** — tested, tests failed (exit 1); blocked by:\n  - **IMPLEMENT-CORRECTNESS-001** CRITICAL (review.correctness): sum subtracts — fixed in attempt 2",
    );
    expect(body).toContain("  - **IMPLEMENT-TEST_COMMAND-001** CRITICAL (test_command): The tests fail — still blocking in attempt 2");
    expect(body).toContain(
      "- **Attempt 2** — tested, tests failed (exit 1); blocked by:\n  - **IMPLEMENT-TEST_COMMAND-001** CRITICAL (test_command): The tests fail — fixed in attempt 3",
    );
    expect(body).toContain("- **Attempt 3** — tested, tests passed: nothing blocked it.");
    expect(body).toContain("Reviewed by dissent: 1 attempt in this run (3 in all)");
  });

  it("an old store's per-run attempt numbers are told apart by run", () => {
    const e = (run: number, attempt: number) =>
      ({ issue_id: "7", at: "t", seq: 0, type: "ImplementAttempt", run, attempt, outcome: "tested", test: null }) as unknown as DissentEvent;
    const blocked = {
      issue_id: "7",
      at: "t",
      seq: 0,
      type: "ConcernBlocked",
      stage: "implementation_review",
      round: 1,
      concern: concern({}),
    } as unknown as DissentEvent;
    const story = attemptStory([e(1, 1), e(2, 1), blocked, e(2, 2)]);
    expect(story.map((a) => [a.attempt, a.blocked.map((b) => b.fixed_in)])).toEqual([
      [1, []],
      [2, [3]],
      [3, []],
    ]);
  });

  it("the plan's headings sit one level under ## Plan; quotes are cut on a word boundary with an ellipsis", () => {
    const plan = "Add sum.\n\n## Steps\n\n1. Write it.\n\n```md\n## not a heading\n```\n\n###### Deepest";
    const long = `${"word ".repeat(60)}tail`;
    const body = renderPrBody({
      issueId: "7",
      plan,
      criteria: ["sum works"],
      verdicts: [{ criterion: "sum works", verdict: "met", evidence: long }],
      last: artifact(),
      attempts: 1,
      stage,
      pending: [],
    });
    expect(body).toContain("\n### Steps\n");
    expect(body).not.toMatch(/^## Steps/m);
    expect(body).toContain("```md\n## not a heading\n```");
    expect(body).toContain("###### Deepest");
    const quote = /met — “([^”]*)”/.exec(body)?.[1] ?? "";
    expect(quote.endsWith("word…")).toBe(true);
    expect(quote.length).toBeLessThanOrEqual(200);
    expect(cutAtWord("alpha beta gamma", 12)).toBe("alpha beta…");
    expect(cutAtWord("short", 12)).toBe("short");
  });

  it("stays under GitHub's limit however many concerns there are", () => {
    const pending = Array.from({ length: 2000 }, (_, i) => concern({ id: `C-${i}`, concern: "x".repeat(200) }));
    const body = renderPrBody({ issueId: "7", plan: "p", criteria: [], verdicts: [], last: artifact(), attempts: 1, stage, pending });
    expect(body.length).toBeLessThan(65_536);
    expect(body.length).toBeGreaterThan(PR_BODY_CHARS - 1);
    expect(body.endsWith("<!-- dissent:pull-request -->")).toBe(true);
  });
});

describe("what the agent is given and watched for", () => {
  it("its environment is PATH, HOME, LANG and implement.env only, plus the task's variables", () => {
    const env = agentEnv(
      { PATH: "/bin", HOME: "/h", LANG: "C", OPENAI_API_KEY: "sk-x", GITHUB_TOKEN: "ghp_y", AGENT_TOKEN: "t", DISSENT_HOME: "/d" },
      ["AGENT_TOKEN", "NOT_SET"],
      { DISSENT_TASK_FILE: "/t.md" },
    );
    expect(env).toEqual({ PATH: "/bin", HOME: "/h", LANG: "C", AGENT_TOKEN: "t", DISSENT_TASK_FILE: "/t.md" });
  });

  it("a path that appeared, changed or went away is an escape; one that did not change is not", () => {
    const before = new Map([
      ["/h/worktrees/x.txt", "3:1"],
      ["/h/wiki/a.md", "10:1"],
      ["/h/gone", "1:1"],
    ]);
    const after = new Map([
      ["/h/worktrees/x.txt", "3:1"],
      ["/h/wiki/a.md", "11:2"],
      ["/h/new.txt", "1:2"],
    ]);
    expect(changedPaths(before, after, "/h")).toEqual(["gone", "new.txt", "wiki/a.md"]);
    expect(changedPaths(before, new Map(before), "/h")).toEqual([]);
  });
});
