import { type ChildProcess, spawn } from "node:child_process";
import type { CommandRun } from "../contracts/events.js";
import { codeOf, Interrupted } from "../errors.js";

/** The tail of a command's output kept in the store (docs/limits.md): the last 8 KiB. */
export const OUTPUT_TAIL_BYTES = 8 * 1024;
/** How long a process group told to stop at its time limit (SIGTERM) has before it is killed (SIGKILL). */
export const KILL_GRACE_MS = 2_000;
/**
 * The same grace when dissent itself was told to stop (Ctrl-C, SIGTERM): shorter, so the process
 * ends within a second of the signal (docs/errors.md "Signals") even when the agent ignores SIGTERM.
 */
export const INTERRUPT_GRACE_MS = 400;
/**
 * How long the output pipes are read after the command itself exited (docs/limits.md): what it
 * wrote just before exiting is still kept, but a process it left holding the pipes (a `setsid`
 * daemon, outside its process group) never holds the result back longer than this.
 */
export const PIPE_DRAIN_MS = 500;

/** One command to run in its own process group. */
export interface CommandSpec {
  /** The executable (`/bin/sh`, `bwrap`); arguments are never interpolated into a shell by dissent. */
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
  /** Called once the process exists, with its pid — its process group's id (recorded, to stop it after a crash). */
  onSpawn?: (pid: number) => void;
  /** Called after the command exited and its group was killed: whatever else it left is stopped here (docs/implement.md). */
  afterExit?: () => void;
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
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch (e) {
    if (codeOf(e) !== "ESRCH") throw e; // the group is already gone: nothing to stop
  }
}

/**
 * Calls `done` once a child started with `detached: true` has ended: when its pipes close, or — if
 * something it started still holds them — PIPE_DRAIN_MS after it exited, its pipes then destroyed.
 * Its process group is killed as soon as it exits (whatever it left in the group goes with it).
 */
export function settleAfterExit(child: ChildProcess, done: (code: number | null, signal: NodeJS.Signals | null) => void, afterExit?: () => void): void {
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let settled = false;
  let drain: NodeJS.Timeout | undefined;
  const finish = () => {
    if (settled || !exit) return;
    settled = true;
    if (drain) clearTimeout(drain);
    done(exit.code, exit.signal);
  };
  child.on("exit", (code, signal) => {
    exit = { code, signal };
    killGroup(child.pid, "SIGKILL");
    afterExit?.();
    drain = setTimeout(() => {
      // Held open by a process outside the group: stop reading, the command is over.
      child.stdout?.destroy();
      child.stderr?.destroy();
      finish();
    }, PIPE_DRAIN_MS);
  });
  child.on("close", finish);
}

/**
 * Runs a command in its own process group with a time limit (docs/implement.md): on timeout the
 * group gets SIGTERM, then SIGKILL after KILL_GRACE_MS (INTERRUPT_GRACE_MS when the signal stops it); whatever it left running in the group is
 * killed when its leader exits, and the result never waits on pipes held past that (PIPE_DRAIN_MS).
 * Output (stdout and stderr, interleaved) is never held whole: only the last `tailBytes`, redacted.
 * Never throws for the command's own failure — the result says how it ended.
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
    if (child.pid !== undefined) spec.onSpawn?.(child.pid);
    let timedOut = false;
    let aborted = false;
    let killer: NodeJS.Timeout | undefined;
    const stop = (graceMs: number) => {
      killGroup(child.pid, "SIGTERM");
      killer ??= setTimeout(() => killGroup(child.pid, "SIGKILL"), graceMs);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop(KILL_GRACE_MS);
    }, spec.timeoutMs);
    const onAbort = () => {
      aborted = true;
      if (killer) {
        // Already stopping at its time limit: the shorter grace of an interrupt from here on.
        clearTimeout(killer);
        killer = undefined;
      }
      stop(INTERRUPT_GRACE_MS);
    };
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (b: Buffer) => tail.push(b));
    child.stderr.on("data", (b: Buffer) => tail.push(b));
    // An agent that never reads its stdin closes the pipe early: that is its right, not an error.
    child.stdin.on("error", (e) => void e);
    child.stdin.end(spec.stdin ?? "");
    const cleanup = () => {
      clearTimeout(timer);
      if (killer) clearTimeout(killer);
      spec.signal?.removeEventListener("abort", onAbort);
    };
    child.on("error", (e) => {
      cleanup();
      reject(e);
    });
    settleAfterExit(
      child,
      (code, signal) => {
        cleanup();
        if (aborted) {
          reject(spec.signal?.reason ?? new Interrupted("interrupted"));
          return;
        }
        resolve({
          exit_code: code,
          signal,
          timed_out: timedOut,
          duration_ms: Math.round(performance.now() - started),
          output_tail: spec.redact(tail.text()),
          output_bytes: tail.total,
        });
      },
      spec.afterExit,
    );
  });
}
