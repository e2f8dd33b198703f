/**
 * The agent's clone and dissent's own repository of an issue (docs/implement.md, ADR-033).
 *
 * The agent works in a clone of its own, `<home>/worktrees/issue-<ID>`, whose `.git` dissent makes
 * afresh before every attempt: its branch at the last reviewed commit, its objects borrowed
 * read-only (git's alternates) from dissent's repository of the issue, `<home>/git/issue-<ID>.git`,
 * which borrows the user's objects in turn. No ref of the user's is shared, so none can move; the
 * clone's config and hooks are the agent's, and dissent never runs git with them. After an attempt
 * dissent fetches the agent's branch from the clone (git's `upload-pack`, which is safe against an
 * untrusted repository) and commits the clone's files itself, from its own repository with its own
 * index — the commit reviewed is the commit published, whatever HEAD the agent left. Publishing
 * fetches that commit into the user's checkout and pushes it from there.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { GitError, UsageError } from "../errors.js";
import { git, gitLine, type GitOptions } from "./git.js";
import { ownDir, writeOwnFile } from "./home-files.js";

/** The branch dissent works an issue on (docs/implement.md). */
export function branchOf(issueId: string): string {
  return `dissent/issue-${safeId(issueId)}`;
}

const safeId = (id: string) => id.replace(/[^A-Za-z0-9._-]/g, "_");

/** Where the agent's clone of an issue lives: under the store's home, never inside the user's checkout. */
export function clonePath(home: string, issueId: string): string {
  return join(home, "worktrees", `issue-${safeId(issueId)}`);
}

/** dissent's own repository of an issue: the reviewed commits, out of the agent's reach. */
export function repositoryPath(home: string, issueId: string): string {
  return join(home, "git", `issue-${safeId(issueId)}.git`);
}

/** What a diff changes: files, lines added and removed. */
export interface DiffStats {
  files: number;
  insertions: number;
  deletions: number;
}

/** An issue's clone and repository. */
export interface AgentClone {
  /** The agent's working folder: its own clone. */
  path: string;
  /** dissent's repository of the issue (bare; never writable by a sandboxed agent). */
  gitDir: string;
  /** Its objects: what the clone borrows (a sandboxed agent may read them). */
  objects: string;
  /** The user's objects, which dissent's repository borrows. */
  userObjects: string;
  branch: string;
  baseBranch: string;
  /** The merge base of the base branch and the issue's branch: the diff under review is baseSha…commit. */
  baseSha: string;
  /** The user's checkout (its top folder). */
  repo: string;
  /** Stops every git command on the clone (Ctrl-C, SIGTERM, a lost lease): git is killed with its process group. */
  signal?: AbortSignal;
}

/** git in dissent's repository of the issue (locked: no config but its own, no hook). */
const inRepo = (c: Pick<AgentClone, "gitDir" | "signal">, args: readonly string[], o: GitOptions = {}) =>
  git(c.gitDir, args, { ...stopOn(c.signal), ...o, env: { GIT_DIR: c.gitDir, ...o.env } });
const lineInRepo = async (c: Pick<AgentClone, "gitDir" | "signal">, args: readonly string[], o: GitOptions = {}) => (await inRepo(c, args, o)).stdout.trim();
/** The git option that stops a command on the signal, when there is one. */
const stopOn = (signal: AbortSignal | undefined): GitOptions => (signal ? { signal } : {});

/** The repository's top folder, or a UsageError naming `implement.repo` when it is not a git checkout. */
export async function repoRoot(repo: string, signal?: AbortSignal): Promise<string> {
  if (!existsSync(repo)) throw new UsageError(`implement.repo ${repo} does not exist (docs/implement.md)`);
  const top = await git(repo, ["rev-parse", "--show-toplevel"], { scope: "user", allowFail: true, ...stopOn(signal) });
  if (top.code !== 0) throw new UsageError(`implement.repo ${repo} is not a git checkout (docs/implement.md)`);
  return top.stdout.trim();
}

