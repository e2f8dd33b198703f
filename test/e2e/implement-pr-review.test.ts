/**
 * The review where maintainers read reviews (issue 33, docs/adr/037): `dissent issue implement` on
 * the GitHub tracker through the built CLI — the scripted agent, the realistic model double as the
 * review council, the GitHub double over a bare repository — leaves on the pull request one review
 * per round with inline comments on the lines the findings quote, resolves them as later attempts
 * fix them, never touches a person's comment, and keeps a `dissent` check on every attempt's commit.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { GithubDouble } from "../support/github-double.js";
import { agentProcesses, gitIn, implementWorld, plannedOnGithub, type ImplementWorld } from "../support/implement-world.js";
import { startDissent, until } from "../support/proc.js";

vi.setConfig({ testTimeout: 240_000 });

interface ImplementJson {
  status: string;
  attempts: { attempt: number; outcome: string }[];
  pull_request: { where: string; number: number | null; updated: boolean };
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

async function onGithub(mode: string, extra?: string): Promise<{ w: ImplementWorld; gh: GithubDouble; env: Record<string, string> }> {
  const w = await implementWorld({ mode, ...(extra ? { extra } : {}) });
  open.push(w);
  const { gh, env } = await plannedOnGithub(w);
  open.push(gh);
  return { w, gh, env };
}

async function implement(w: ImplementWorld, env: Record<string, string>): Promise<{ out: ImplementJson; stderr: string }> {
  const r = await w.run(["issue", "implement", "1", "--json"], { env });
  expect(r.code, r.stderr).toBe(0);
  return { out: JSON.parse(r.stdout) as ImplementJson, stderr: r.stderr };
}

const ours = (gh: GithubDouble) => gh.reviewComments.filter((c) => c.login === "dissent-bot");
const markerOf = (body: string) => /^<!-- dissent:finding key=issue-1 id=(\S+) fp=\S+ q=\S+ state=(open|resolved) /.exec(body);

describe("issue implement's review on the pull request", () => {
  it("attempt 1's review puts its findings on the lines they quote; attempt 2's resolves them; the check goes in progress → failure, then in progress → success", async () => {
    const { w, gh, env } = await onGithub("bug-then-fix", "serve: { public_url: https://dissent.example.com/ }");
    const { out } = await implement(w, env);
    expect(out.status).toBe("review");
    expect(out.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    const number = out.pull_request.number ?? 0;
    expect(gh.pulls.get(number)?.sha).toBe(gitIn(w.origin, "rev-parse", "dissent/issue-1").trim());

    // Each attempt's commit was pushed as it was made, and checked while its review ran.
    const commits = gitIn(w.origin, "rev-list", "--reverse", "main..dissent/issue-1").trim().split("\n");
    expect(commits).toHaveLength(2);
    const checkOf = (sha: string) => gh.checkRuns.filter((c) => c.head_sha === sha && c.name === "dissent");
    expect(checkOf(commits[0] ?? "")).toHaveLength(1);
    expect(checkOf(commits[0] ?? "")[0]?.history).toEqual(["in_progress", "completed:failure"]);
    // Attempt 2 passed: success, or neutral when a critic left advice (the double's critics sometimes repeat a forwarded concern as one).
    const passed = checkOf(commits[1] ?? "")[0];
    expect(passed?.history).toEqual(["in_progress", `completed:${passed?.output.summary?.includes("No findings.") ? "success" : "neutral"}`]);
    const failed = checkOf(commits[0] ?? "")[0];
    expect(failed?.details_url).toBe("https://dissent.example.com/#/issue/1");
    expect(failed?.output.summary).toContain("### Acceptance criteria");
    expect(failed?.output.summary).toMatch(/\| CRITICAL \| `\S+` \| review\.correctness \| .+ \| blocks \|/);
    expect(failed?.output.summary).toContain("Tests: `node test.js` failed (exit 1).");

    // One review per round, on its attempt's commit, posted once the pull request was opened.
    const reviews = gh.reviews.filter((r) => r.pull === number);
    expect(reviews.map((r) => [r.commit_id, r.state])).toEqual([
      [commits[0], "COMMENTED"],
      [commits[1], "COMMENTED"],
    ]);
    expect(reviews[0]?.body).toMatch(/^<!-- dissent:review key=issue-1 round=1 -->\n### dissent · review of attempt 1: \d+ blocking findings?/);
    // The subtraction the correctness critic quoted is commented on its line: src/sum.js line 2 of attempt 1.
    const comments = ours(gh);
    const subtracts = comments.find((c) => c.path === "src/sum.js" && /> .*return a [-–] b;/.test(c.body));
    expect(subtracts).toMatchObject({ line: 2, side: "RIGHT", commit_id: commits[0], review_id: reviews[0]?.id });
    expect(subtracts?.body).toMatch(/\*\*CRITICAL\*\* · blocks · `\S+` · review\.correctness/);
    expect(subtracts?.body).toMatch(/> .*return a [-–] b;/);
    // The failing tests quote the test output, no line of the diff: in the review's body.
    expect(reviews[0]?.body).toMatch(/#### Not on a line of the diff\n\n- \*\*\S+\*\* CRITICAL \(blocks\) \(test_command\)/);
    // Attempt 2 fixed it: the same comment now says so; no new comment was posted for it.
    expect(markerOf(subtracts?.body ?? "")?.[2]).toBe("resolved");
    expect(subtracts?.body).toContain("✅ **Resolved in attempt 2**");
    expect(reviews[1]?.body).toMatch(/^<!-- dissent:review key=issue-1 round=2 -->\n### dissent · review of attempt 2: /);
    expect(reviews[1]?.body).toContain(`Resolved since the last review: \`${markerOf(subtracts?.body ?? "")?.[1]}\``);
  });

  it("a later run reviews live on the open pull request, numbers its attempts 3 and 4, reopens and resolves dissent's own comment, and leaves a person's comment alone", async () => {
    const { w, gh, env } = await onGithub("bug-then-fix");
    const first = await implement(w, env);
    const number = first.out.pull_request.number ?? 0;
    const subtracts = ours(gh).find((c) => /> .*return a [-–] b;/.test(c.body));
    const id = markerOf(subtracts?.body ?? "")?.[1];
    expect(id).toBeDefined();
    const human = gh.addReviewComment(number, { path: "src/sum.js", line: 2, body: "Why not reuse the helper here?", login: "maintainer-mia" });
    const humanBefore = { ...human };
    const before = ours(gh).length;

    const second = await implement(w, env);
    expect(second.out.attempts.map((a) => a.attempt)).toEqual([3, 4]);
    expect(second.out.pull_request).toMatchObject({ number, updated: true });
    const reviews = gh.reviews.filter((r) => r.pull === number && r.login === "dissent-bot");
    expect(reviews.map((r) => /round=(\d+)/.exec(r.body)?.[1])).toEqual(["1", "2", "3", "4"]);
    // The subtraction came back in attempt 3 and went again in attempt 4: dissent's one comment on it said so, in place.
    const after = ours(gh).find((c) => c.id === subtracts?.id);
    expect(markerOf(after?.body ?? "")?.[2]).toBe("resolved");
    expect(after?.body).toContain("✅ **Resolved in attempt 4**");
    expect(after?.body).toMatch(/raised in attempt 1 · raised again in attempt 3/);
    expect(reviews[2]?.body).toMatch(/Still raised, on their earlier comments: `IMPLEMENT-CORRECTNESS-\d+`/);
    expect(ours(gh)).toHaveLength(before); // nothing piled up
    // A person's comment is never written to.
    expect(gh.reviewComments.find((c) => c.id === human.id)).toEqual(humanBefore);
    expect(gh.requests.filter((r) => r.method !== "GET" && r.path.endsWith(`/comments/${human.id}`))).toEqual([]);
    // Every attempt's commit has its check; attempt 3's failed, attempt 4's passed.
    const commits = gitIn(w.origin, "rev-list", "--reverse", "main..dissent/issue-1").trim().split("\n");
    expect(commits).toHaveLength(4);
    expect(commits.map((sha) => gh.checkRuns.find((c) => c.head_sha === sha)?.conclusion?.replace("neutral", "success"))).toEqual([
      "failure",
      "success",
      "failure",
      "success",
    ]);
  });

  it("kill -9 mid-attempt, then the run resumed: attempt 1's check is found again on its commit, and each round's review is posted once", async () => {
    const { w, gh, env } = await onGithub("pause-second");
    const killed = startDissent(["issue", "implement", "1"], {
      cwd: w.dir,
      env: { DISSENT_HOME: w.home, AGENT_MODE: "pause-second", AGENT_LOG: w.agentLog, ...env },
    });
    await until(() => existsSync(w.agentLog) && /paused \d+/.test(readFileSync(w.agentLog, "utf8")), 120_000);
    const first = gitIn(w.origin, "rev-parse", "dissent/issue-1").trim(); // attempt 1, pushed as it was made
    await until(() => gh.checkRuns.some((c) => c.head_sha === first && c.status === "completed"), 60_000);
    expect(gh.checkRuns.find((c) => c.head_sha === first)?.conclusion).toBe("failure");
    killed.child.kill("SIGKILL");
    await killed.done;
    await until(() => agentProcesses(w.agentLog).length === 0, 15_000);
    writeFileSync(`${w.agentLog}.release`, "");

    const { out } = await implement(w, env);
    expect(out.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(gh.checkRuns.filter((c) => c.head_sha === first)).toHaveLength(1); // found again, not a second one
    expect(gh.checkRuns.find((c) => c.head_sha === first)?.history).toEqual(["in_progress", "completed:failure", "in_progress", "completed:failure"]);
    const rounds = gh.reviews.filter((r) => r.pull === out.pull_request.number).map((r) => /round=(\d+)/.exec(r.body)?.[1]);
    expect(rounds).toEqual(["1", "2"]);
  });

  it("with a personal access token the verdicts go on the commits as commit statuses; review.event REQUEST_CHANGES on the token's own pull request comments", async () => {
    const { w, gh, env } = await onGithub("bug-then-fix", "review: { event: REQUEST_CHANGES, inline_min_severity: CRITICAL }");
    // A personal token: check runs are refused (403), commit statuses are not.
    gh.fail({ method: "POST", path: /\/check-runs$/, status: 403, body: { message: "You must authenticate via a GitHub App." }, times: 10 });
    const { out, stderr } = await implement(w, env);
    expect(stderr).not.toMatch(/warning: .*check/);
    expect(gh.checkRuns).toEqual([]);
    const commits = gitIn(w.origin, "rev-list", "--reverse", "main..dissent/issue-1").trim().split("\n");
    expect(commits.map((sha) => gh.statuses.filter((s) => s.sha === sha && s.context === "dissent").map((s) => s.state))).toEqual([
      ["pending", "failure"],
      ["pending", "success"],
    ]);
    const reviews = gh.reviews.filter((r) => r.pull === out.pull_request.number);
    expect(reviews.map((r) => r.state)).toEqual(["COMMENTED", "COMMENTED"]); // GitHub refuses a change request on one's own pull request
    // inline_min_severity CRITICAL: only CRITICAL findings are inline.
    for (const c of ours(gh)) expect(c.body).toMatch(/\*\*CRITICAL\*\*/);
  });
});
