/**
 * Reviews and checks on a pull request (issue 33, docs/adr/037) through the GitHub tracker's port,
 * against the GitHub double over a real bare repository: the diff GitHub would show decides which
 * lines take a comment, as it does on GitHub.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ReviewSettings } from "../../src/contracts/config.js";
import { CheckWriter, checkText, conclusionOf } from "../../src/github/check-run.js";
import { locateQuote, parseDiff } from "../../src/github/diff-lines.js";
import type { ReviewFinding } from "../../src/github/findings.js";
import type { PullRequestPort } from "../../src/github/pr-port.js";
import { postRoundReview, type RoundReview } from "../../src/github/pr-review.js";
import { isGithubTracker } from "../../src/trackers/github.js";
import { scratch } from "../support/cli.js";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { trackerOn } from "../trackers/github-fixtures.js";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", ...args], { cwd, encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });

const BASE = 'export function sum(a, b) {\n  throw new Error("not implemented");\n}\n\nexport function keep() {\n  return 1;\n}\n';
const ATTEMPT1 =
  'import { execSync } from "node:child_process";\n\nexport function sum(a, b) {\n  return a - b;\n}\n\nexport function convert(name) {\n  return execSync("convert " + name);\n}\n\nexport function keep() {\n  return 1;\n}\n';
const ATTEMPT2 =
  'import { execSync } from "node:child_process";\n\nexport function sum(a, b) {\n  return a + b;\n}\n\nexport function convert(name) {\n  return execSync("convert " + name);\n}\n\nexport function keep() {\n  return 1;\n}\n';

interface World {
  gh: GithubDouble;
  port: PullRequestPort;
  repo: string;
  /** Commits `text` as src/sum.js on the branch and pushes it; returns the commit and the diff base…commit. */
  commit(text: string): { sha: string; diff: string };
  base: string;
}

const opened: { close(): Promise<void> | void }[] = [];
afterEach(async () => {
  for (const x of opened.splice(0).reverse()) await x.close();
});

async function world(o: { checks?: "app" | "token"; author?: string } = {}): Promise<World & { pull: number }> {
  const s = scratch("dissent-pr-review-");
  opened.push({ close: () => s.cleanup() });
  const origin = join(s.dir, "origin.git");
  const repo = join(s.dir, "repo");
  mkdirSync(join(repo, "src"), { recursive: true });
  git(s.dir, "init", "--quiet", "--bare", "-b", "main", origin);
  git(repo, "init", "--quiet", "-b", "main");
  writeFileSync(join(repo, "src", "sum.js"), BASE);
  git(repo, "add", "--all");
  git(repo, "commit", "--quiet", "-m", "base");
  git(repo, "remote", "add", "origin", origin);
  git(repo, "push", "--quiet", "origin", "main");
  const base = git(repo, "rev-parse", "HEAD").trim();
  git(repo, "checkout", "--quiet", "-b", "dissent/issue-1");
  const gh = await startGithubDouble({ gitRepo: origin, ...(o.checks ? { checks: o.checks } : {}) });
  opened.push(gh);
  const tracker = trackerOn(gh);
  if (!isGithubTracker(tracker)) throw new Error("not the GitHub tracker");
  const commit = (text: string) => {
    writeFileSync(join(repo, "src", "sum.js"), text);
    git(repo, "commit", "--quiet", "--all", "-m", "attempt");
    git(repo, "push", "--quiet", "origin", "dissent/issue-1");
    return { sha: git(repo, "rev-parse", "HEAD").trim(), diff: git(repo, "diff", "--no-color", base, "HEAD") };
  };
  const w: World = { gh, port: tracker.pullRequests(), repo, commit, base };
  commit(ATTEMPT1);
  gh.addIssue({ number: 1, title: "Add a sum function" });
  const pr = await tracker.openPullRequest?.({
    issueId: "1",
    head: "dissent/issue-1",
    base: "main",
    title: "Add a sum function",
    body: "Closes #1",
    draft: false,
  });
  const pull = pr?.number ?? 0;
  if (o.author) {
    const p = gh.pulls.get(pull);
    if (p) p.login = o.author;
  }
  return { ...w, pull };
}