/** The commit a ref of the user's checkout names, or undefined. */
async function userCommit(repo: string, ref: string, signal?: AbortSignal): Promise<string | undefined> {
  const r = await git(repo, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { scope: "user", allowFail: true, ...stopOn(signal) });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/**
 * The issue's clone (docs/implement.md): dissent's repository of the issue, made on first use with
 * the branch `dissent/issue-<ID>` at the base branch (or where the user's checkout already has that
 * branch: an earlier run's, published), and the clone's folder. Nothing of the user's checkout is
 * written: its objects are borrowed, its base branch read.
 */
export async function openClone(repo: string, baseBranch: string, home: string, issueId: string, signal?: AbortSignal): Promise<AgentClone> {
  const branch = branchOf(issueId);
  const base = await userCommit(repo, `refs/heads/${baseBranch}`, signal);
  if (!base) throw new UsageError(`implement.base_branch ${baseBranch} is not a branch of ${repo} (docs/implement.md)`);
  const common = await gitLine(repo, ["rev-parse", "--path-format=absolute", "--git-common-dir"], { scope: "user", ...stopOn(signal) });
  const userObjects = join(common, "objects");
  const gitDir = join(ownDir(home, "git"), basename(repositoryPath(home, issueId)));
  const path = join(ownDir(home, "worktrees"), basename(clonePath(home, issueId)));
  const c = { path, gitDir, objects: join(gitDir, "objects"), userObjects, branch, baseBranch, baseSha: base, repo, ...(signal ? { signal } : {}) };
  if (existsSync(join(path, ".git")) && !lstatSync(join(path, ".git")).isDirectory()) {
    throw new GitError(
      `${path} is a git worktree of your repository, made by an earlier dissent: remove it with \`git worktree remove ${path}\` and run again (its branch ${branch} stays in your repository, and the new clone starts from it)`,
    );
  }
  const fresh = !existsSync(join(gitDir, "HEAD"));
  if (fresh) {
    if (existsSync(path) && readdirSync(path).length > 0)
      throw new GitError(`${path} exists but is not dissent's clone of ${branch}: move it away and run again`);
    rmSync(gitDir, { recursive: true, force: true });
    await git(dirname(gitDir), ["init", "--bare", "--quiet", "--template=", gitDir], stopOn(signal));
  }
  // The user's objects, borrowed read-only: git never writes into an alternate.
  writeOwnFile(ownDir(gitDir, "objects", "info"), "alternates", `${userObjects}\n`);
  await inRepo(c, ["update-ref", `refs/heads/${baseBranch}`, base]);
  if (fresh) {
    const published = await userCommit(repo, `refs/heads/${branch}`, signal);
    await inRepo(c, ["update-ref", `refs/heads/${branch}`, published ?? base]);
  }
  ownDir(home, "worktrees", basename(path));
  return { ...c, baseSha: await lineInRepo(c, ["merge-base", `refs/heads/${baseBranch}`, `refs/heads/${branch}`]) };
}

/** The issue branch's head in dissent's repository: the last commit dissent made (and reviewed). */
export function headOf(c: AgentClone): Promise<string> {
  return lineInRepo(c, ["rev-parse", "--verify", `refs/heads/${c.branch}^{commit}`]);
}

/**
 * Makes the clone's `.git` afresh for an attempt: its branch (checked out) at the last reviewed
 * commit, the base branch beside it, its objects borrowed from dissent's repository. Whatever the
 * agent left in the old `.git` — hooks, config, refs, another HEAD — is gone; its files stay as they
 * were (a new clone is checked out; a resumed attempt goes on from what the last one left).
 */
export async function prepareClone(c: AgentClone): Promise<void> {
  ownDir(dirname(c.path), basename(c.path));
  const head = await headOf(c);
  const dotGit = join(c.path, ".git");
  rmSync(dotGit, { recursive: true, force: true });
  const stop = stopOn(c.signal);
  await git(dirname(c.path), ["init", "--quiet", "--template=", `--initial-branch=${c.branch}`, c.path], stop);
  writeOwnFile(ownDir(c.path, ".git", "objects", "info"), "alternates", `${c.objects}\n`);
  const env = { GIT_DIR: dotGit, GIT_WORK_TREE: c.path };
  await git(c.path, ["update-ref", "--stdin"], {
    ...stop,
    env,
    stdin: `update refs/heads/${c.branch} ${head}\nupdate refs/heads/${c.baseBranch} ${c.baseSha}\n`,
  });
  const empty = readdirSync(c.path).every((n) => n === ".git");
  // A new clone is checked out; otherwise only its index is set to the head (and refreshed), its files left as they are.
  if (empty) await git(c.path, ["read-tree", "--reset", "-u", head], { ...stop, env });
  else await git(c.path, ["reset", "--quiet", "--mixed", head], { ...stop, env, allowFail: true });
}

/** A loose ref file's commit, if it is a small regular file (anything else: unknown). */
function loneRef(path: string): string | undefined {
  try {
    const st = lstatSync(path);
    return st.isFile() && st.size <= 100 ? readFileSync(path, "utf8").trim() : undefined;
  } catch {
    return undefined;
  }
}

/** Who dissent's commits are by: the user's checkout's user, else dissent (read once per checkout). */
const identities = new Map<string, Record<string, string>>();
async function identityOf(repo: string): Promise<Record<string, string>> {
  const known = identities.get(repo);
  if (known) return known;
  const get = async (key: string) => (await git(repo, ["config", "--get", key], { scope: "user", allowFail: true })).stdout.trim();
  const [name, email] = [await get("user.name"), await get("user.email")];
  const who = name && email ? { name, email } : { name: "dissent", email: "dissent@localhost" };
  const env = { GIT_AUTHOR_NAME: who.name, GIT_AUTHOR_EMAIL: who.email, GIT_COMMITTER_NAME: who.name, GIT_COMMITTER_EMAIL: who.email };
  identities.set(repo, env);
  return env;
}

/** What an attempt left, as dissent committed it. */
export interface Captured {
  /** The branch head now: a new commit of the clone's files, or the last one when nothing changed. */
  commit: string;
  /** The agent committed on the branch itself, and its commits are kept under dissent's. */
  agentCommits: boolean;
}

/**
 * Commits what the agent left in its clone (docs/implement.md): its own commits on the branch are
 * fetched (when they build on the last reviewed commit), then every file of the clone — committed by
 * the agent or not, whatever HEAD it left — is committed by dissent in its own repository, with its
 * own index, so neither the clone's config nor its hooks ever run.
 */
export async function captureClone(c: AgentClone, message: string, signal?: AbortSignal): Promise<Captured> {
  const o = signal ? { signal } : {};
  const [last = "", lastTree = ""] = (await lineInRepo(c, ["rev-parse", `refs/heads/${c.branch}`, `refs/heads/${c.branch}^{tree}`], o)).split("\n");
  // The agent's branch where dissent left it (its ref read as data, never through a git in the clone): nothing to fetch.
  const untouched = loneRef(join(c.path, ".git", "refs", "heads", ...c.branch.split("/"))) === last;
  const fetched = untouched
    ? { code: 1 }
    : await inRepo(
        c,
        [
          "-c",
          "fetch.fsckObjects=true",
          "fetch",
          "--quiet",
          "--no-tags",
          "--no-write-fetch-head",
          "--no-recurse-submodules",
          c.path,
          `+refs/heads/${c.branch}:refs/dissent/agent`,
        ],
        { ...o, allowFail: true },
      );
  let parent = last;
  if (fetched.code === 0) {
    const tip = await lineInRepo(c, ["rev-parse", "--verify", "refs/dissent/agent^{commit}"], o);
    const builds = tip !== last && (await inRepo(c, ["merge-base", "--is-ancestor", last, tip], { ...o, allowFail: true })).code === 0;
    if (builds) parent = tip;
  }
  // dissent's repository and index over the clone's files: the clone's own .git is never read here.
  const index = join(c.gitDir, "dissent-index");
  const env = { GIT_DIR: c.gitDir, GIT_WORK_TREE: c.path, GIT_INDEX_FILE: index };
  // The index is left holding the last commit's tree (its stat data kept): read again only when it may not.
  const held = loneRef(`${index}.tree`);
  if (!(parent === last && held === lastTree && existsSync(index))) await git(c.path, ["read-tree", parent], { ...o, env });
  await git(c.path, ["add", "--all"], { ...o, env });
  const tree = await gitLine(c.path, ["write-tree"], { ...o, env });
  writeOwnFile(c.gitDir, "dissent-index.tree", `${tree}\n`);
  let commit = parent;
  if (tree !== (parent === last ? lastTree : await lineInRepo(c, ["rev-parse", `${parent}^{tree}`], o))) {
    commit = await lineInRepo(c, ["commit-tree", tree, "-p", parent, "-m", message], { ...o, env: await identityOf(c.repo) });
  }
  if (commit !== last) await inRepo(c, ["update-ref", `refs/heads/${c.branch}`, commit, last], o);
  return { commit, agentCommits: parent !== last };
}

/** The diff under review, base…commit (bounded: `truncated` when cut), and its stats, from dissent's repository. */
export async function diffOf(
  c: Pick<AgentClone, "gitDir" | "signal">,
  baseSha: string,
  commit: string,
): Promise<{ text: string; truncated: boolean; stats: DiffStats }> {
  // One git call: the numstat lines first, then the patch (from its first "diff --git" line).
  const out = await inRepo(c, ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--numstat", "--patch", baseSha, commit]);
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

/** Every commit between two, with its message and patch (bounded): what publishing a branch would send. */
export async function historyOf(c: AgentClone, from: string, to: string): Promise<{ text: string; truncated: boolean }> {
  const out = await inRepo(c, ["log", "--no-color", "--no-ext-diff", "--no-textconv", "--patch", "--format=commit %H%n%an <%ae>%n%B", `${from}..${to}`]);
  return { text: out.stdout, truncated: out.truncated };
}

/**
 * One commit with `to`'s files on top of `from`, for publishing a branch whose history holds what
 * must not leave (a secret an earlier commit had): the issue's branch moves to it.
 */
export async function squashOnto(c: AgentClone, from: string, to: string, message: string): Promise<string> {
  const tree = await lineInRepo(c, ["rev-parse", `${to}^{tree}`]);
  const commit = await lineInRepo(c, ["commit-tree", tree, "-p", from, "-m", message], { env: await identityOf(c.repo) });
  await inRepo(c, ["update-ref", `refs/heads/${c.branch}`, commit, to]);
  return commit;
}

/** The commit a ref of dissent's repository names, or undefined. */
export async function refOf(c: AgentClone, ref: string): Promise<string | undefined> {
  const r = await inRepo(c, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** Is `a` an ancestor of (or the same as) `b`? */
export async function isAncestor(c: AgentClone, a: string, b: string): Promise<boolean> {
  return (await inRepo(c, ["merge-base", "--is-ancestor", a, b], { allowFail: true })).code === 0;
}

/**
 * Brings the reviewed commit into the user's checkout as the issue's branch (never forced: a
 * branch the user moved makes it fail, and nothing is lost), and records it as published.
 */
export async function publishToCheckout(c: AgentClone, commit: string): Promise<void> {
  if ((await headOf(c)) !== commit) throw new GitError(`the branch ${c.branch} of dissent's repository is not at the reviewed commit ${commit}`);
  await git(
    c.repo,
    ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", c.gitDir, `refs/heads/${c.branch}:refs/heads/${c.branch}`],
    { scope: "user", ...stopOn(c.signal) },
  );
  const now = await userCommit(c.repo, `refs/heads/${c.branch}`, c.signal);
  if (now !== commit) throw new GitError(`the branch ${c.branch} of ${c.repo} is at ${now ?? "nothing"}, not the reviewed commit ${commit}`);
  await inRepo(c, ["update-ref", "refs/dissent/published", commit]);
}

/**
 * Pushes the reviewed commit from the user's checkout (the user's remote, credentials and config) as
 * the issue's branch: that branch only, never the base branch, never with --force — a remote branch
 * someone else moved makes the push fail, not lose work.
 */
export async function pushBranch(repo: string, remote: string, branch: string, commit: string, signal?: AbortSignal): Promise<void> {
  await git(repo, ["push", "--quiet", "--porcelain", remote, `${commit}:refs/heads/${branch}`], { scope: "user", ...stopOn(signal) });
}

/** Removes the issue's clone and repository after its merge (the branch stays in the user's checkout: it is the pull request's). */
export async function removeClone(repo: string, home: string, issueId: string): Promise<boolean> {
  const path = clonePath(home, issueId);
  const gitDir = repositoryPath(home, issueId);
  const any = existsSync(path) || existsSync(gitDir);
  // A worktree an earlier dissent made is removed the way it was made.
  if (existsSync(join(path, ".git")) && !lstatSync(join(path, ".git")).isDirectory())
    await git(repo, ["worktree", "remove", "--force", path], { scope: "user" });
  rmSync(path, { recursive: true, force: true });
  rmSync(gitDir, { recursive: true, force: true });
  return any;
}
