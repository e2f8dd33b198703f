import { resolve } from "node:path";
import type { ImplementConfig } from "../contracts/config.js";
import type { AttemptOutcome, CommandRun } from "../contracts/events.js";
import { countSecrets } from "../redact.js";
import type { DiffArtifact } from "./artifact.js";
import { captureClone, diffOf, prepareClone, type AgentClone } from "./clone.js";
import { runCommand } from "./command.js";
import { changedPaths, snapshot, type Watched } from "./escape.js";
import { ownDir, writeOwnFile } from "./home-files.js";
import { AGENT_MARK, newMark, recordOf, sweep, type ProcessRecord } from "./orphans.js";
import type { Sandbox, SandboxPolicy } from "./sandbox.js";

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

/** What one attempt needs: the clone, the settings, dissent's environment, and where dissent keeps its own files. */
export interface AttemptDeps {
  issueId: string;
  clone: AgentClone;
  config: ImplementConfig;
  env: Record<string, string | undefined>;
  /** The store's home: task files go under it; the sandbox hides it; without one it is watched for writes. */
  home: string;
  sandbox: Sandbox;
  redact: (text: string) => string;
  /** The values dissent holds as secrets (Config.secrets): a diff holding one is flagged. */
  secrets: readonly string[];
  /** Records a command's process group as it starts (the ImplementProcessStarted event). */
  started: (command: "agent" | "test", r: ProcessRecord) => Promise<void>;
  signal?: AbortSignal;
}

/** One attempt's result: the artifact under review, and what the ImplementAttempt event records. */
export interface AttemptResult {
  artifact: DiffArtifact;
  escaped: string[];
}

/**
 * What is never counted as an escape: the store's own files, the task files, the issues' clones
 * and the other issues' repositories — where other agents (and dissent for them) may be working at
 * the same time (the factory). A file written into the worktrees folder itself (the agent's `..`) is seen.
 */
function watched(d: AttemptDeps): Watched {
  const worktrees = resolve(d.home, "worktrees");
  const repos = resolve(d.home, "git");
  const tasks = resolve(d.home, "tasks");
  const store = resolve(d.home, "dissent.db");
  const own = resolve(d.clone.gitDir);
  const issue = /^issue-[^/]+$/;
  return {
    folders: [resolve(d.home)],
    skip: (p) =>
      (p.startsWith(`${worktrees}/`) && issue.test(p.slice(worktrees.length + 1))) ||
      (p.startsWith(`${repos}/`) && issue.test(p.slice(repos.length + 1)) && p !== own) ||
      p === tasks ||
      p.startsWith(store),
    checkouts: [d.clone.repo],
  };
}

/** What the agent (and its tests) may see and write under bubblewrap (docs/implement.md#safety). */
function policyOf(d: AttemptDeps, taskFile: string): SandboxPolicy {
  return {
    workdir: d.clone.path,
    writable: d.config.writable,
    readable: [d.clone.objects, d.clone.userObjects, d.clone.repo, taskFile, ...d.config.readable],
    hidden: [d.home],
    network: d.config.network,
  };
}

/** Runs one command of the attempt in the sandbox, recorded as it starts, with whatever it leaves behind stopped after it. */
async function sandboxed(
  d: AttemptDeps,
  command: "agent" | "test",
  line: string,
  policy: SandboxPolicy,
  env: Record<string, string>,
  o: { stdin?: string; timeoutMs: number },
): Promise<CommandRun> {
  const mark = newMark();
  const wrapped = d.sandbox.wrap("/bin/sh", ["-c", line], policy);
  let recorded: Promise<void> = Promise.resolve();
  const run = runCommand({
    file: wrapped.file,
    args: wrapped.args,
    cwd: d.clone.path,
    env: { ...env, [AGENT_MARK]: mark },
    timeoutMs: o.timeoutMs,
    redact: d.redact,
    ...(o.stdin !== undefined ? { stdin: o.stdin } : {}),
    ...(d.signal ? { signal: d.signal } : {}),
    onSpawn: (pid) => {
      recorded = d.started(command, recordOf(pid, mark));
      recorded.catch(() => undefined); // awaited below, once the command is over
    },
    // A daemon it started with setsid left its process group: its mark finds it.
    afterExit: () => void sweep(mark),
  });
  try {
    return await run;
  } finally {
    await recorded;
  }
}