const finding = (o: Partial<ReviewFinding> & { id: string; evidence: string }): ReviewFinding => ({
  severity: "HIGH",
  critic: "review.correctness",
  alsoBy: [],
  category: "logic",
  concern: "something is wrong",
  blocking: true,
  ...o,
});
const SUBTRACTS = finding({ id: "IMPLEMENT-CORRECTNESS-001", severity: "CRITICAL", concern: "sum subtracts its arguments", evidence: "return a - b;" });
const INJECTION = finding({
  id: "IMPLEMENT-SECURITY-001",
  severity: "CRITICAL",
  critic: "review.security",
  category: "injection",
  concern: "A file name reaches a shell",
  evidence: 'export function convert(name) {\n  return execSync("convert " + name);',
  secondOpinion: { outcome: "confirmed", by: "verifier", reason: "the name is concatenated into the command" },
});
const STYLE = finding({
  id: "IMPLEMENT-CORRECTNESS-002",
  severity: "LOW",
  blocking: false,
  concern: "convert could be named better",
  evidence: "export function convert(name) {",
});
const TESTS = finding({
  id: "IMPLEMENT-TEST_COMMAND-001",
  severity: "CRITICAL",
  critic: "test_command",
  concern: "The tests fail",
  evidence: "1 failed, 2 passed",
});
const SETTINGS: ReviewSettings = { inlineMinSeverity: "MEDIUM", event: "COMMENT" };

const round = (w: World & { pull: number }, commit: { sha: string; diff: string }, n: number, findings: ReviewFinding[], settings = SETTINGS): RoundReview => ({
  subject: { key: "issue-1", pull: w.pull, commit: commit.sha },
  round: { token: String(n), label: `attempt ${n}` },
  diff: commit.diff,
  findings,
  criteria: ["sum(2, 3) returns 5"],
  verdicts: [{ criterion: "sum(2, 3) returns 5", verdict: n === 1 ? "not_met" : "met", evidence: "return a - b;" }],
  settings,
});

describe("where a finding's quote is in a diff", () => {
  const diff = [
    "diff --git a/src/sum.js b/src/sum.js",
    "index 1..2 100644",
    "--- a/src/sum.js",
    "+++ b/src/sum.js",
    "@@ -1,3 +1,3 @@",
    " export function sum(a, b) {",
    '-  throw new Error("not implemented");',
    "+  return a - b;",
    " }",
    "@@ -10,2 +10,3 @@ export function keep() {",
    " const x = 1;",
    "+const y = 2;",
    "+const z = 3;",
    "diff --git a/test.js b/test.js",
    "deleted file mode 100644",
    "--- a/test.js",
    "+++ /dev/null",
    "@@ -1,2 +0,0 @@",
    "-assert.equal(sum(2, 3), 5);",
    '-console.log("ok");',
    "",
  ].join("\n");
  const files = parseDiff(diff);

  it("an added line is found on the RIGHT by its number in the new file, near-verbatim quotes too", () => {
    expect(locateQuote(files, "return a - b;")).toEqual({ path: "src/sum.js", line: 2, side: "RIGHT" });
    expect(locateQuote(files, "+  return a – b;")).toEqual({ path: "src/sum.js", line: 2, side: "RIGHT" }); // a kept marker, a dash
    expect(locateQuote(files, "`return a - b`")).toEqual({ path: "src/sum.js", line: 2, side: "RIGHT" });
  });

  it("a quote over consecutive lines of one hunk takes them all (start_line); a removed line is on the LEFT", () => {
    expect(locateQuote(files, "const y = 2;\nconst z = 3;")).toEqual({ path: "src/sum.js", line: 12, side: "RIGHT", startLine: 11 });
    expect(locateQuote(files, "assert.equal(sum(2, 3), 5);")).toEqual({ path: "test.js", line: 1, side: "LEFT" });
  });

  it("no line for a quote of the test output, a paraphrase, or a fragment too short to place", () => {
    expect(locateQuote(files, "1 failed, 2 passed")).toBeUndefined();
    expect(locateQuote(files, "the function subtracts")).toBeUndefined();
    expect(locateQuote(files, "}")).toBeUndefined();
  });
});

