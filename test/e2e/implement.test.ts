/**
 * `dissent issue implement` (issue 22, docs/implement.md) through the built CLI as a user runs it: a
 * real git repository, a scripted coding agent (test/fixtures/agents/scripted-agent.mjs), the review
 * critics through the realistic model double (frontier quirks), the local tracker.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { agentProcesses, gitIn, implementWorld, plannedOnGithub, type ImplementWorld } from "../support/implement-world.js";
import { startDissent, until } from "../support/proc.js";

vi.setConfig({ testTimeout: 240_000 });

interface ConcernJson {
  id: string;
  raised_by: string;
  severity: string;
  concern: string;
  evidence: string;
  must_address_by: string;
}
interface ImplementJson {
  issue: string;
  status: "review" | "hitl";
  branch: string;
  worktree: string;
  attempts: { attempt: number; outcome: string; agent_exit_code: number | null; test_exit_code: number | null; files: number }[];
  stage: { outcome: string; rounds: number; calls: number };
  acceptance: { criterion: string; verdict: string; evidence?: string }[];
  pending_concerns: ConcernJson[];
  pull_request: { where: string; number: number | null; draft: boolean };
  labels: string[];
}
interface EventJson {
  type: string;
  attempt?: number;
  outcome?: string;
  cached?: boolean;
  role?: string;
  stage?: string;
  round?: number;
  concern?: ConcernJson;
  agent?: { timed_out: boolean; exit_code: number | null; output_tail: string };
  test?: { exit_code: number | null; output_tail: string } | null;
  escaped?: string[];
  error?: string;
}

const worlds: ImplementWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});
async function world(
  mode: string,
  o: { implement?: string; extra?: string; env?: Record<string, string>; attemptTimeoutMs?: number; sandbox?: "bubblewrap" | "none" } = {},
) {
  const w = await implementWorld({ mode, ...o });
  worlds.push(w);
  return w;
}
async function implement(w: ImplementWorld, id: string, env?: Record<string, string>) {
  const r = await w.run(["issue", "implement", id, "--json"], env ? { env } : {});
  expect(r.code, r.stderr).toBe(0);
  return { out: JSON.parse(r.stdout) as ImplementJson, r };
}
async function events(w: ImplementWorld, id: string): Promise<EventJson[]> {
  const r = await w.run(["events", "--issue", id, "--json"]);
  return r.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EventJson);
}
const agentRuns = (w: ImplementWorld) =>
  existsSync(w.agentLog)
    ? readFileSync(w.agentLog, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("attempt "))
    : [];

describe("issue implement on the local tracker", () => {
  it("failing tests block the first attempt; the retry, given the concern, fixes them; the review is recorded and shown; the user's checkout is untouched", async () => {
    const w = await world("bug-then-fix");
    const id = await w.readyIssue();
    const mainBefore = gitIn(w.repo, "rev-parse", "HEAD").trim();
    const { out } = await implement(w, id);

    expect(out.status).toBe("review");
    expect(out.labels).toContain("dissent-review");
    expect(out.labels).not.toContain("dissent-ready");
    expect(out.branch).toBe(`dissent/issue-${id}`);
    expect(out.attempts.map((a) => [a.attempt, a.outcome, a.test_exit_code])).toEqual([
      [1, "tested", 1],
      [2, "tested", 0],
    ]);
    expect(out.stage).toMatchObject({ outcome: "converged", rounds: 2 });
    expect(out.acceptance.length).toBeGreaterThan(0);
    expect(out.acceptance.every((v) => v.verdict === "met")).toBe(true);
    expect(out.pull_request).toMatchObject({ where: "store", number: null, draft: false });

    // The first attempt was blocked by the failing tests and the subtraction the correctness critic quoted.
    const log = await events(w, id);
    const blocked = log.filter((e) => e.type === "ConcernBlocked" && e.round === 1).map((e) => e.concern as ConcernJson);
    expect(blocked.map((c) => c.raised_by).sort()).toEqual(expect.arrayContaining(["review.correctness", "test_command"]));
    expect(blocked.find((c) => c.raised_by === "review.correctness")?.evidence).toMatch(/a [-–] b/); // a near-verbatim quote
    // The retry's task carried those concerns; the task on stdin is the task file.
    const runs = agentRuns(w);
    expect(runs).toHaveLength(2);
    expect(runs[0]).toMatch(/^attempt 1 mode bug-then-fix retry false stdin same/);
    expect(runs[1]).toMatch(/^attempt 2 mode bug-then-fix retry true stdin same/);
    const attempts = log.filter((e) => e.type === "ImplementAttempt");
    expect(attempts.map((e) => e.test?.exit_code)).toEqual([1, 0]);
    expect(attempts[0]?.test?.output_tail).toMatch(/AssertionError/);

    // The branch holds the fix; the user's checkout (main, its files, its status) is as it was.
    expect(gitIn(w.repo, "show", `${out.branch}:src/sum.js`)).toContain("return a + b;");
    expect(gitIn(w.repo, "rev-parse", "HEAD").trim()).toBe(mainBefore);
    expect(gitIn(w.repo, "status", "--porcelain")).toBe("");
    expect(readFileSync(join(w.repo, "src", "sum.js"), "utf8")).toContain("not implemented");
    // Nothing was pushed: the local tracker records the review in the store.
    expect(gitIn(w.origin, "branch", "--list")).not.toContain("dissent/");

    const shown = await w.run(["issue", "show", id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("## Implementation");
    expect(shown.stdout).toContain(`branch: dissent/issue-${id}`);
    expect(shown.stdout).toMatch(/- \[x\] .+ \(met — /);
    expect(shown.stdout).toContain("Tests: `node test.js` passed (exit 0).");
    const detail = JSON.parse((await w.run(["issue", "show", id, "--json"])).stdout) as {
      implementation: { branch: string; attempts: { attempt: number; test_exit_code: number | null }[]; pull_request: { where: string }; body: string };
    };
    expect(detail.implementation.branch).toBe(out.branch);
    expect(detail.implementation.attempts.map((a) => a.test_exit_code)).toEqual([1, 0]);
    expect(detail.implementation.pull_request.where).toBe("store");
    expect(detail.implementation.body).toMatch(/^Closes #/);
    // The body tells the story: attempt 1's blockers, each fixed by attempt 2.
    expect(detail.implementation.body).toMatch(
      /- \*\*Attempt 1\*\* — tested, tests failed \(exit 1\); blocked by:\n {2}- \*\*\S+\*\* CRITICAL \(review\.correctness\): .+ — fixed in attempt 2/,
    );
    expect(detail.implementation.body).toContain("- **Attempt 2** — tested, tests passed: nothing blocked it.");
    const text = await w.run(["events", "--issue", id]);
    expect(text.stdout).toMatch(/ImplementAttempt\s+\S+\s+attempt 1: tested .* tests failed/);
    expect(text.stdout).toMatch(/PullRequestOpened\s+\S+\s+review recorded/);
  });

  it("an attempt that changes nothing costs no review call; a second run numbers its attempts after the first's (DISSENT_ATTEMPT, the task file, the events)", async () => {
    const w = await world("idle-then-fix");
    const id = await w.readyIssue();
    const { out } = await implement(w, id);
    expect(out.attempts.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, "no_changes"],
      [2, "tested"],
    ]);
    let log = await events(w, id);
    const reviewCalls = (round: number) => log.filter((e) => e.type === "ModelCall" && e.stage === "implementation_review" && e.round === round);
    expect(reviewCalls(1)).toEqual([]); // dissent's own check blocked it: nothing for a model to read
    expect(reviewCalls(2).length).toBeGreaterThan(0);
    const blocked = log.filter((e) => e.type === "ConcernBlocked" && e.round === 1).map((e) => e.concern?.raised_by);
    expect(blocked).toEqual(["test_command"]);

    const again = await implement(w, id);
    expect(again.out.attempts.map((a) => a.attempt)).toEqual([3]);
    expect(agentRuns(w).map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual(["attempt 1", "attempt 2", "attempt 3"]);
    log = await events(w, id);
    expect(log.filter((e) => e.type === "ImplementAttemptStarted").map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(existsSync(join(w.home, "tasks", `issue-${id}-attempt-3.md`))).toBe(true);
  });

  it("a security finding quoting the diff blocks; the retry removes the injection", async () => {
    const w = await world("insecure-then-fix");
    const id = await w.readyIssue();
    const { out } = await implement(w, id);
    expect(out.status).toBe("review");
    expect(out.attempts).toHaveLength(2);
    const log = await events(w, id);
    const security = log.find((e) => e.type === "ConcernBlocked" && e.concern?.raised_by === "review.security");
    expect(security?.round).toBe(1);
    expect(security?.concern?.severity).toBe("CRITICAL");
    expect(security?.concern?.evidence).toMatch(/execSync\(.convert .\s*\+ name\)/); // near-verbatim: curly quotes ground too
    expect(gitIn(w.repo, "show", `${out.branch}:src/convert.js`)).toContain("execFileSync");
  });

  it("an agent that ignores the concern is stopped by oscillation: the CRITICAL goes to the review's body, the issue to a person; the merge carries it into the wiki and removes the worktree", async () => {
    const w = await world("insecure-always");
    const id = await w.readyIssue();
    const { out } = await implement(w, id);
    expect(out.stage.outcome).toBe("oscillation");
    expect(out.attempts).toHaveLength(2);
    expect(out.status).toBe("hitl");
    expect(out.labels).toContain("dissent-hitl");
    expect(out.pull_request.draft).toBe(true);
    const injection = out.pending_concerns.find((c) => c.raised_by === "review.security");
    expect(injection).toMatchObject({ severity: "CRITICAL", must_address_by: "pull_request" });
    const shown = await w.run(["issue", "show", id]);
    expect(shown.stdout).toContain(`**${injection?.id}** CRITICAL`);
    expect((await events(w, id)).some((e) => e.type === "OscillationDetected")).toBe(true);

    expect(existsSync(out.worktree)).toBe(true);
    const merged = await w.run(["issue", "merged", id, "--pr", "7", "--json"]);
    expect(merged.code, merged.stderr).toBe(0);
    const m = JSON.parse(merged.stdout) as { gaps: ConcernJson[]; wiki_entries: string[]; labels: string[] };
    expect(m.gaps.map((g) => g.id)).toContain(injection?.id);
    expect(m.wiki_entries.length).toBeGreaterThan(0);
    expect(m.labels).toContain("dissent-fixed");
    expect(existsSync(out.worktree)).toBe(false);
    const wiki = await w.run(["wiki", "show", m.wiki_entries[0] ?? ""]);
    expect(wiki.stdout).toMatch(/shell|injection/i);
  });

  it("an agent that hangs is stopped at attempt_timeout_ms with everything it started, and the attempt counts", async () => {
    const w = await world("hang", { attemptTimeoutMs: 2_500 });
    const id = await w.readyIssue();
    const { out } = await implement(w, id);
    expect(out.attempts.every((a) => a.outcome === "timed_out")).toBe(true);
    expect(out.status).toBe("hitl");
    const log = await events(w, id);
    const attempts = log.filter((e) => e.type === "ImplementAttempt");
    expect(attempts.length).toBe(out.attempts.length);
    expect(attempts.every((e) => e.agent?.timed_out === true)).toBe(true);
    // Every attempt started a grandchild; none is left: each went with its agent's sandbox.
    const pids = agentRuns(w).length ? (readFileSync(w.agentLog, "utf8").match(/grandchild (\d+)/g) ?? []) : [];
    expect(pids.length).toBe(out.attempts.length);
    expect(agentProcesses(w.agentLog)).toEqual([]);
    expect(out.pending_concerns.some((c) => c.raised_by === "test_command" && /attempt_timeout_ms/.test(c.concern))).toBe(true);
  });

  it("unsandboxed (implement.sandbox: none), an agent that writes outside its clone (a path under ..) fails the attempt: one error line, the issue to a person, nothing committed", async () => {
    const w = await world("escape", { sandbox: "none" });
    const id = await w.readyIssue();
    const main = gitIn(w.repo, "rev-parse", "main").trim();
    const r = await w.run(["issue", "implement", id]);
    expect(r.code).toBe(1);
    const errors = r.stderr
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("dissent: error:"));
    expect(errors).toHaveLength(1);
    expect(r.stderr.trim().split("\n").at(-1)).toBe(errors[0]);
    expect(errors[0]).toMatch(/^dissent: error: the coding agent wrote outside its worktree in attempt 1 of issue \d+ \(.*escaped\.txt/);
    const log = await events(w, id);
    expect(log.find((e) => e.type === "ImplementAttempt")).toMatchObject({ outcome: "escaped" });
    expect(log.find((e) => e.type === "ImplementAttempt")?.escaped?.some((p) => p.endsWith("escaped.txt"))).toBe(true);
    expect(log.some((e) => e.type === "ImplementFailed")).toBe(true);
    expect(log.some((e) => e.type === "PullRequestOpened")).toBe(false);
    // Nothing was published: the user's checkout has no branch of the issue, or one still at main.
    expect(gitIn(w.repo, "branch", "--list", `dissent/issue-${id}`).trim() === "" || gitIn(w.repo, "rev-parse", `dissent/issue-${id}`).trim() === main).toBe(
      true,
    );
    const shown = await w.run(["issue", "show", id, "--json"]);
    expect((JSON.parse(shown.stdout) as { labels: string[] }).labels).toContain("dissent-hitl");
  });

  it("the agent sees only implement.env and PATH, HOME, LANG: never a provider key dissent holds", async () => {
    const w = await world("env");
    // The provider's key (api_key_env) and other secrets are in dissent's environment, not the agent's.
    const config = readFileSync(join(w.dir, "dissent.config.yaml"), "utf8").replace(
      /base_url: "([^"]+)" \}/,
      'base_url: "$1", api_key_env: TEST_PROVIDER_KEY }',
    );
    writeFileSync(join(w.dir, "dissent.config.yaml"), config);
    const env = {
      TEST_PROVIDER_KEY: "sk-test-provider-key-0123456789",
      OPENAI_API_KEY: "sk-openai-0123456789abcdef",
      GITHUB_TOKEN: "ghp_notlisted0123456789",
      LANG: "C.UTF-8",
    };
    const id = await (async () => {
      const created = await w.run(["issue", "new", "--title", "Add a sum function", "--body", "sum(a, b) returns a + b."], { env });
      const planned = await w.run(["issue", "plan", created.stdout.trim(), "--json"], { env });
      expect(planned.code, planned.stderr).toBe(0);
      return created.stdout.trim();
    })();
    const { out } = await implement(w, id, env);
    const seen = JSON.parse(gitIn(w.repo, "show", `${out.branch}:seen-env.json`)) as string[];
    for (const k of ["AGENT_MODE", "AGENT_LOG", "PATH", "HOME", "LANG", "DISSENT_TASK_FILE"]) expect(seen).toContain(k);
    for (const k of ["TEST_PROVIDER_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "DISSENT_HOME"]) expect(seen).not.toContain(k);
    // The shell may add its own bookkeeping (PWD, SHLVL, _); nothing else of dissent's environment.
    expect(seen.filter((k) => !["PWD", "SHLVL", "_", "OLDPWD"].includes(k)).sort()).toEqual(
      ["AGENT_LOG", "AGENT_MODE", "DISSENT_AGENT_RUN", "DISSENT_ATTEMPT", "DISSENT_ISSUE_ID", "DISSENT_TASK_FILE", "HOME", "LANG", "PATH"].sort(),
    );
  });

  it("kill -9 in the middle of an attempt: the next issue implement resumes at that attempt, the first attempt is not run again and its review comes from the cache", async () => {
    const w = await world("pause-second");
    const id = await w.readyIssue();
    const killed = startDissent(["issue", "implement", id], { cwd: w.dir, env: { DISSENT_HOME: w.home, AGENT_MODE: "pause-second", AGENT_LOG: w.agentLog } });
    await until(() => existsSync(w.agentLog) && /paused \d+/.test(readFileSync(w.agentLog, "utf8")), 120_000);
    expect(agentProcesses(w.agentLog).length).toBeGreaterThan(0);
    // While the agent works, issue list says so (the plan is still ready in the store).
    const listed = await w.run(["issue", "list"]);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+implementing\\s`, "m"));
    killed.child.kill("SIGKILL");
    await killed.done;
    // bubblewrap's --die-with-parent: the agent dies with the dissent that started it, no orphan is left.
    await until(() => agentProcesses(w.agentLog).length === 0, 15_000);
    writeFileSync(`${w.agentLog}.release`, "");

    const { out } = await implement(w, id);
    expect(out.status).toBe("review");
    expect(out.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    const after = JSON.parse((await w.run(["issue", "list", "--json"])).stdout) as { id: string; status: string }[];
    expect(after.find((i) => i.id === id)?.status).toBe("in_review");
    expect((await w.run(["issue", "list"])).stdout).toMatch(new RegExp(`^${id}\\s+in review\\s`, "m"));
    const runs = agentRuns(w).map((l) => l.split(" ").slice(0, 2).join(" "));
    expect(runs).toEqual(["attempt 1", "attempt 2", "attempt 2"]);
    const log = await events(w, id);
    expect(log.filter((e) => e.type === "ImplementAttempt" && e.attempt === 1)).toHaveLength(1);
    expect(log.filter((e) => e.type === "ImplementAttemptStarted" && e.attempt === 2)).toHaveLength(2);
    // Round 1's critics were asked once over the network; on resume the same requests came from the cache.
    const round1 = log.filter((e) => e.type === "ModelCall" && e.stage === "implementation_review" && e.round === 1);
    const network = round1.filter((e) => !e.cached).map((e) => e.role);
    const cached = round1.filter((e) => e.cached).map((e) => e.role);
    expect(cached.sort()).toEqual(network.sort());
  });

  it("one SIGTERM while the agent works stops issue implement with 143 and the agent's process group with it; the next run resumes and finishes", async () => {
    const w = await world("pause-second");
    const id = await w.readyIssue();
    const stopped = startDissent(["issue", "implement", id], { cwd: w.dir, env: { DISSENT_HOME: w.home, AGENT_MODE: "pause-second", AGENT_LOG: w.agentLog } });
    await until(() => existsSync(w.agentLog) && /paused \d+/.test(readFileSync(w.agentLog, "utf8")), 120_000);
    expect(agentProcesses(w.agentLog).length).toBeGreaterThan(0);
    stopped.child.kill("SIGTERM");
    const r = await stopped.done;
    expect(r.code, r.stderr).toBe(143);
    await until(() => agentProcesses(w.agentLog).length === 0, 15_000); // the agent does not outlive the command that started it
    writeFileSync(`${w.agentLog}.release`, "");

    const { out } = await implement(w, id);
    expect(out.status).toBe("review");
    expect(out.attempts.map((a) => a.attempt)).toEqual([1, 2]);
  });
});

describe("issue implement on GitHub (the GitHub double over a bare repository)", () => {
  async function githubWorld(mode: string) {
    const w = await world(mode);
    const { gh, env } = await plannedOnGithub(w);
    worlds.push({ ...w, close: () => gh.close() });
    return { w, gh, env };
  }

  it("pushes the branch (never main) and opens a pull request that closes the issue with the checklist; a later run updates it in place", async () => {
    const { w, gh, env } = await githubWorld("bug-then-fix");
    const mainBefore = gitIn(w.origin, "rev-parse", "main").trim();
    const { out } = await implement(w, "1", env);
    expect(out.status).toBe("review");
    expect(out.pull_request).toMatchObject({ where: "github", draft: false });
    const pr = gh.pulls.get(out.pull_request.number ?? 0);
    expect(pr).toMatchObject({ head: "dissent/issue-1", base: "main", draft: false, title: "Add a sum function" });
    expect(pr?.body).toMatch(/^Closes #1\n/);
    expect(pr?.body).toMatch(/## Acceptance criteria\n\n- \[x\] /);
    expect(pr?.body).toContain("Tests: `node test.js` passed (exit 0).");
    expect(pr?.sha).toBe(gitIn(w.repo, "rev-parse", "dissent/issue-1").trim());
    expect(gitIn(w.origin, "rev-parse", "main").trim()).toBe(mainBefore);
    expect(gh.issues.get(1)?.labels).toContain("dissent-review");

    const again = await implement(w, "1", env);
    expect(again.out.pull_request).toMatchObject({ number: out.pull_request.number, updated: true });
    expect([...gh.pulls.values()]).toHaveLength(1);
    expect(gh.writes().filter((x) => /^PATCH \/pulls\/\d+$/.test(x))).toHaveLength(1); // the pull request (its review comments are patched too)
  });

  it("a maintainer's /dissent implement comment (what the Action runs) implements the issue: the pull request opens and the plan comment says so", async () => {
    const { w, gh, env } = await githubWorld("bug-then-fix");
    gh.collaborators.set("maintainer-mia", "write");
    const c = gh.addComment(1, "/dissent implement", "maintainer-mia");
    const payload = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/github/issue_comment.created.json"), "utf8")) as {
      issue: { number: number };
      comment: { id: number; body: string; user: { login: string } };
      sender: { login: string };
    };
    payload.issue.number = 1;
    payload.comment = { ...payload.comment, id: c.id, body: c.body, user: { ...payload.comment.user, login: "maintainer-mia" } };
    payload.sender.login = "maintainer-mia";
    const file = join(w.dir, "event.json");
    writeFileSync(file, JSON.stringify(payload));
    const r = await w.run(["github", "comment", "--event", file, "--json"], { env });
    expect(r.code, r.stderr).toBe(0);
    const outcome = JSON.parse(r.stdout) as { status: string; command: string; detail: string };
    expect(outcome).toMatchObject({ status: "done", command: "/dissent implement" });
    const pr = [...gh.pulls.values()];
    expect(pr).toHaveLength(1);
    expect(pr[0]).toMatchObject({ head: "dissent/issue-1", base: "main" });
    expect(outcome.detail).toContain(`implemented: review`);
    expect(gh.issues.get(1)?.labels).toContain("dissent-review");
  });

  it("a CRITICAL the agent never fixes makes the pull request a draft carrying the concern, and the issue dissent-hitl", async () => {
    const { w, gh, env } = await githubWorld("insecure-always");
    const { out } = await implement(w, "1", env);
    expect(out.status).toBe("hitl");
    const pr = gh.pulls.get(out.pull_request.number ?? 0);
    expect(pr?.draft).toBe(true);
    const injection = out.pending_concerns.find((c) => c.raised_by === "review.security");
    expect(pr?.body).toContain(`**${injection?.id}** CRITICAL`);
    expect(gh.issues.get(1)?.labels).toContain("dissent-hitl");
    expect(gh.issues.get(1)?.labels).not.toContain("dissent-implementing");
  });
});
