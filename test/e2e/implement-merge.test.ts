/**
 * The merge of an implemented issue's pull request, end to end on GitHub (docs/implement.md#labels):
 * `issue implement` pushes `dissent/issue-<ID>` and opens the pull request in the GitHub double; the
 * pull request is merged there (a real merge commit in the bare origin, the issue closed by it, as
 * GitHub's merge button does); `dissent factory` notices on its poll, labels the issue
 * `dissent-fixed`, records ShippedWithKnownGap and the wiki entries for what the pull request left
 * unresolved, and removes the worktree. A draft cannot be merged, and a pull request closed without
 * merging (then the issue closed by hand) is no merge.
 */
import { existsSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { factoryLines } from "../support/factory-world.js";
import type { GithubDouble } from "../support/github-double.js";
import { gitIn, implementWorld, plannedOnGithub, type ImplementWorld } from "../support/implement-world.js";

vi.setConfig({ testTimeout: 240_000 });

interface ConcernJson {
  id: string;
  raised_by: string;
  severity: string;
  must_address_by: string;
}
interface ImplementJson {
  status: "review" | "hitl";
  worktree: string;
  stage: { outcome: string };
  pending_concerns: ConcernJson[];
  pull_request: { where: string; number: number | null; draft: boolean };
}
interface EventJson {
  type: string;
  where?: string;
  number?: number;
  url?: string;
  branch?: string;
  draft?: boolean;
  pr?: number;
  concerns?: ConcernJson[];
  wiki_entries?: string[];
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

/** An implement world on the GitHub tracker: issue #1 planned ready, then implemented by the agent in `mode`. */
async function implementedOnGithub(mode: string): Promise<{ w: ImplementWorld; gh: GithubDouble; env: Record<string, string>; out: ImplementJson }> {
  const w = await implementWorld({ mode, extra: "factory: { implement: true }" });
  open.push(w);
  const { gh, env } = await plannedOnGithub(w);
  open.push(gh);
  const r = await w.run(["issue", "implement", "1", "--json"], { env });
  expect(r.code, r.stderr).toBe(0);
  return { w, gh, env, out: JSON.parse(r.stdout) as ImplementJson };
}

/** What a maintainer's merge button does: `PUT /repos/{owner}/{repo}/pulls/{n}/merge` with their token. */
async function mergeButton(gh: GithubDouble, pr: number): Promise<{ status: number; message: string }> {
  const res = await fetch(`${gh.url}/repos/${gh.owner}/${gh.repo}/pulls/${pr}/merge`, {
    method: "PUT",
    headers: { authorization: `token ${gh.token}`, "content-type": "application/json" },
    body: JSON.stringify({ merge_method: "merge" }),
  });
  return { status: res.status, message: String(((await res.json()) as { message?: unknown }).message) };
}

async function eventsOf(w: ImplementWorld, env: Record<string, string>): Promise<EventJson[]> {
  const r = await w.run(["events", "--issue", "1", "--json"], { env });
  return r.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EventJson);
}

describe("the merge of an implemented issue's pull request, detected by the factory on GitHub", () => {
  it("a dissent-review pull request merged on GitHub: the factory labels the issue dissent-fixed, ships its unresolved HIGH as a known gap with a wiki entry, and removes the worktree", async () => {
    const { w, gh, env, out } = await implementedOnGithub("leaky-always");
    // The agent never fixed the cache the correctness critic (confirmed by a second opinion) found: a HIGH, not a CRITICAL.
    expect(out.stage.outcome).toBe("oscillation");
    expect(out.status).toBe("review");
    const leak = out.pending_concerns.find((c) => c.raised_by === "review.correctness" && c.severity === "HIGH");
    expect(leak).toMatchObject({ must_address_by: "pull_request" });
    const number = out.pull_request.number ?? 0;
    expect(gh.pulls.get(number)).toMatchObject({ head: "dissent/issue-1", draft: false, state: "open" });
    expect(gh.pulls.get(number)?.body).toContain(`**${leak?.id}** HIGH`);
    expect(gh.issues.get(1)?.labels).toContain("dissent-review");
    expect(existsSync(out.worktree)).toBe(true);
    const opened = (await eventsOf(w, env)).filter((e) => e.type === "PullRequestOpened");
    expect(opened).toEqual([expect.objectContaining({ where: "github", number, branch: "dissent/issue-1", draft: false })]);
    expect(opened[0]?.url).toMatch(new RegExp(`/pull/${number}$`));

    // A poll before the merge changes nothing.
    const before = await w.run(["factory", "--once", "--json"], { env });
    expect(before.code, before.stderr).toBe(0);
    expect(factoryLines(before.stdout).filter((l) => l.event === "merged")).toEqual([]);

    expect(await mergeButton(gh, number)).toMatchObject({ status: 200 });
    expect(gh.issues.get(1)?.state).toBe("closed");
    expect(gitIn(w.origin, "show", "main:src/memo.js")).toContain("new Map()"); // the merge is real

    const after = await w.run(["factory", "--once", "--json"], { env });
    expect(after.code, after.stderr).toBe(0);
    const merged = factoryLines(after.stdout).filter((l) => l.event === "merged");
    expect(merged).toEqual([expect.objectContaining({ issue: "1", pr: number, gaps: out.pending_concerns.length })]);
    expect(gh.issues.get(1)?.labels).toContain("dissent-fixed");
    expect(gh.issues.get(1)?.labels).not.toContain("dissent-review");
    const shipped = (await eventsOf(w, env)).filter((e) => e.type === "ShippedWithKnownGap");
    expect(shipped).toHaveLength(1);
    expect(shipped[0]?.pr).toBe(number);
    expect(shipped[0]?.concerns?.map((c) => c.id)).toContain(leak?.id);
    expect(shipped[0]?.wiki_entries?.length).toBeGreaterThan(0);
    const wiki = await w.run(["wiki", "show", shipped[0]?.wiki_entries?.[0] ?? ""], { env });
    expect(wiki.code, wiki.stderr).toBe(0);
    expect(wiki.stdout).toMatch(/cache|Map|memory/i);
    // The worktree is gone; its branch stays (it is the pull request's).
    expect(existsSync(out.worktree)).toBe(false);
    expect(gitIn(w.repo, "worktree", "list")).not.toContain("issue-1");
    expect(gitIn(w.repo, "branch", "--list", "dissent/issue-1")).toContain("dissent/issue-1");

    // A later poll records nothing twice.
    const again = await w.run(["factory", "--once", "--json"], { env });
    expect(factoryLines(again.stdout).filter((l) => l.event === "merged")).toEqual([]);
    expect((await eventsOf(w, env)).filter((e) => e.type === "ShippedWithKnownGap")).toHaveLength(1);
  });

  it("a draft pull request (a CRITICAL left, dissent-hitl) cannot be merged, and one closed without merging — the issue then closed by hand — is no merge", async () => {
    const { w, gh, env, out } = await implementedOnGithub("insecure-always");
    expect(out.status).toBe("hitl");
    const number = out.pull_request.number ?? 0;
    expect(gh.pulls.get(number)?.draft).toBe(true);

    expect(await mergeButton(gh, number)).toEqual({ status: 405, message: "Pull Request is still a draft" });
    const poll = await w.run(["factory", "--once", "--json"], { env });
    expect(poll.code, poll.stderr).toBe(0);
    expect(factoryLines(poll.stdout).filter((l) => l.event === "merged")).toEqual([]);

    // Closed without merging; then the issue closed by hand.
    const patch = (path: string, body: unknown) =>
      fetch(`${gh.url}/repos/${gh.owner}/${gh.repo}${path}`, {
        method: "PATCH",
        headers: { authorization: `token ${gh.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await patch(`/pulls/${number}`, { state: "closed" })).status).toBe(200);
    expect(gh.issues.get(1)?.state).toBe("open"); // closing a pull request closes no issue
    expect((await patch("/issues/1", { state: "closed" })).status).toBe(200);
    const later = await w.run(["factory", "--once", "--json"], { env });
    expect(later.code, later.stderr).toBe(0);
    expect(factoryLines(later.stdout).filter((l) => l.event === "merged")).toEqual([]);

    expect(gh.issues.get(1)?.labels).toContain("dissent-hitl");
    expect(gh.issues.get(1)?.labels).not.toContain("dissent-fixed");
    expect((await eventsOf(w, env)).some((e) => e.type === "ShippedWithKnownGap")).toBe(false);
    expect(existsSync(out.worktree)).toBe(true);
    expect(gitIn(w.origin, "log", "--format=%s", "main")).not.toMatch(/Merge pull request/);
  });
});
