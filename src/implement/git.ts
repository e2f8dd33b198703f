import { spawn } from "node:child_process";
import { GitError } from "../errors.js";

/** The most output one git command may give before it is cut (a diff beyond it is truncated, said in the review). */
export const GIT_OUTPUT_BYTES = 4 * 1024 * 1024;
/** Any one git command's time limit. */
export const GIT_TIMEOUT_MS = 120_000;

/** What a git command printed: its stdout (at most GIT_OUTPUT_BYTES) and whether it was cut. */
export interface GitOutput {
  stdout: string;
  truncated: boolean;
}

/** The environment git runs in: no pager, no prompt for credentials, no editor, a fixed locale for parsing. */
function gitEnv(): Record<string, string> {
  const keep = ["PATH", "HOME", "SSH_AUTH_SOCK", "GIT_SSH_COMMAND", "XDG_CONFIG_HOME"];
  const env: Record<string, string> = {};
  for (const k of keep) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return { ...env, LC_ALL: "C", GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat", GIT_EDITOR: "true", GIT_OPTIONAL_LOCKS: "0" };
}

/**
 * Runs `git ARGS` in `cwd` (never through a shell: branch names and paths are arguments, not text
 * spliced into a command line). Output is bounded; a non-zero exit is a GitError naming the command
 * and git's last line, unless `allowFail` (then stdout is returned and `code` tells).
 */
export function git(
  cwd: string,
  args: readonly string[],
  opts: { allowFail?: boolean; maxBytes?: number; signal?: AbortSignal } = {},
): Promise<GitOutput & { code: number }> {
  const max = opts.maxBytes ?? GIT_OUTPUT_BYTES;
  return new Promise((resolve, reject) => {
    const child = spawn("git", [...args], { cwd, env: gitEnv(), stdio: ["ignore", "pipe", "pipe"], ...(opts.signal ? { signal: opts.signal } : {}) });
    const out: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), GIT_TIMEOUT_MS);
    child.stdout.on("data", (b: Buffer) => {
      if (size >= max) {
        truncated = true;
        return;
      }
      const room = max - size;
      out.push(b.length > room ? b.subarray(0, room) : b);
      if (b.length > room) truncated = true;
      size += Math.min(b.length, room);
    });
    child.stderr.on("data", (b: Buffer) => {
      if (err.length < 16_384) err += b.toString("utf8");
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new GitError(`git ${args[0] ?? ""} could not run: ${e.message} (is git installed and on PATH?)`, args));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString("utf8");
      if (code !== 0 && !opts.allowFail) {
        const line = err.trim().split("\n").filter(Boolean).at(-1) ?? `exit ${code}`;
        reject(new GitError(`git ${args.slice(0, 2).join(" ")} failed in ${cwd}: ${line}`, args));
        return;
      }
      resolve({ stdout, truncated, code: code ?? -1 });
    });
  });
}

/** `git ARGS`'s stdout, trimmed. */
export async function gitLine(cwd: string, args: readonly string[]): Promise<string> {
  return (await git(cwd, args)).stdout.trim();
}
