import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { dissent, scratch, type CliResult } from "../support/cli.js";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { council, findings, holdConfig } from "../support/hold.js";
import { startOpenAIServer, type FakeOpenAI } from "../support/openai-server.js";

/**
 * `dissent github comment --event FILE`, the command the Action runs on `issue_comment` (docs/github-action.md),
 * with a recorded event payload and the GitHub double.
 */

vi.setConfig({ testTimeout: 120_000 });

const TOKEN = "ghp_testTOKEN1234567890";
const FIXTURE = join(import.meta.dirname, "../fixtures/github/issue_comment.created.json");
const PLAN = "<!-- dissent:plan -->";
const REPLY = "<!-- dissent:reply -->";
const MED = { severity: "MEDIUM", category: "test_strategy", concern: "The test plan lacks a case for a flaky network during upload" };

let gh: GithubDouble;
let models: FakeOpenAI;
let dir: ReturnType<typeof scratch>;

beforeEach(async () => {
  gh = await startGithubDouble({ token: TOKEN });
  gh.addIssue({ number: 12, title: "Retry failed uploads", body: "Uploads fail on flaky networks.", labels: ["bug", "dissent-load-bearing"] });
  gh.collaborators.set("maintainer-mia", "maintain");
  gh.collaborators.set("reader-rui", "read");
  models = await startOpenAIServer(council({ "plan.tester": findings([MED]) }));
  dir = scratch("dissent-gh-comment-");
  dir.write("dissent.config.yaml", holdConfig(models.url, { extra: `tracker: { type: github, repo: "acme/widgets", base_url: "${gh.url}" }\n` }));
});
afterEach(async () => {
  await models.close();
  await gh.close();
  dir.cleanup();
});

const run = (args: string[]) =>
  dissent(args, { cwd: dir.dir, env: { DISSENT_HOME: join(dir.dir, "home"), GITHUB_TOKEN: TOKEN, DISSENT_GITHUB_WRITE_INTERVAL_MS: "0" } });
