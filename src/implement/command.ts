import { spawn } from "node:child_process";
import type { CommandRun } from "../contracts/events.js";
import { codeOf, Interrupted } from "../errors.js";

/** The tail of a command's output kept in the store (docs/limits.md): the last 8 KiB. */
export const OUTPUT_TAIL_BYTES = 8 * 1024;
/** How long a process group told to stop (SIGTERM) has before it is killed (SIGKILL). */
export const KILL_GRACE_MS = 2_000;

/** One command to run in its own process group. */
export interface CommandSpec {
  /** The executable (`/bin/sh`, `git`); arguments are never interpolated into a shell by dissent. */
  file: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the process (nothing of dissent's own is inherited). */
  env: Record<string, string>;
  /** Written to its stdin, which is then closed. */
  stdin?: string;
  timeoutMs: number;
  /** Stops the process group (Ctrl-C, SIGTERM of dissent); the run then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Redacts secrets from the output before it is kept. */
  redact: (text: string) => string;
  tailBytes?: number;
}

/** Keeps the last `max` bytes written to it. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  total = 0;
  constructor(private readonly max: number) {}
  push(b: Buffer): void {
    this.total += b.length;
    this.chunks.push(b);
    this.size += b.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= this.max && this.chunks.length > 1) this.size -= this.chunks.shift()?.length ?? 0;
  }
  text(): string {
    const all = Buffer.concat(this.chunks);
    const cut = all.length > this.max ? all.subarray(all.length - this.max) : all;
    // A cut in the middle of a UTF-8 sequence is dropped rather than shown as a replacement character.
    return cut.toString("utf8").replace(/^\uFFFD+/, "");
  }
}

/** Signals a process group, ignoring one that is already gone. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch (e) {
    if (codeOf(e) !== "ESRCH") throw e; // the group is already gone: nothing to stop
  }
}

/**
 * Runs a command in its own process group with a time limit (docs/implement.md): on timeout the
 * group gets SIGTERM, then SIGKILL after KILL_GRACE_MS; whatever it left running is killed when its
 * leader exits. Output (stdout and stderr, interleaved) is never held whole: only the last
 * `tailBytes`, redacted. Never throws for the command's own failure — the result says how it ended.
 */
export function runCommand(spec: CommandSpec): Promise<CommandRun> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    if (spec.signal?.aborted) {
      reject(spec.signal.reason ?? new Interrupted("interrupted"));
      return;
    }
    const tail = new Tail(spec.tailBytes ?? OUTPUT_TAIL_BYTES);
    const child = spawn(spec.file, [...spec.args], { cwd: spec.cwd, env: spec.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    let timedOut = false;
    let aborted = false;
    let killer: NodeJS.Timeout | undefined;
    const stop = () => {
      killGroup(child.pid, "SIGTERM");
      killer ??= setTimeout(() => killGroup(child.pid, "SIGKILL"), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, spec.timeoutMs);
    const onAbort = () => {
      aborted = true;
      stop();
    };
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (b: Buffer) => tail.push(b));
    child.stderr.on("data", (b: Buffer) => tail.push(b));
    // An agent that never reads its stdin closes the pipe early: that is its right, not an error.
    child.stdin.on("error", (e) => void e);
    child.stdin.end(spec.stdin ?? "");
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.on("error", (e) => {
      clearTimeout(timer);
      if (killer) clearTimeout(killer);
      spec.signal?.removeEventListener("abort", onAbort);
      reject(e);
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      // Whatever the leader left behind (a server, a watcher) holds the pipes open: it goes with the leader.
      killGroup(child.pid, "SIGKILL");
    });
    child.on("close", () => {
      clearTimeout(timer);
      if (killer) clearTimeout(killer);
      spec.signal?.removeEventListener("abort", onAbort);
      if (aborted) {
        reject(spec.signal?.reason ?? new Interrupted("interrupted"));
        return;
      }
      resolve({
        exit_code: exit?.code ?? null,
        signal: exit?.signal ?? null,
        timed_out: timedOut,
        duration_ms: Math.round(performance.now() - started),
        output_tail: spec.redact(tail.text()),
        output_bytes: tail.total,
      });
    });
  });
}