/**
 * One attempt (docs/implement.md): the clone made ready at the last reviewed commit, the agent run
 * in it (sandboxed) with the task on stdin and in $DISSENT_TASK_FILE, within `attempt_timeout_ms`;
 * then dissent commits what it left, takes the diff base…branch (secrets redacted, and counted) and
 * runs `test_command` in the same sandbox. Without a sandbox, writes outside the clone (the user's
 * checkout — its ignored files and refs too — and dissent's home, compared before and after) make it `escaped`.
 */
export async function runAttempt(d: AttemptDeps, attempt: number, task: string): Promise<AttemptResult> {
  const taskFile = writeOwnFile(ownDir(d.home, "tasks"), `issue-${d.issueId.replace(/[^A-Za-z0-9._-]/g, "_")}-attempt-${attempt}.md`, task);
  await prepareClone(d.clone);
  const policy = policyOf(d, taskFile);
  const w = d.sandbox.kind === "none" ? watched(d) : undefined;
  const before = w ? await snapshot(w) : undefined;
  const env = agentEnv(d.env, d.config.env, { DISSENT_TASK_FILE: taskFile, DISSENT_ISSUE_ID: d.issueId, DISSENT_ATTEMPT: String(attempt) });
  const agent = await sandboxed(d, "agent", d.config.command, policy, env, { stdin: task, timeoutMs: d.config.attemptTimeoutMs });
  const escaped = w && before ? changedPaths(before, await snapshot(w), d.clone.repo) : [];
  const base = { attempt, agent, testCommand: d.config.testCommand, escaped };
  if (escaped.length) {
    return {
      artifact: { ...base, outcome: "escaped", commit: null, diff: "", truncated: false, stats: { files: 0, insertions: 0, deletions: 0 }, test: null },
      escaped,
    };
  }
  const { commit } = await captureClone(d.clone, `dissent: issue #${d.issueId}, attempt ${attempt}`, d.signal);
  const diff = await reviewedDiff(d.clone, d.clone.baseSha, commit, d.redact, d.secrets);
  let test: CommandRun | null = null;
  let outcome: AttemptOutcome = agent.timed_out ? "timed_out" : agent.exit_code !== 0 ? "agent_failed" : "tested";
  if (diff.stats.files === 0 && !agent.timed_out) outcome = "no_changes";
  else if (d.config.testCommand) {
    test = await sandboxed(d, "test", d.config.testCommand, policy, agentEnv(d.env, d.config.env), { timeoutMs: d.config.testTimeoutMs });
  } else if (outcome === "tested") outcome = "untested";
  return {
    artifact: {
      ...base,
      outcome,
      commit,
      diff: diff.text,
      truncated: diff.truncated,
      stats: diff.stats,
      test,
      ...(diff.secrets ? { secrets: diff.secrets } : {}),
    },
    escaped,
  };
}

/** The diff as the review sees it: every secret dissent holds (and anything shaped like a key) redacted, the held ones counted. */
export async function reviewedDiff(
  clone: Pick<AgentClone, "gitDir">,
  baseSha: string,
  commit: string,
  redact: (text: string) => string,
  secrets: readonly string[],
): Promise<Awaited<ReturnType<typeof diffOf>> & { secrets: number }> {
  const diff = await diffOf(clone, baseSha, commit);
  return { ...diff, ...redactedDiff(diff.text, redact, secrets) };
}

/** A diff as a critic may read it: redacted, with how many of the secrets dissent holds it held (an attempt's, a pull request's). */
export function redactedDiff(text: string, redact: (text: string) => string, secrets: readonly string[]): { text: string; secrets: number } {
  return { text: redact(text), secrets: countSecrets(text, secrets) };
}
