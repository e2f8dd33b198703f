import { spawn } from "node:child_process";
import { GitError } from "../errors.js";
import { killGroup, settleAfterExit } from "./command.js";

/** The most output one git command may give before it is cut (a diff beyond it is truncated, said in the review). */
export const GIT_OUTPUT_BYTES = 4 * 1024 * 1024;
/** Any one git command's time limit; past it git's whole process group (a hook, a helper it started) is killed. */
export const GIT_TIMEOUT_MS = 120_000;

/** What a git command printed: its stdout (at most GIT_OUTPUT_BYTES) and whether it was cut. */
export interface GitOutput {
  stdout: string;
  truncated: boolean;
}

/**
 * `core.hooksPath` and (locked) `HOME`: a path under which nothing can ever be created — no hook is
 * found there, no `~/.gitconfig` or `~/.config/git/*` either (a folder could be written into by an
 * agent that runs as the same user).
 */
const NOWHERE = "/dev/null";

/**
 * What every git dissent runs is told on its command line, above any config file
 * (docs/implement.md#safety): no hook runs, no fsmonitor, no external diff or textconv, no pager, no
 * signing program, no credential helper or askpass of a repository's, no automatic gc or
 * maintenance, no submodule recursion, no alternate-refs command, no colour or prefixes that change
 * what dissent parses. Command-line `-c` wins over every config file, the agent's included.
 */
export function hardening(): string[] {
  const pairs: Record<string, string> = {
    "core.hooksPath": NOWHERE,
    "core.fsmonitor": "false",
    "core.untrackedCache": "false",
    "core.pager": "cat",
    "core.editor": "true",
    "core.askPass": "",
    "core.alternateRefsCommand": "",
    "diff.external": "",
    "color.ui": "false",
    "diff.noprefix": "false",
    "diff.mnemonicPrefix": "false",
    "diff.relative": "false",
    "commit.gpgSign": "false",
    "tag.gpgSign": "false",
    "gpg.program": "false",
    "log.showSignature": "false",
    "gc.auto": "0",
    "maintenance.auto": "false",
    "fetch.recurseSubmodules": "false",
    "submodule.recurse": "false",
    "core.quotePath": "false",
    "advice.detachedHead": "false",
  };
  return Object.entries(pairs).flatMap(([k, v]) => ["-c", `${k}=${v}`]);
}

/**
 * Where a git command runs and whose settings it honours:
 * - `locked` (dissent's own repositories, the agent's clone): no system or global config, HOME an
 *   empty folder, only the file protocol, no credential helper — nothing of the user's or the
 *   agent's environment but PATH;
 * - `user` (the user's own checkout: the branch fetched in, the push to its remote): the user's
 *   global config, HOME and SSH agent, as when the user runs git — still without any hook or fsmonitor.
 */
export type GitScope = "locked" | "user";

/** The environment of a git command: no pager, no prompt, no editor, a fixed locale for parsing. */
function gitEnv(scope: GitScope, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  const keep = scope === "user" ? ["PATH", "HOME", "SSH_AUTH_SOCK", "GIT_SSH_COMMAND", "GIT_SSH", "XDG_CONFIG_HOME"] : ["PATH"];
  for (const k of keep) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  const locked: Record<string, string> =
    scope === "locked"
      ? {
          HOME: NOWHERE,
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_CONFIG_GLOBAL: "/dev/null",
          GIT_ATTR_NOSYSTEM: "1",
          GIT_PROTOCOL_FROM_USER: "0",
          GIT_NO_REPLACE_OBJECTS: "1",
        }
      : {};
  return {
    ...env,
    ...locked,
    LC_ALL: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_PAGER: "cat",
    GIT_EDITOR: "true",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_NO_LAZY_FETCH: "1",
    ...extra,
  };
}

/** The command-line settings of a scope: the hardening, and for `locked` only the file protocol and no credential helper. */
function scopeArgs(scope: GitScope): string[] {
  const base = hardening();
  if (scope === "user") return base;
  return [...base, "-c", "credential.helper=", "-c", "protocol.allow=never", "-c", "protocol.file.allow=always", "-c", "core.sshCommand=false"];
}

/** Options of one git command. */
export interface GitOptions {
  allowFail?: boolean;
  maxBytes?: number;
  signal?: AbortSignal;
  /** `locked` unless said (docs: GitScope). */
  scope?: GitScope;
  /** GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE and the committer's identity, when the command needs them. */
  env?: Record<string, string>;
  /** The time limit (GIT_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Written to git's stdin (`update-ref --stdin`), which is then closed. */
  stdin?: string;
}

/**
 * Runs `git ARGS` in `cwd` (never through a shell: branch names and paths are arguments, not text
 * spliced into a command line), hardened (`hardening`) and in a process group of its own: at the
 * time limit or on abort the whole group is killed, whatever git started with it. Output is
 * bounded; a non-zero exit is a GitError naming the command and git's last line, unless
 * `allowFail` (then stdout is returned and `code` tells).
 */
export function git(cwd: string, args: readonly string[], opts: GitOptions = {}): Promise<GitOutput & { code: number }> {
  const max = opts.maxBytes ?? GIT_OUTPUT_BYTES;
  const scope = opts.scope ?? "locked";
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(opts.signal.reason);
      return;
    }
    const child = spawn("git", [...scopeArgs(scope), ...args], {
      cwd,
      env: gitEnv(scope, opts.env ?? {}),
      stdio: [opts.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: true,
    });
    if (opts.stdin !== undefined) {
      child.stdin?.on("error", (e) => void e);
      child.stdin?.end(opts.stdin);
    }
    const out: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let err = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, "SIGKILL");
    }, opts.timeoutMs ?? GIT_TIMEOUT_MS);
    const onAbort = () => killGroup(child.pid, "SIGKILL");
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
    };
    child.stdout?.on("data", (b: Buffer) => {
      if (size >= max) {
        truncated = true;
        return;
      }
      const room = max - size;
      out.push(b.length > room ? b.subarray(0, room) : b);
      if (b.length > room) truncated = true;
      size += Math.min(b.length, room);
    });
    child.stderr?.on("data", (b: Buffer) => {
      if (err.length < 16_384) err += b.toString("utf8");
    });
    child.on("error", (e) => {
      done();
      reject(new GitError(`git ${args[0] ?? ""} could not run: ${e.message} (is git installed and on PATH?)`, { args }));
    });
    // Whatever git left behind (a helper, a hook's child) goes with its group; one that left the group cannot hold the result back.
    settleAfterExit(child, (code) => {
      done();
      if (opts.signal?.aborted) {
        reject(opts.signal.reason);
        return;
      }
      const stdout = Buffer.concat(out).toString("utf8");
      if (timedOut) {
        reject(
          new GitError(
            `git ${args.slice(0, 2).join(" ")} in ${cwd} did not finish within ${Math.round((opts.timeoutMs ?? GIT_TIMEOUT_MS) / 1000)} s and was stopped`,
            { args },
          ),
        );
        return;
      }
      if (code !== 0 && !opts.allowFail) {
        const line = err.trim().split("\n").filter(Boolean).at(-1) ?? `exit ${code}`;
        reject(new GitError(`git ${args.slice(0, 2).join(" ")} failed in ${cwd}: ${line}`, { args }));
        return;
      }
      resolve({ stdout, truncated, code: code ?? -1 });
    });
  });
}

/** `git ARGS`'s stdout, trimmed. */
export async function gitLine(cwd: string, args: readonly string[], opts: GitOptions = {}): Promise<string> {
  return (await git(cwd, args, opts)).stdout.trim();
}
