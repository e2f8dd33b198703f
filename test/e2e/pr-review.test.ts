/**
 * `dissent pr review N` and `/dissent review` (issue 33, docs/github-action.md "Reviewing any pull
 * request"): through the built CLI, the realistic model double as the review council, the GitHub
 * double over a bare repository. A person's pull request is reviewed against its description (no
 * plan) or against the plan of the issue it closes; the review lands as one GitHub review with inline
 * comments on the lines the findings quote and the `dissent` check on its head; a later head resolves
 * dissent's own comments and never touches a person's; the same head is never reviewed twice.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { holdWorld } from "../support/hold.js";
import { frontier } from "../support/double/index.js";
import { gitIn, implementWorld, plannedOnGithub, sumRepository, SUM_FORWARDED, SUM_TITLE, type ImplementWorld } from "../support/implement-world.js";
import { until } from "../support/proc.js";

vi.setConfig({ testTimeout: 240_000 });

interface PrReviewJson {
  pull: number;
  head: string;
  status: string;
  contract: { kind: string; issue?: string };
  findings: { id: string; fingerprint: string; severity: string; blocking: boolean; critic: string; evidence: string }[];
  acceptance: { criterion: string; verdict: string }[];
  forwarded_concerns: { id: string; verdict: string; evidence: string | null; file: string | null }[];
  review: { id: number; event: string; inline: number; in_body: number; resolved: number } | null;
  check: string | null;
  calls: number;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

async function onGithub(): Promise<{ w: ImplementWorld; gh: GithubDouble; env: Record<string, string> }> {
  const w = await implementWorld({ mode: "bug-then-fix" });
  open.push(w);
  const { gh, env } = await plannedOnGithub(w);
  open.push(gh);
  return { w, gh, env };
}

/** A person's change on a branch of their own, pushed to the origin: its head commit. */
function pushChange(w: ImplementWorld, branch: string, body: string, message: string, from = "main"): string {
  gitIn(w.repo, "checkout", "--quiet", "-B", branch, from);
  writeFileSync(join(w.repo, "src", "sum.js"), body);
  gitIn(w.repo, "commit", "--quiet", "-am", message);
  gitIn(w.repo, "push", "--quiet", "origin", branch);
  const sha = gitIn(w.repo, "rev-parse", "HEAD").trim();
  gitIn(w.repo, "checkout", "--quiet", "main");
  return sha;
}

const SUBTRACTS = "export function sum(a, b) {\n  return a - b;\n}\n";
const ADDS = "export function sum(a, b) {\n  return a + b;\n}\n";

/** A pull request a person opened (numbered after the issues, as GitHub numbers them). */
function personOpens(gh: GithubDouble, o: { number: number; head: string; sha: string; body: string }): void {
  gh.pulls.set(o.number, {
    number: o.number,
    head: o.head,
    base: "main",
    title: SUM_TITLE,
    body: o.body,
    draft: false,
    state: "open",
    sha: o.sha,
    login: "alice",
  });
}

async function review(w: ImplementWorld, env: Record<string, string>, n: number): Promise<PrReviewJson> {
  const r = await w.run(["pr", "review", String(n), "--json"], { env });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as PrReviewJson;
}

const markerOf = (body: string) => /^<!-- dissent:finding key=pr-(\d+) id=(\S+) fp=\S+ q=\S+ state=(open|resolved) /.exec(body);