describe("a review round on the pull request", () => {
  it("round 1 posts ONE review with an inline comment per finding on the line it quotes; below the threshold or off the diff, in the body", async () => {
    const w = await world();
    const c1 = { sha: w.gh.pulls.get(w.pull)?.sha ?? "", diff: git(w.repo, "diff", "--no-color", w.base, "HEAD") };
    const posted = await postRoundReview(w.port, round(w, c1, 1, [SUBTRACTS, INJECTION, TESTS, STYLE]));
    expect(w.gh.reviews).toHaveLength(1);
    expect(posted).toMatchObject({ event: "COMMENT", inline: [SUBTRACTS.id, INJECTION.id], inBody: [TESTS.id, STYLE.id] });
    const review = w.gh.reviews[0];
    expect(review).toMatchObject({ state: "COMMENTED", commit_id: c1.sha });
    expect(review?.body).toMatch(/^<!-- dissent:review key=issue-1 round=1 -->\n### dissent · review of attempt 1: 3 blocking findings, 1 more as advice/);
    expect(review?.body).toContain("Acceptance criteria: 0 of 1 met.");
    expect(review?.body).toContain(`**${TESTS.id}** CRITICAL (blocks) (test_command): The tests fail — “1 failed, 2 passed”`);
    const byId = (id: string) => w.gh.reviewComments.find((c) => c.body.includes(`id=${id} `));
    expect(byId(SUBTRACTS.id)).toMatchObject({ path: "src/sum.js", line: 4, side: "RIGHT", start_line: null, review_id: review?.id });
    expect(byId(INJECTION.id)).toMatchObject({ path: "src/sum.js", line: 8, start_line: 7, side: "RIGHT" });
    const injection = byId(INJECTION.id)?.body ?? "";
    expect(injection).toContain("**CRITICAL** · blocks · `IMPLEMENT-SECURITY-001` · review.security");
    expect(injection).toContain("**Second opinion** (verifier): confirmed — the name is concatenated into the command");
    expect(injection).toContain('> export function convert(name) {\n>   return execSync("convert " + name);');
  });

  it("round 2 marks the fixed finding's comment resolved and updates the one still raised, posting no new comment; a person's comment is left alone", async () => {
    const w = await world();
    const c1 = { sha: w.gh.pulls.get(w.pull)?.sha ?? "", diff: git(w.repo, "diff", "--no-color", w.base, "HEAD") };
    await postRoundReview(w.port, round(w, c1, 1, [SUBTRACTS, INJECTION]));
    const human = w.gh.addReviewComment(w.pull, {
      path: "src/sum.js",
      line: 4,
      body: "<!-- dissent:finding key=issue-1 id=IMPLEMENT-CORRECTNESS-009 fp=- q=- state=open since=attempt%201 -->\nAgreed, and I copied dissent's marker.",
      login: "maintainer-mia",
    });
    const humanBefore = { ...human };
    const c2 = w.commit(ATTEMPT2);
    const posted = await postRoundReview(w.port, round(w, c2, 2, [INJECTION]));
    expect(posted).toMatchObject({ inline: [], resolved: [SUBTRACTS.id], updated: [INJECTION.id] });
    expect(w.gh.reviews.filter((r) => r.login === "dissent-bot")).toHaveLength(2);
    const ours = w.gh.reviewComments.filter((c) => c.login === "dissent-bot");
    expect(ours).toHaveLength(2); // nothing piled on
    const fixed = ours.find((c) => c.body.includes(`id=${SUBTRACTS.id} `))?.body ?? "";
    expect(fixed).toMatch(
      new RegExp(
        `^<!-- dissent:finding key=issue-1 id=${SUBTRACTS.id} fp=\\S+ q=\\S+ state=resolved since=attempt%201 -->\n✅ \\*\\*Resolved in attempt 2\\*\\*`,
      ),
    );
    expect(fixed).toContain("sum subtracts its arguments"); // what it said, kept
    const still = ours.find((c) => c.body.includes(`id=${INJECTION.id} `))?.body ?? "";
    expect(still).toContain("state=open");
    expect(still).toContain("<sub>dissent · raised in attempt 1 · still raised in attempt 2</sub>");
    expect(w.gh.reviews.at(-1)?.body).toContain(`Resolved since the last review: \`${SUBTRACTS.id}\`.`);
    expect(w.gh.reviews.at(-1)?.body).toContain(`Still raised, on their earlier comments: \`${INJECTION.id}\`.`);
    // The person's comment — even one that copies a marker — was never written to.
    expect(w.gh.reviewComments.find((c) => c.id === human.id)).toEqual(humanBefore);
    expect(w.gh.requests.filter((r) => r.method !== "GET" && r.path.endsWith(`/comments/${human.id}`))).toEqual([]);
  });

  it("posting a round again (a resumed run) adds no second review and rewrites nothing", async () => {
    const w = await world();
    const c1 = { sha: w.gh.pulls.get(w.pull)?.sha ?? "", diff: git(w.repo, "diff", "--no-color", w.base, "HEAD") };
    await postRoundReview(w.port, round(w, c1, 1, [SUBTRACTS]));
    const writes = w.gh.writes().length;
    const again = await postRoundReview(w.port, round(w, c1, 1, [SUBTRACTS]));
    expect(again.review).toBeNull();
    expect(w.gh.reviews).toHaveLength(1);
    expect(w.gh.writes()).toHaveLength(writes);
  });

  it("review.event REQUEST_CHANGES: on the token's own pull request GitHub refuses it (422) and dissent comments; on another's it requests changes, dismissed once nothing blocks", async () => {
    const own = await world();
    const c1 = { sha: own.gh.pulls.get(own.pull)?.sha ?? "", diff: git(own.repo, "diff", "--no-color", own.base, "HEAD") };
    const posted = await postRoundReview(own.port, round(own, c1, 1, [SUBTRACTS], { ...SETTINGS, event: "REQUEST_CHANGES" }));
    expect(posted.event).toBe("COMMENT");
    expect(posted.fallbacks).toEqual([{ kind: "own_pull_request", detail: expect.stringContaining("own pull request") }]);
    expect(own.gh.reviews.map((r) => r.state)).toEqual(["COMMENTED"]);

    const theirs = await world({ author: "contributor-cai" });
    const t1 = { sha: theirs.gh.pulls.get(theirs.pull)?.sha ?? "", diff: git(theirs.repo, "diff", "--no-color", theirs.base, "HEAD") };
    expect((await postRoundReview(theirs.port, round(theirs, t1, 1, [SUBTRACTS], { ...SETTINGS, event: "REQUEST_CHANGES" }))).event).toBe("REQUEST_CHANGES");
    const t2 = theirs.commit(ATTEMPT2);
    const second = await postRoundReview(theirs.port, round(theirs, t2, 2, [STYLE], { ...SETTINGS, event: "REQUEST_CHANGES" }));
    expect(second.event).toBe("COMMENT");
    expect(theirs.gh.reviews.map((r) => r.state)).toEqual(["DISMISSED", "COMMENTED"]);
  });

  it("a comment GitHub cannot place (its line is not in the pull request's diff) moves into the body: the review still goes out", async () => {
    const w = await world();
    const sha = w.gh.pulls.get(w.pull)?.sha ?? "";
    // A stale diff that claims line 40 changed: GitHub's diff has no such line, and refuses the whole review.
    const stale = "diff --git a/src/sum.js b/src/sum.js\n--- a/src/sum.js\n+++ b/src/sum.js\n@@ -40,1 +40,1 @@\n-x\n+  return a - b;\n";
    const posted = await postRoundReview(w.port, round(w, { sha, diff: stale }, 1, [SUBTRACTS]));
    expect(posted.inline).toEqual([]);
    expect(posted.inBody).toEqual([SUBTRACTS.id]);
    expect(posted.fallbacks).toEqual([{ kind: "inline_refused", detail: expect.stringContaining("Line could not be resolved") }]);
    expect(w.gh.reviews).toHaveLength(1);
    expect(w.gh.reviewComments).toEqual([]);
    expect(w.gh.reviews[0]?.body).toContain(`**${SUBTRACTS.id}** CRITICAL`);
  });
});

describe("the dissent check on a commit", () => {
  const text = (findings: ReviewFinding[]) =>
    checkText({
      label: "attempt 1",
      findings,
      criteria: ["sum(2, 3) returns 5"],
      verdicts: [{ criterion: "sum(2, 3) returns 5", verdict: "met", evidence: "x" }],
    });

  it("with a GitHub App's token: a check run in progress, then its conclusion; its summary the checklist and the findings table", async () => {
    const w = await world();
    const sha = w.gh.pulls.get(w.pull)?.sha ?? "";
    const checks = new CheckWriter(w.port);
    await checks.start(sha, { title: "reviewing attempt 1", summary: "The review is running." }, "https://dissent.example.com/#/issue/1");
    await checks.finish(sha, conclusionOf([SUBTRACTS]), text([SUBTRACTS]), "https://dissent.example.com/#/issue/1");
    expect(w.gh.checkRuns).toHaveLength(1);
    const run = w.gh.checkRuns[0];
    expect(run).toMatchObject({
      name: "dissent",
      head_sha: sha,
      status: "completed",
      conclusion: "failure",
      details_url: "https://dissent.example.com/#/issue/1",
    });
    expect(run?.history).toEqual(["in_progress", "completed:failure"]);
    expect(run?.output.summary).toContain("- [x] sum(2, 3) returns 5 (met)");
    expect(run?.output.summary).toContain(`| CRITICAL | \`${SUBTRACTS.id}\` | review.correctness | sum subtracts its arguments | blocks |`);
    expect(conclusionOf([STYLE])).toBe("neutral");
    expect(conclusionOf([])).toBe("success");
    // A second writer (a resumed run) finds the check again: no second check run on the commit.
    await new CheckWriter(w.port).finish(sha, "success", text([]));
    expect(w.gh.checkRuns).toHaveLength(1);
    expect(w.gh.checkRuns[0]?.history.at(-1)).toBe("completed:success");
  });

  it("with a personal access token (check runs 403): commit statuses instead — pending, then failure; advice only is success", async () => {
    const w = await world({ checks: "token" });
    const sha = w.gh.pulls.get(w.pull)?.sha ?? "";
    const warned: string[] = [];
    const checks = new CheckWriter(w.port, (m) => warned.push(m));
    await checks.start(sha, { title: "reviewing attempt 1", summary: "…" }, "https://dissent.example.com/#/issue/1");
    await checks.finish(sha, "failure", text([SUBTRACTS]));
    await checks.finish(sha, "neutral", text([STYLE]));
    expect(checks.channel).toBe("status");
    expect(w.gh.checkRuns).toEqual([]);
    expect(w.gh.statuses.map((s) => [s.context, s.state])).toEqual([
      ["dissent", "pending"],
      ["dissent", "failure"],
      ["dissent", "success"],
    ]);
    expect(w.gh.statuses[0]?.target_url).toBe("https://dissent.example.com/#/issue/1");
    expect(w.gh.statuses.every((s) => (s.description ?? "").length <= 140)).toBe(true);
    expect(warned).toEqual([]); // expected of a personal token: no warning
  });

  it("a token that may write neither: one warning, and the run goes on", async () => {
    const w = await world({ checks: "token" });
    const sha = w.gh.pulls.get(w.pull)?.sha ?? "";
    w.gh.fail({ method: "POST", path: /\/statuses\//, status: 403, body: { message: "Resource not accessible by integration" }, times: 5 });
    const warned: string[] = [];
    const checks = new CheckWriter(w.port, (m) => warned.push(m));
    await checks.start(sha, { title: "t", summary: "s" });
    await checks.finish(sha, "failure", text([SUBTRACTS]));
    expect(checks.channel).toBe("none");
    expect(warned).toEqual([expect.stringMatching(/refused both a check run and a commit status on commit \w{7} of acme\/widgets \(403/)]);
  });
});