const ok = <T>(r: CliResult): T => {
  if (r.code !== 0) throw new Error(`dissent exited ${String(r.code)}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
};

/** The recorded payload with this comment (posted in the double first, so it can be reacted to). */
function event(body: string, login: string, name = "event.json"): { path: string; commentId: number } {
  const c = gh.addComment(12, body, login);
  const payload = JSON.parse(readFileSync(FIXTURE, "utf8")) as { comment: { id: number; body: string; user: { login: string } }; sender: { login: string } };
  payload.comment.id = c.id;
  payload.comment.body = body;
  payload.comment.user.login = login;
  payload.sender.login = login;
  return { path: dir.write(name, JSON.stringify(payload)), commentId: c.id };
}

interface Outcome {
  status: string;
  issue: string;
  command: string | null;
  detail: string;
  plan_status: string | null;
  plan_url: string | null;
}
const comment = (args: string) => run(["github", "comment", "--event", args, "--json"]);
const planComment = () => gh.comments.filter((c) => c.issue === 12 && c.body.startsWith(PLAN));
const replies = () => gh.comments.filter((c) => c.issue === 12 && c.body.startsWith(REPLY));

async function planned(): Promise<string> {
  const plan = ok<{ status: string; pending_concerns: { id: string; concern: string }[] }>(await run(["issue", "plan", "12", "--json"]));
  const concern = plan.pending_concerns.find((c) => c.concern === MED.concern);
  expect(concern, JSON.stringify(plan.pending_concerns)).toBeDefined();
  expect(planComment()[0]?.body).toContain(MED.concern);
  return concern?.id ?? "";
}

describe("dissent github comment --event", () => {
  it("a maintainer's /dissent resolve settles the concern, updates the plan comment and reacts; the same event again is handled once", async () => {
    const concern = await planned();
    const { path, commentId } = event(
      `Checked with the storage team.\r\n\r\n/dissent resolve ${concern} fixed uploads are idempotent now\r\n`,
      "maintainer-mia",
    );
    const writesBefore = gh.writes().length;

    const out = ok<Outcome>(await comment(path));
    expect(out).toMatchObject({ status: "done", issue: "12", command: `/dissent resolve ${concern} fixed`, plan_status: "ready" });
    expect(out.plan_url).toBe(`https://github.com/acme/widgets/issues/12#issuecomment-${planComment()[0]?.id}`); // the plan comment itself
    const shown = ok<{ pending_concerns: { id: string }[]; addressed_concerns: { concern_id: string; resolution_kind: string; note: string }[] }>(
      await run(["issue", "show", "12", "--json"]),
    );
    expect(shown.pending_concerns.map((c) => c.id)).not.toContain(concern);
    expect(shown.addressed_concerns).toContainEqual(
      expect.objectContaining({ concern_id: concern, resolution_kind: "addressed-in-code", note: "@maintainer-mia on GitHub: uploads are idempotent now" }),
    );
    const [updated, ...more] = planComment();
    expect(more).toEqual([]);
    expect(updated?.body).not.toContain(MED.concern);
    expect(updated?.body).toContain(`@maintainer-mia \`/dissent resolve ${concern} fixed\`: concern ${concern} resolved`);
    expect(gh.reactions.filter((r) => r.commentId === commentId).map((r) => r.content)).toEqual(["eyes", "+1"]);
    expect(replies()).toEqual([]);
    // The permission was asked of the API, for the commenter.
    expect(gh.requests.some((r) => r.method === "GET" && r.path.endsWith("/collaborators/maintainer-mia/permission"))).toBe(true);

    const writesAfter = gh.writes().length;
    expect(writesAfter).toBeGreaterThan(writesBefore);
    const again = ok<Outcome>(await comment(path));
    expect(again.status).toBe("duplicate");
    expect(gh.writes()).toHaveLength(writesAfter); // nothing written a second time
  });

  it("a non-collaborator's command is refused with one reply; a reader's too; neither runs anything", async () => {
    await planned();
    const calls = models.requests.length;
    const labels = [...(gh.issues.get(12)?.labels ?? [])];
    const outsider = ok<Outcome>(await comment(event("/dissent replan", "drive-by-dan", "a.json").path));
    expect(outsider.status).toBe("refused");
    expect(outsider.detail).toBe("@drive-by-dan: only people with write access to acme/widgets can command dissent; `/dissent replan` was not run.");
    const reader = ok<Outcome>(await comment(event("/dissent trivial", "reader-rui", "b.json").path));
    expect(reader.status).toBe("refused");
    // One reply comment, updated in place: a stranger's commands cannot make dissent post comment after comment.
    expect(replies()).toHaveLength(1);
    expect(replies()[0]?.body).toContain("@reader-rui: only people with write access");
    expect(models.requests).toHaveLength(calls);
    expect(gh.issues.get(12)?.labels).toEqual(labels);
    expect(gh.reactions).toEqual([]);
  });

  it("a quoted command or one in a code block is not a command: nothing is asked of GitHub", async () => {
    const quoted = ok<Outcome>(await comment(event("> /dissent plan\r\n\r\nWhy did the bot plan this?", "maintainer-mia", "q.json").path));
    const fenced = ok<Outcome>(await comment(event("To settle it, write:\n\n```\n/dissent resolve C-1 fixed\n```\n", "maintainer-mia", "f.json").path));
    for (const o of [quoted, fenced]) expect(o).toMatchObject({ status: "ignored", command: null });
    expect(gh.requests.filter((r) => r.path.includes("/collaborators/"))).toEqual([]);
    expect(gh.writes()).toEqual([]);
    expect(models.requests).toHaveLength(0);
  });

  it("/dissent trivial labels the issue; a mistyped command is answered with the nearest one, an unknown one with the commands; exit 0, nothing run", async () => {
    const trivial = ok<Outcome>(await comment(event("/dissent trivial", "maintainer-mia", "t.json").path));
    expect(trivial.status).toBe("done");
    expect(trivial.plan_url).toBeNull(); // no plan yet: the answer is in the reply comment
    expect(gh.issues.get(12)?.labels.sort()).toEqual(["bug", "dissent-trivial"]);
    expect(replies()[0]?.body).toContain("labelled dissent-trivial");

    const typo = event("/dissent resolve PLAN-TESTER-001 fixd the retries cover it", "maintainer-mia", "u.json");
    const out = ok<Outcome>(await comment(typo.path));
    expect(out).toMatchObject({ status: "unknown", command: "/dissent resolve PLAN-TESTER-001 fixd the retries cover it" });
    expect(replies()[0]?.body).toContain(
      "@maintainer-mia: `/dissent resolve PLAN-TESTER-001 fixd the retries cover it` is not a command dissent knows; did you mean `/dissent resolve PLAN-TESTER-001 fixed the retries cover it`? Nothing was run",
    );
    expect(gh.reactions.filter((r) => r.commentId === typo.commentId).map((r) => r.content)).toEqual(["confused"]);
    const unknown = ok<Outcome>(await comment(event("/dissent frobnicate", "maintainer-mia", "v.json").path));
    expect(unknown.status).toBe("unknown");
    expect(replies()[0]?.body).toContain(
      "@maintainer-mia: `/dissent frobnicate` is not a command dissent knows. Nothing was run (commands: plan, replan, trivial, load-bearing, resolve CONCERN-ID fixed|accepted|rejected [note], implement on an issue; review on a pull request).",
    );
    expect(replies()).toHaveLength(1);
    expect(models.requests).toHaveLength(0);
    // Handled once, like every command: the same event again is a duplicate.
    expect(ok<Outcome>(await comment(typo.path)).status).toBe("duplicate");
  });

  it("a payload that is not an issue_comment event is one line, exit 2, before anything is asked", async () => {
    const path = dir.write("push.json", JSON.stringify({ ref: "refs/heads/main", commits: [] }));
    const r = await run(["github", "comment", "--event", path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dissent: error: --event .*push\.json is not an issue_comment event payload \(/);
    expect(gh.requests).toEqual([]);
  });

  it("dissent factory reads comment commands too: a maintainer's resolve is handled by the next poll, once", async () => {
    const concern = await planned();
    const c = gh.addComment(12, `/dissent resolve ${concern} accepted the storage team owns this`, "maintainer-mia");
    gh.addComment(12, "/dissent plan", "drive-by-dan");
    const lines = async () => {
      const r = await run(["factory", "--once", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; issue: string; comment?: number; status?: string })
        .filter((l) => l.event === "command");
    };
    expect(await lines()).toEqual([
      expect.objectContaining({ event: "command", issue: "12", comment: c.id, status: "done" }),
      expect.objectContaining({ event: "command", issue: "12", status: "refused" }),
    ]);
    const shown = ok<{ addressed_concerns: { concern_id: string; resolution_kind: string }[] }>(await run(["issue", "show", "12", "--json"]));
    expect(shown.addressed_concerns).toContainEqual(expect.objectContaining({ concern_id: concern, resolution_kind: "deferred" }));
    expect(gh.reactions.filter((r) => r.commentId === c.id).map((r) => r.content)).toEqual(["eyes", "+1"]);
    expect(await lines()).toEqual([]); // the next poll reads them again and handles neither
  });

  it("dissent factory does not run an edited comment: a comment edited to hold a command is not a command (issue 32)", async () => {
    const old = gh.addComment(12, "Thanks, looks fine.", "maintainer-mia");
    gh.editComment(old.id, "/dissent implement");
    const fresh = gh.addComment(12, "/dissent load-bearing", "maintainer-mia");
    const r = await run(["factory", "--once", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const commands = r.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; comment?: number })
      .filter((l) => l.event === "command");
    expect(commands).toEqual([expect.objectContaining({ event: "command", comment: fresh.id })]);
    expect(gh.reactions.filter((x) => x.commentId === old.id)).toEqual([]);
  });
});
