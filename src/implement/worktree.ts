import { existsSync } from "node:fs";
import { join } from "node:path";
import { GitError, UsageError } from "../errors.js";
import { git, gitLine } from "./git.js";

/** The branch dissent works an issue on (docs/implement.md). */
export function branchOf(issueId: string): string {
  return `dissent/issue-${issueId.replace(/[^A-Za-z0-9._-]/g, "_")}`;
}

/** Where the issue's worktree lives: under the store's home, never inside the user's checkout. */
export function worktreePath(home: string, issueId: string): string {
  return join(home, "worktrees", `issue-${issueId.replace(/[^A-Za-z0-9._-]/g, "_")}`);
}

/** An issue's worktree: its folder, branch, and the commit its branch started from. */
export interface Worktree {
  path: string;
  branch: string;
  /** The merge base of the base branch and the issue's branch: the diff under review is base_sha…HEAD. */
  baseSha: string;
}

/** The repository's top folder, or a UsageError naming `implement.repo` when it is not a git checkout. */
export async function repoRoot(repo: string): Promise<string> {
  if (!existsSync(repo)) throw new UsageError(`implement.repo ${repo} does not exist (docs/implement.md)`);
  const top = await git(repo, ["rev-parse", "--show-toplevel"], { allowFail: true });
  if (top.code !== 0) throw new UsageError(`implement.repo ${repo} is not a git checkout (docs/implement.md)`);
  return top.stdout.trim();
}

/** Does `ref` name a commit in the repository? */
async function hasRef(repo: string, ref: string): Promise<boolean> {
  return (await git(repo, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { allowFail: true })).code === 0;
}

/**
 * The issue's worktree (docs/implement.md): `git worktree add` of the base branch on a new branch
 * `dissent/issue-<ID>`, or the one already there (resumed). The user's own checkout — its working
 * tree, index and current branch — is never touched; only git's worktree list in the repository grows.
 */
export async function ensureWorktree(repo: string, baseBranch: string, home: string, issueId: string): Promise<Worktree> {
  const branch = branchOf(issueId);
  const path = worktreePath(home, issueId);
  const base = `refs/heads/${baseBranch}`;
  if (!(await hasRef(repo, base))) throw new UsageError(`implement.base_branch ${baseBranch} is not a branch of ${repo} (docs/implement.md)`);
  const here = existsSync(join(path, ".git")) ? await git(path, ["rev-parse", "--abbrev-ref", "HEAD"], { allowFail: true }) : undefined;
  if (here?.code === 0 && here.stdout.trim() === branch) {
    return { path, branch, baseSha: await gitLine(path, ["merge-base", base, "HEAD"]) };
  }
  // A worktree folder deleted by hand leaves git's record of it behind; prune it so the add below works.
  await git(repo, ["worktree", "prune"]);
  if (existsSync(path)) throw new GitError(`${path} exists but is not the worktree of ${branch}: move it away and run again`, []);
  if (await hasRef(repo, `refs/heads/${branch}`)) await git(repo, ["worktree", "add", "--quiet", path, branch]);
  else await git(repo, ["worktree", "add", "--quiet", "-b", branch, path, base]);
  return { path, branch, baseSha: await gitLine(path, ["merge-base", base, "HEAD"]) };
}

/** Removes the issue's worktree after its merge (the branch stays: it is the pull request's). */
export async function removeWorktree(repo: string, home: string, issueId: string): Promise<boolean> {
  const path = worktreePath(home, issueId);
  if (!existsSync(path)) return false;
  await git(repo, ["worktree", "remove", "--force", path]);
  return true;
}

/** Worktrees whose repository names no committer (checked once per process: a config does not change mid-run). */
const anonymous = new Map<string, boolean>();

/**
 * Commits whatever the agent changed and did not commit (docs/implement.md), as dissent, without the
 * repository's hooks (the test command is the check); returns the branch head.
 */
export async function commitAll(path: string, message: string): Promise<string> {
  let unnamed = anonymous.get(path);
  if (unnamed === undefined) anonymous.set(path, (unnamed = (await git(path, ["config", "user.email"], { allowFail: true })).stdout.trim() === ""));
  const who = unnamed ? ["-c", "user.name=dissent", "-c", "user.email=dissent@localhost"] : [];
  await git(path, ["add", "--all"]);
  // Nothing staged (the agent committed everything, or changed nothing): git says so and exits 1, which is no failure here.
  const done = await git(path, [...who, "commit", "--quiet", "--no-verify", "-m", message], { allowFail: true });
  if (done.code !== 0 && !/nothing to commit|nothing added to commit/.test(done.stdout))
    await git(path, [...who, "commit", "--quiet", "--no-verify", "-m", message]);
  return gitLine(path, ["rev-parse", "HEAD"]);
}

/** What a diff changes: files, lines added and removed. */
export interface DiffStats {
  files: number;
  insertions: number;
  deletions: number;
}

/** The diff under review, base_sha…commit (bounded: `truncated` when cut), and its stats. */
export async function diffOf(path: string, baseSha: string, commit: string): Promise<{ text: string; truncated: boolean; stats: DiffStats }> {
  // One git call: the numstat lines first, then the patch (from its first "diff --git" line).
  const out = await git(path, ["diff", "--no-color", "--no-ext-diff", "--no-renames", "--numstat", "--patch", baseSha, commit]);
  const at = out.stdout.startsWith("diff --git") ? 0 : out.stdout.indexOf("\ndiff --git");
  const numstat = at === -1 ? out.stdout : out.stdout.slice(0, at);
  const stats: DiffStats = { files: 0, insertions: 0, deletions: 0 };
  for (const line of numstat.split("\n")) {
    const [a, d] = line.split("\t");
    if (a === undefined || d === undefined) continue;
    stats.files++;
    stats.insertions += Number(a) || 0; // "-" for a binary file
    stats.deletions += Number(d) || 0;
  }
  return { text: at === -1 ? "" : out.stdout.slice(at === 0 ? 0 : at + 1), truncated: out.truncated, stats };
}

/**
 * Pushes the issue's branch to the remote (docs/implement.md): that branch only, never the base
 * branch, never with --force — a remote branch someone else moved makes the push fail, not lose work.
 */
export async function pushBranch(path: string, remote: string, branch: string): Promise<void> {
  await git(path, ["push", "--quiet", "--porcelain", remote, `refs/heads/${branch}:refs/heads/${branch}`]);
}
