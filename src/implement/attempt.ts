import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ImplementConfig } from "../contracts/config.js";
import type { AttemptOutcome, CommandRun } from "../contracts/events.js";
import type { DiffArtifact } from "./artifact.js";
import { runCommand } from "./command.js";
import { changedPaths, snapshot, type Watched } from "./escape.js";
import { commitAll, diffOf, type Worktree } from "./worktree.js";

/** The variables every agent sees besides those `implement.env` lists (docs/implement.md safety). */
export const BASE_ENV = ["PATH", "HOME", "LANG"] as const;

/**
 * The agent's (and the tests') whole environment: PATH, HOME, LANG and the names `implement.env`
 * lists, from dissent's environment — nothing else, so a provider key dissent holds never reaches
 * the agent unless the user lists it — plus where the task is.
 */
export function agentEnv(from: Record<string, string | undefined>, names: readonly string[], extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of [...BASE_ENV, ...names]) {
    const v = from[k];
    if (v !== undefined) env[k] = v;
  }
  return { ...env, ...extra };
}

/** What one attempt needs: the worktree, the settings, dissent's environment, and where dissent keeps its own files. */
export interface AttemptDeps {
  issueId: string;
  worktree: Worktree;
  config: ImplementConfig;
  env: Record<string, string | undefined>;
  /** The store's home: task files go under it, and it is watched for writes. */
  home: string;
  redact: (text: string) => string;
  signal?: AbortSignal;
}

/** One attempt's result: the artifact under review, and what the ImplementAttempt event records. */
export interface AttemptResult {
  artifact: DiffArtifact;
  escaped: string[];
}

/**
 * What is never counted as an escape: the store's own files, the task files, and the issues'
 * worktrees — the agent's own, and the others', where other agents may be working at the same time
 * (the factory). A file written into the worktrees folder itself (the agent's `..`) is seen.
 */
function watched(d: AttemptDeps): Watched {
  const worktrees = resolve(d.home, "worktrees");
  const tasks = resolve(d.home, "tasks");
  const store = resolve(d.home, "dissent.db");
  const worktree = /^issue-[^/]+$/;
  return {
    folders: [resolve(d.home)],
    skip: (p) => (p.startsWith(`${worktrees}/`) && worktree.test(p.slice(worktrees.length + 1))) || p === tasks || p.startsWith(store),
    checkouts: [d.config.repo],
  };
}

/**
 * One attempt (docs/implement.md): the agent runs in the worktree with the task on stdin and in
 * $DISSENT_TASK_FILE, within `attempt_timeout_ms`; then dissent commits what it changed, takes the
 * diff base…branch and runs `test_command`. Writes outside the worktree (the user's checkout,
 * dissent's home and every other worktree, compared before and after) make it `escaped`.
 */
export async function runAttempt(d: AttemptDeps, attempt: number, task: string): Promise<AttemptResult> {
  const tasks = join(d.home, "tasks");
  mkdirSync(tasks, { recursive: true });
  const taskFile = join(tasks, `issue-${d.issueId.replace(/[^A-Za-z0-9._-]/g, "_")}-attempt-${attempt}.md`);
  writeFileSync(taskFile, task);
  const w = watched(d);
  const before = await snapshot(w);
  const env = agentEnv(d.env, d.config.env, { DISSENT_TASK_FILE: taskFile, DISSENT_ISSUE_ID: d.issueId, DISSENT_ATTEMPT: String(attempt) });
  const agent = await runCommand({
    file: "/bin/sh",
    args: ["-c", d.config.command],
    cwd: d.worktree.path,
    env,
    stdin: task,
    timeoutMs: d.config.attemptTimeoutMs,
    redact: d.redact,
    ...(d.signal ? { signal: d.signal } : {}),
  });
  const escaped = changedPaths(before, await snapshot(w), d.config.repo);
  const base = { attempt, agent, testCommand: d.config.testCommand, escaped };
  if (escaped.length) {
    return {
      artifact: { ...base, outcome: "escaped", commit: null, diff: "", truncated: false, stats: { files: 0, insertions: 0, deletions: 0 }, test: null },
      escaped,
    };
  }
  const commit = await commitAll(d.worktree.path, `dissent: issue #${d.issueId}, attempt ${attempt}`);
  const diff = await diffOf(d.worktree.path, d.worktree.baseSha, commit);
  let test: CommandRun | null = null;
  let outcome: AttemptOutcome = agent.timed_out ? "timed_out" : agent.exit_code !== 0 ? "agent_failed" : "tested";
  if (diff.stats.files === 0 && !agent.timed_out) outcome = "no_changes";
  else if (d.config.testCommand) {
    test = await runCommand({
      file: "/bin/sh",
      args: ["-c", d.config.testCommand],
      cwd: d.worktree.path,
      env: agentEnv(d.env, d.config.env),
      timeoutMs: d.config.testTimeoutMs,
      redact: d.redact,
      ...(d.signal ? { signal: d.signal } : {}),
    });
  } else if (outcome === "tested") outcome = "untested";
  return { artifact: { ...base, outcome, commit, diff: diff.text, truncated: diff.truncated, stats: diff.stats, test }, escaped };
}
