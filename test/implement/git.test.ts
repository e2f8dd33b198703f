/**
 * The git dissent runs (docs/implement.md#safety, issue 32): never an agent's hook, fsmonitor or
 * config with dissent's rights, a minimal environment (no SSH agent, no credentials) in dissent's
 * own repositories, and a git that overruns its time is stopped with everything it started.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { git } from "../../src/implement/git.js";
import { scratch } from "../support/cli.js";

const dirs: { cleanup(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

/** A repository whose hooks and config (written as an agent would) record that they ran, then sleep. */
function plantedRepo(): { repo: string; ran: string } {
  const s = scratch("dissent-git-");
  dirs.push(s);
  const repo = join(s.dir, "repo");
  const ran = join(s.dir, "ran");
  mkdirSync(ran);
  execFileSync("git", ["init", "--quiet", "-b", "main", repo]);
  const hook = (name: string) => `#!/bin/sh\nenv > ${join(ran, name)}\nsleep 600\n`;
  const hooks = join(repo, ".git", "hooks");
  mkdirSync(hooks, { recursive: true });
  for (const h of ["pre-commit", "post-commit", "reference-transaction", "post-index-change"]) {
    writeFileSync(join(hooks, h), hook(h));
    chmodSync(join(hooks, h), 0o755);
  }
  writeFileSync(join(repo, "fsmonitor.sh"), hook("fsmonitor"));
  chmodSync(join(repo, "fsmonitor.sh"), 0o755);
  execFileSync("git", ["-C", repo, "config", "core.fsmonitor", join(repo, "fsmonitor.sh")]);
  execFileSync("git", ["-C", repo, "config", "core.hooksPath", hooks]);
  writeFileSync(join(repo, "a.txt"), "a\n");
  return { repo, ran };
}

describe("git as dissent runs it", () => {
  it.each(["locked", "user"] as const)("runs no hook and no fsmonitor the repository names (%s scope): status, add, commit", async (scope) => {
    const { repo, ran } = plantedRepo();
    const o = { scope, timeoutMs: 20_000 };
    await git(repo, ["status", "--porcelain"], o);
    await git(repo, ["add", "--all"], o);
    await git(repo, ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "m"], o);
    await git(repo, ["update-ref", "refs/heads/other", "HEAD"], o);
    expect(execFileSync("git", ["-C", repo, "log", "--format=%s"], { encoding: "utf8" }).trim()).toBe("m");
    for (const h of ["pre-commit", "post-commit", "reference-transaction", "post-index-change", "fsmonitor"]) expect(existsSync(join(ran, h)), h).toBe(false);
  });

  it("in dissent's own repositories: no SSH agent, no credentials, no HOME, no global config; in the user's checkout, the user's", async () => {
    const s = scratch("dissent-git-");
    dirs.push(s);
    const saved = { SSH_AUTH_SOCK: process.env.SSH_AUTH_SOCK, HOME: process.env.HOME };
    process.env.SSH_AUTH_SOCK = "/tmp/agent.sock";
    process.env.HOME = s.dir;
    writeFileSync(join(s.dir, ".gitconfig"), "[alias]\n\tenvironment = !env\n[credential]\n\thelper = store\n");
    try {
      const locked = await git(s.dir, ["environment"], { allowFail: true });
      expect(locked.code).not.toBe(0); // the user's global alias is not even seen
      const env = (await git(s.dir, ["-c", "alias.environment=!env", "environment"])).stdout;
      expect(env).not.toContain("SSH_AUTH_SOCK");
      expect(env).toMatch(/^HOME=\/dev\/null$/m);
      expect(env).toMatch(/^GIT_CONFIG_GLOBAL=\/dev\/null$/m);
      const helper = (await git(s.dir, ["config", "--get-all", "credential.helper"], { allowFail: true })).stdout.trim();
      expect(helper).toBe("");
      const user = (await git(s.dir, ["environment"], { scope: "user" })).stdout;
      expect(user).toContain("SSH_AUTH_SOCK=/tmp/agent.sock");
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });

  it("a git that overruns its time is stopped with its whole process group: what it started does not live on", async () => {
    const s = scratch("dissent-git-");
    dirs.push(s);
    const pidFile = join(s.dir, "child");
    const slow = `!sh -c 'sleep 600 & echo $! > ${pidFile}; wait'`;
    await expect(git(s.dir, ["-c", `alias.slow=${slow}`, "slow"], { timeoutMs: 1_000 })).rejects.toThrow(/did not finish within 1 s and was stopped/);
    const child = Number(readFileSync(pidFile, "utf8"));
    const stat = existsSync(`/proc/${child}/stat`) ? readFileSync(`/proc/${child}/stat`, "utf8") : "";
    expect(stat === "" || /^\d+ \(.*\) Z /.test(stat)).toBe(true);
  });
});
