/**
 * The agent's clone and dissent's repository of an issue (docs/implement.md, ADR-033; issue 32):
 * no ref of the user's is shared or moved; what the agent leaves — its config, attributes, hooks,
 * another HEAD, rewritten history — never runs and never changes which branch dissent commits on;
 * the commit published is the one reviewed. Real git repositories, the test playing the agent.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { captureClone, diffOf, openClone, prepareClone, publishToCheckout, type AgentClone } from "../../src/implement/clone.js";
import { scratch } from "../support/cli.js";
import { gitIn, sumRepository } from "../support/implement-world.js";

const dirs: { cleanup(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

/** The agent's own git in its clone (its config, its hooks: its business). */
const agentGit = (c: AgentClone, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=agent", "-c", "user.email=agent@localhost", ...args], {
    cwd: c.path,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "" },
  });
const refs = (repo: string) => gitIn(repo, "for-each-ref", "--format=%(refname) %(objectname)");

async function world() {
  const s = scratch("dissent-clone-");
  dirs.push(s);
  const { repo } = sumRepository(s.dir);
  const home = join(s.dir, "home");
  const c = await openClone(repo, "main", home, "7");
  await prepareClone(c);
  return { dir: s.dir, repo, home, c };
}

describe("the agent's clone", () => {
  it("is a clone of its own: the branch checked out at the base, the user's objects borrowed, none of the user's refs shared or moved", async () => {
    const { repo, c } = await world();
    const before = refs(repo);
    expect(agentGit(c, "rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("dissent/issue-7");
    expect(agentGit(c, "rev-parse", "HEAD").trim()).toBe(gitIn(repo, "rev-parse", "main").trim());
    expect(readFileSync(join(c.path, "src", "sum.js"), "utf8")).toContain("not implemented");
    expect(agentGit(c, "status", "--porcelain")).toBe("");
    // Only the base and the branch: no feature, no tag, no remote pointing at the user's checkout.
    expect(agentGit(c, "for-each-ref", "--format=%(refname)").trim().split("\n").sort()).toEqual(["refs/heads/dissent/issue-7", "refs/heads/main"]);
    expect(agentGit(c, "remote").trim()).toBe("");
    // The agent moving "main" and deleting refs moves its own, never the user's.
    agentGit(c, "update-ref", "-d", "refs/heads/main");
    agentGit(c, "tag", "v9");
    expect(refs(repo)).toBe(before);
  });

  it("commits what the agent left on the recorded branch, whatever HEAD it left, without its filters, fsmonitor or hooks", async () => {
    const { dir, repo, c } = await world();
    const ran = join(dir, "ran");
    writeFileSync(join(c.path, "src", "sum.js"), "export function sum(a, b) {\n  return a + b;\n}\n");
    // The agent plants a filter driver (for every file), an fsmonitor and hooks, and detaches HEAD.
    const evil = join(dir, "evil.sh");
    writeFileSync(evil, `#!/bin/sh\necho ran >> ${ran}\ncat\n`);
    chmodSync(evil, 0o755);
    writeFileSync(join(c.path, ".gitattributes"), "* filter=evil\n");
    agentGit(c, "config", "filter.evil.clean", evil);
    agentGit(c, "config", "filter.evil.smudge", evil);
    agentGit(c, "config", "core.fsmonitor", evil);
    mkdirSync(join(c.path, ".git", "hooks"), { recursive: true });
    for (const h of ["pre-commit", "post-commit", "reference-transaction", "post-index-change"]) {
      writeFileSync(join(c.path, ".git", "hooks", h), `#!/bin/sh\necho ${h} >> ${ran}\n`);
      chmodSync(join(c.path, ".git", "hooks", h), 0o755);
    }
    agentGit(c, "checkout", "--quiet", "--detach", "main");
    rmSync(ran, { force: true }); // what the agent's own git ran is its business
    const { commit } = await captureClone(c, "dissent: attempt 1");
    expect(existsSync(ran)).toBe(false);
    const diff = await diffOf(c, c.baseSha, commit);
    expect(diff.text).toContain("+  return a + b;");
    expect(diff.stats.files).toBe(2); // src/sum.js and the agent's .gitattributes, both under review
    await publishToCheckout(c, commit);
    expect(gitIn(repo, "rev-parse", "dissent/issue-7").trim()).toBe(commit);
    expect(gitIn(repo, "rev-parse", "main").trim()).toBe(c.baseSha);
  });

  it("keeps the agent's own commits that build on the last reviewed one; after a history it rewrote, commits its files on the reviewed commit", async () => {
    const { c } = await world();
    writeFileSync(join(c.path, "a.txt"), "one\n");
    agentGit(c, "add", "a.txt");
    agentGit(c, "commit", "--quiet", "-m", "the agent's own commit");
    writeFileSync(join(c.path, "b.txt"), "uncommitted\n");
    const first = await captureClone(c, "dissent: attempt 1");
    expect(first.agentCommits).toBe(true);
    const log = execFileSync("git", ["--git-dir", c.gitDir, "log", "--format=%s", first.commit], { encoding: "utf8" }).trim().split("\n");
    expect(log.slice(0, 2)).toEqual(["dissent: attempt 1", "the agent's own commit"]);

    // The next attempt: a fresh .git at the reviewed commit; the agent resets to the base and commits something else.
    await prepareClone(c);
    expect(agentGit(c, "rev-parse", "HEAD").trim()).toBe(first.commit);
    expect(agentGit(c, "status", "--porcelain")).toBe("");
    agentGit(c, "reset", "--quiet", "--soft", "main");
    writeFileSync(join(c.path, "c.txt"), "two\n");
    agentGit(c, "add", "c.txt");
    agentGit(c, "commit", "--quiet", "-m", "history rewritten");
    const second = await captureClone(c, "dissent: attempt 2");
    expect(second.agentCommits).toBe(false);
    expect(execFileSync("git", ["--git-dir", c.gitDir, "rev-parse", `${second.commit}^`], { encoding: "utf8" }).trim()).toBe(first.commit);
    expect(execFileSync("git", ["--git-dir", c.gitDir, "show", `${second.commit}:c.txt`], { encoding: "utf8" })).toBe("two\n");
  });

  it("a fresh .git before every attempt: the hooks and config the agent planted are gone, its files stay", async () => {
    const { c } = await world();
    agentGit(c, "config", "core.hooksPath", "/somewhere");
    writeFileSync(join(c.path, "work.txt"), "in progress\n");
    await prepareClone(c);
    expect(readFileSync(join(c.path, ".git", "config"), "utf8")).not.toContain("hooksPath");
    expect(readFileSync(join(c.path, "work.txt"), "utf8")).toBe("in progress\n");
  });

  it("publishing never forces: a branch of the user's checkout moved meanwhile makes it fail, and the user's branch stays", async () => {
    const { repo, c } = await world();
    writeFileSync(join(c.path, "a.txt"), "one\n");
    const { commit } = await captureClone(c, "dissent: attempt 1");
    gitIn(repo, "branch", "dissent/issue-7", "main");
    gitIn(repo, "commit", "--quiet", "--allow-empty", "-m", "the user's own work on main");
    gitIn(repo, "branch", "-f", "dissent/issue-7", "main");
    const theirs = gitIn(repo, "rev-parse", "dissent/issue-7").trim();
    await expect(publishToCheckout(c, commit)).rejects.toThrow(/git fetch/);
    expect(gitIn(repo, "rev-parse", "dissent/issue-7").trim()).toBe(theirs);
  });
});