describe("dissent pr review", () => {
  it("reviews a person's pull request with no plan against its description: an inline comment on the subtraction, the check failed; the fix's head resolves it; the same head is not reviewed twice; a person's comment is left alone", async () => {
    const { w, gh, env } = await onGithub();
    const head = pushChange(w, "alice/sum", SUBTRACTS, "sum");
    personOpens(gh, { number: 2, head: "alice/sum", sha: head, body: "Implements sum(a, b) in src/sum.js." });
    const human = gh.addReviewComment(2, { path: "src/sum.js", line: 2, body: "Is this the right operator?", login: "maintainer-mia" });
    const humanBefore = { ...human };

    const first = await review(w, env, 2);
    expect(first).toMatchObject({ pull: 2, head, status: "blocking", contract: { kind: "description" }, check: "failure" });
    expect(first.acceptance).toEqual([]); // no plan: no criteria to check
    const subtracts = first.findings.find((f) => f.blocking && /return a [-–] b;/.test(f.evidence));
    expect(subtracts?.critic).toBe("review.correctness");
    // One review by dissent, on the head, its comment on the line the finding quotes.
    const ours = () => gh.reviewComments.filter((c) => c.login === "dissent-bot");
    const reviews = () => gh.reviews.filter((r) => r.pull === 2 && r.login === "dissent-bot");
    expect(reviews().map((r) => [r.commit_id, r.state])).toEqual([[head, "COMMENTED"]]);
    expect(reviews()[0]?.body).toMatch(/^<!-- dissent:review key=pr-2 round=\S+ -->\n### dissent · review of head [0-9a-f]{7}: \d+ blocking/);
    const comment = ours().find((c) => c.path === "src/sum.js" && markerOf(c.body)?.[2] === subtracts?.id);
    expect(comment).toMatchObject({ line: 2, side: "RIGHT", commit_id: head });
    // dissent never ran the pull request's code, and says so where the tests would be.
    expect(reviews()[0]?.body).toContain("dissent runs none of a pull request's code");
    const check = gh.checkRuns.filter((c) => c.head_sha === head && c.name === "dissent");
    expect(check.map((c) => c.history)).toEqual([["in_progress", "completed:failure"]]);
    // It never pushes: the person's branch is where they left it.
    expect(gitIn(w.origin, "rev-parse", "refs/heads/alice/sum").trim()).toBe(head);

    // The same head again: nothing is posted twice, and the replies come from the cache.
    const again = await review(w, env, 2);
    expect(again).toMatchObject({ head, review: null, calls: 0 });
    expect(reviews()).toHaveLength(1);

    // The person pushes the fix: its review resolves dissent's comment in place, and its check passes.
    const fixed = pushChange(w, "alice/sum", ADDS, "add, not subtract", "alice/sum");
    const second = await review(w, env, 2);
    expect(second.head).toBe(fixed);
    expect(second.findings.filter((f) => f.blocking)).toEqual([]);
    expect(["passed", "advice"]).toContain(second.status);
    // Ids are numbered over the pull request's life: a new finding of this head never takes the id of an earlier head's.
    const earlier = new Map(first.findings.map((f) => [f.id, f.fingerprint]));
    for (const f of second.findings) if (earlier.has(f.id)) expect(f.fingerprint).toBe(earlier.get(f.id));
    expect(second.review?.resolved).toBeGreaterThanOrEqual(1);
    const after = ours().find((c) => c.id === comment?.id);
    expect(markerOf(after?.body ?? "")?.[3]).toBe("resolved");
    expect(gh.checkRuns.find((c) => c.head_sha === fixed)?.conclusion).toMatch(/^(success|neutral)$/);
    // A person's comment is never written to.
    expect(gh.reviewComments.find((c) => c.id === human.id)).toEqual(humanBefore);
    expect(gh.requests.filter((r) => r.method !== "GET" && r.path.endsWith(`/comments/${human.id}`))).toEqual([]);
    // Nothing was approved.
    expect(gh.reviews.filter((r) => r.state === "APPROVED")).toEqual([]);
  });

  it("a pull request that closes an issue dissent planned is reviewed against that plan and its acceptance criteria", async () => {
    const { w, gh, env } = await onGithub();
    const head = pushChange(w, "alice/sum", SUBTRACTS, "sum");
    personOpens(gh, { number: 2, head: "alice/sum", sha: head, body: "Closes #1" });
    const out = await review(w, env, 2);
    expect(out.contract).toEqual({ kind: "plan", issue: "1" });
    expect(out.acceptance.length).toBeGreaterThan(0);
    expect(out.acceptance.some((v) => v.verdict === "not_met")).toBe(true);
    const summary = gh.checkRuns.find((c) => c.head_sha === head)?.output.summary ?? "";
    expect(summary).toContain("### Acceptance criteria");
  });

  it("`/dissent review` on a pull request's comment reviews it and answers there; on an issue it says where the command belongs; bad input is one line", async () => {
    const { w, gh, env } = await onGithub();
    const head = pushChange(w, "alice/sum", SUBTRACTS, "sum");
    personOpens(gh, { number: 2, head: "alice/sum", sha: head, body: "Implements sum." });
    gh.collaborators.set("maintainer-mia", "write");
    const event = (issue: { number: number; pull_request?: unknown }) => {
      const { id } = gh.addComment(issue.number, "/dissent review", "maintainer-mia");
      const file = join(w.dir, `event-${id}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          action: "created",
          comment: { id, body: "/dissent review", user: { login: "maintainer-mia", type: "User" } },
          issue,
          repository: { full_name: "acme/widgets" },
        }),
      );
      return file;
    };
    const onPull = await w.run(["github", "comment", "--event", event({ number: 2, pull_request: { url: "x" } }), "--json"], { env });
    expect(onPull.code, onPull.stderr).toBe(0);
    expect(JSON.parse(onPull.stdout)).toMatchObject({ status: "done", command: "/dissent review" });
    expect(gh.reviews.filter((r) => r.pull === 2 && r.login === "dissent-bot")).toHaveLength(1);
    const reply = gh.comments.filter((c) => c.issue === 2 && c.login === "dissent-bot").at(-1);
    expect(reply?.body).toMatch(/@maintainer-mia `\/dissent review`: reviewed [0-9a-f]{7} against its description: blocking/);

    const onIssue = await w.run(["github", "comment", "--event", event({ number: 1 }), "--json"], { env });
    expect(JSON.parse(onIssue.stdout)).toMatchObject({ status: "failed" });
    expect(JSON.parse(onIssue.stdout).detail).toContain("comment it on the pull request");

    const bad = await w.run(["pr", "review", "seven"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    const missing = await w.run(["pr", "review", "99"], { env });
    expect(missing.stderr).toMatch(/acme\/widgets has no pull request #99/);
    // GitHub will not render a diff this large (406): one line, nothing posted, no model asked.
    const reviews = gh.reviews.length;
    const asked = w.double.requests.length;
    gh.fail({
      method: "GET",
      path: /\/pulls\/2$/,
      accept: /diff/,
      status: 406,
      body: {
        message: "Sorry, the diff exceeded the maximum number of lines (20000)",
        documentation_url: "https://docs.github.com/rest/pulls/pulls#get-a-pull-request",
        status: "406",
      },
    });
    const huge = await w.run(["pr", "review", "2"], { env });
    expect(huge.code, huge.stdout + huge.stderr).toBe(2);
    expect(huge.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/GitHub will not give the diff of pull request #2 \(406: Sorry, the diff exceeded .*\): it is too large to review; split it/),
    ]);
    expect(gh.reviews).toHaveLength(reviews);
    expect(w.double.requests).toHaveLength(asked);
  });

  it("one SIGTERM while a critic waits on its model stops the review at once (exit 143); the next run reviews the head and closes its check", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dissent-pr-sigterm-"));
    open.push({ close: async () => rmSync(dir, { recursive: true, force: true }) });
    const { repo, origin } = sumRepository(dir);
    gitIn(repo, "checkout", "--quiet", "-b", "alice/sum");
    writeFileSync(join(repo, "src", "sum.js"), ADDS);
    gitIn(repo, "commit", "--quiet", "-am", "sum");
    gitIn(repo, "push", "--quiet", "origin", "alice/sum");
    const head = gitIn(repo, "rev-parse", "HEAD").trim();
    const gh = await startGithubDouble({ gitRepo: origin });
    open.push(gh);
    personOpens(gh, { number: 2, head: "alice/sum", sha: head, body: "Implements sum." });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = true;
    const w = await holdWorld(
      { "review.correctness": async () => (held ? (await gate, { content: '{"findings": []}' }) : { content: '{"findings": []}' }) },
      { extra: `tracker: { type: github, repo: "acme/widgets", base_url: "${gh.url}" }\n` },
      { GITHUB_TOKEN: gh.token, DISSENT_GITHUB_WRITE_INTERVAL_MS: "0" },
    );
    open.push({ close: async () => (release(), await w.close()) });
    const p = w.start(["pr", "review", "2"]);
    await until(() => w.requestsOf("review.correctness").length > 0, 120_000);
    p.child.kill("SIGTERM");
    const r = await p.done;
    expect(r.code, r.stderr).toBe(143);
    expect(gh.reviews.filter((x) => x.pull === 2)).toEqual([]); // nothing half-posted
    held = false;
    release();
    const again = JSON.parse((await w.run(["pr", "review", "2", "--json"])).stdout) as PrReviewJson;
    expect(again).toMatchObject({ head, status: "passed", check: "success" });
    expect(gh.checkRuns.filter((c) => c.head_sha === head).map((c) => c.status)).toEqual(["completed"]);
  });

  it("a person's pull request that closes an issue dissent planned settles the concerns its plan forwarded: the one its diff answers is off the issue's record, and on merge only the ignored one is a known gap", async () => {
    const w = await implementWorld({ mode: "good", quirks: { ...frontier, producerIgnores: true }, defects: SUM_FORWARDED });
    open.push(w);
    const { gh, env } = await plannedOnGithub(w);
    open.push(gh);
    const show = async () =>
      JSON.parse((await w.run(["issue", "show", "1", "--json"], { env })).stdout) as {
        pending_concerns: { id: string; concern: string; must_address_by: string }[];
      };
    const forwarded = (await show()).pending_concerns.filter((c) => c.must_address_by === "implement");
    const negatives = forwarded.find((c) => SUM_FORWARDED[0]?.wordings.includes(c.concern));
    const nonNumbers = forwarded.find((c) => SUM_FORWARDED[1]?.wordings.includes(c.concern));
    expect(negatives && nonNumbers).toBeTruthy();
    // A person's change: the sum, and the test of negative numbers one concern asks for; nothing about non-numbers.
    gitIn(w.repo, "checkout", "--quiet", "-b", "alice/sum", "main");
    writeFileSync(join(w.repo, "src", "sum.js"), ADDS);
    writeFileSync(
      join(w.repo, "test.js"),
      'import assert from "node:assert/strict";\nimport { sum } from "./src/sum.js";\n\nassert.equal(sum(2, 3), 5);\nassert.equal(sum(-2, -3), -5);\nassert.equal(sum(0, 4), 4);\nconsole.log("sum: 3 tests passed");\n',
    );
    gitIn(w.repo, "commit", "--quiet", "-am", "sum, with negatives");
    gitIn(w.repo, "push", "--quiet", "origin", "alice/sum");
    const head = gitIn(w.repo, "rev-parse", "HEAD").trim();
    gitIn(w.repo, "checkout", "--quiet", "main");
    personOpens(gh, { number: 2, head: "alice/sum", sha: head, body: "Adds sum.\n\nCloses #1" });

    const out = await review(w, env, 2);
    expect(out.contract).toEqual({ kind: "plan", issue: "1" });
    expect(out.forwarded_concerns.find((f) => f.id === negatives?.id)).toMatchObject({ verdict: "addressed", file: "test.js" });
    expect(out.forwarded_concerns.find((f) => f.id === nonNumbers?.id)?.verdict).toBe("not_addressed");
    const pending = (await show()).pending_concerns.map((c) => c.id);
    expect(pending).not.toContain(negatives?.id);
    expect(pending).toContain(nonNumbers?.id);
    expect(gh.checkRuns.find((c) => c.head_sha === head)?.output.summary).toContain(`${negatives?.id} addressed in the diff`);

    // Merged: the ignored concern ships as a known gap, the answered one does not.
    expect(gh.mergePull(2).status).toBe(200);
    const merged = await w.run(["issue", "merged", "1", "--pr", "2", "--json"], { env });
    expect(merged.code, merged.stderr).toBe(0);
    const events = (await w.run(["events", "--issue", "1", "--json"], { env })).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; concerns?: { id: string }[] });
    const gaps = events.find((e) => e.type === "ShippedWithKnownGap")?.concerns?.map((c) => c.id) ?? [];
    expect(gaps).toContain(nonNumbers?.id);
    expect(gaps).not.toContain(negatives?.id);
  });

  it("every critic's provider down: one line naming pr review to run again, exit 1, the check cancelled, no review posted", async () => {
    const w = await implementWorld({ mode: "good", down: ["review.correctness", "review.tests", "review.security", "review.acceptance"] });
    open.push(w);
    const { gh, env } = await plannedOnGithub(w);
    open.push(gh);
    const head = pushChange(w, "alice/sum", SUBTRACTS, "sum");
    personOpens(gh, { number: 2, head: "alice/sum", sha: head, body: "Implements sum." });
    const r = await w.run(["pr", "review", "2"], { env });
    expect(r.code).toBe(1);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("dissent: error:"));
    expect(errors).toEqual([
      expect.stringMatching(
        /every critic of the review failed in round 1 .*so pull request #2 at head [0-9a-f]{7} was never reviewed; nothing was published — run dissent pr review 2 again once the model is back/,
      ),
    ]);
    expect(gh.checkRuns.filter((c) => c.head_sha === head).map((c) => c.history)).toEqual([["in_progress", "completed:cancelled"]]);
    expect(gh.reviews.filter((x) => x.pull === 2)).toEqual([]);
  });

  it("two reviews of one pull request at once: one reviews it, the other is one line saying it is being reviewed; one review is posted", async () => {
    const { w, gh, env } = await onGithub();
    const head = pushChange(w, "alice/sum", SUBTRACTS, "sum");
    personOpens(gh, { number: 2, head: "alice/sum", sha: head, body: "Implements sum." });
    const both = await Promise.all([w.run(["pr", "review", "2", "--json"], { env }), w.run(["pr", "review", "2", "--json"], { env })]);
    const done = both.filter((r) => r.code === 0);
    expect(done.length).toBeGreaterThanOrEqual(1);
    for (const r of both.filter((x) => x.code !== 0)) {
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toMatch(/^dissent: error: pull request #2 is being reviewed by another dissent \(host \S+, pid \d+, since \S+\)/);
    }
    expect(gh.reviews.filter((x) => x.pull === 2 && x.login === "dissent-bot")).toHaveLength(1);
  });
});
