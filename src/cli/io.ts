import { Console } from "node:console";
import { type Readable, Writable } from "node:stream";
import { DissentError, Interrupted, messageOf, UsageError } from "../errors.js";
import { missingOptional } from "../opt-in.js";
import { redact as redactKnown } from "../redact.js";
import { CLEAR_LINE, terminalSafe } from "../terminal.js";
import { exitCodeOf } from "./exit-codes.js";

/** The CLI's window on the process: the only place that touches stdio, env, cwd and signals. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Stdin, at most `limit` bytes (a clear error beyond), or undefined when stdin is a TTY. */
  readStdin(limit: number): Promise<string | undefined>;
  stderrIsTTY: boolean;
  /** The terminal's width, when stderr is one. */
  columns: number;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Aborted on Ctrl-C / SIGTERM, with an Interrupted reason naming the signal. */
  signal: AbortSignal;
  /**
   * Every write passes through this (docs/errors.md: secrets never reach stdout or stderr); the real
   * process's writes then pass through terminalSafe (docs/errors.md "Model text on a terminal").
   */
  redact: (text: string) => string;
  /** The raw stdin and stdout, for a protocol that owns them (`dissent mcp` over stdio, docs/mcp.md). */
  streams?: { stdin: Readable; stdout: Writable };
}

/** Reports an error as one line (docs/errors.md) and returns its exit code; the stack only with --verbose. */
export function fail(thrown: unknown, io: Io, verbose: boolean): number {
  const e = missingOptional(thrown) ?? thrown;
  const line = terminalSafe(io.redact(messageOf(e)).split("\n")[0] ?? "");
  io.stderr(`dissent: error: ${DissentError.isInstance(e) ? line : `internal error: ${line}`}\n`);
  if (verbose && e instanceof Error && e.stack) io.stderr(`${io.redact(e.stack)}\n`);
  return exitCodeOf(e);
}

/** How long after the first SIGINT/SIGTERM the process exits whatever it is still doing (docs/errors.md). */
export const STOP_DEADLINE_MS = 9_000;
/** For tests only: a shorter deadline, in milliseconds. */
export const STOP_DEADLINE_ENV = "DISSENT_STOP_DEADLINE_MS";

/** What the signal handler acts on: the run's controller, the way out, and a clock. */
export interface StopDeps {
  controller: AbortController;
  exit: (code: number) => void;
  /** One line on stderr when the deadline passes. */
  say: (line: string) => void;
  deadlineMs: number;
  setTimer?: (fn: () => void, ms: number) => { unref?: () => unknown };
}

/**
 * The one rule for signals (docs/errors.md): the first SIGINT/SIGTERM starts the orderly stop
 * (the signal aborts every model call, lease, poll and read; labels are cleared and events flushed)
 * and arms a deadline after which the process exits 130/143 whatever it is doing; a second signal
 * exits at once.
 */
export function signalStopper(deps: StopDeps): (signal: "SIGINT" | "SIGTERM") => void {
  const setTimer = deps.setTimer ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  let first: "SIGINT" | "SIGTERM" | undefined;
  return (signal) => {
    const code = signal === "SIGTERM" ? 143 : 130;
    if (first !== undefined) return deps.exit(code);
    first = signal;
    deps.controller.abort(new Interrupted(signal === "SIGTERM" ? "terminated (SIGTERM)" : "interrupted (Ctrl-C)", { signal }));
    const timer = setTimer(() => {
      deps.say(`dissent: warning: still stopping ${Math.round(deps.deadlineMs / 100) / 10} s after ${signal}: exiting now`);
      deps.exit(code);
    }, deps.deadlineMs);
    timer.unref?.(); // the deadline never keeps a process alive that has finished stopping
  };
}

/**
 * The console of a CLI process, for the libraries it loads (node-llama-cpp, an SDK): dissent itself
 * never writes through it. Whatever they print goes to stderr — never stdout, which `--json` and
 * `dissent mcp` own — as one line starting `dissent: ` (`dissent: warning: ` for console.warn and
 * console.error), colours dropped and other control characters shown as \\xHH, redacted: a stack that follows is left out.
 */
export function libraryConsole(write: (line: string) => void): Console {
  const sink = (prefix: string) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        // A library's colours (SGR and other CSI sequences) are dropped; any other control character is shown.
        const first = terminalSafe(String(chunk).replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, ""))
          .split("\n")
          .map((l) => l.trim())
          .find((l) => l !== "");
        if (first !== undefined) write(`${prefix}${first.replace(/^dissent: (?:warning: )?/, "")}\n`);
        done();
      },
    });
  return new Console({ stdout: sink("dissent: "), stderr: sink("dissent: warning: "), colorMode: false });
}

function deadlineFrom(env: Record<string, string | undefined>): number {
  const raw = env[STOP_DEADLINE_ENV];
  return raw !== undefined && /^\d{1,7}$/.test(raw) ? Number(raw) : STOP_DEADLINE_MS;
}

/** The real process. */
export function processIo(): Io {
  const controller = new AbortController();
  const onSignal = signalStopper({
    controller,
    exit: (code) => process.exit(code),
    say: (line) => void process.stderr.write(`${line}\n`),
    deadlineMs: deadlineFrom(process.env),
  });
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  const io: Io = {
    // Nothing reaches the terminal raw: a control character in what is written (a model's ESC
    // sequence, BEL, OSC 52) is shown as `\xHH`; only the status line's own clear-line prefix passes.
    // JSON goes out through jsonLine (common.ts `json`), which leaves no control character for this
    // to change: a `\xHH` inside a JSON string would not parse.
    stdout: (t) => void process.stdout.write(terminalSafe(io.redact(t))),
    stderr: (t) =>
      void process.stderr.write(t.startsWith(CLEAR_LINE) ? CLEAR_LINE + terminalSafe(io.redact(t.slice(CLEAR_LINE.length))) : terminalSafe(io.redact(t))),
    readStdin: async (limit) => {
      if (process.stdin.isTTY) return undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      // A stdin that never ends (a pipe held open) gives way to the first signal, not only to the deadline.
      const stop = () => process.stdin.destroy(controller.signal.reason instanceof Error ? controller.signal.reason : undefined);
      controller.signal.addEventListener("abort", stop, { once: true });
      try {
        for await (const chunk of process.stdin) {
          size += (chunk as Buffer).length;
          if (size > limit) {
            process.stdin.destroy();
            throw new UsageError(`stdin is larger than ${Math.round(limit / 1024)} KiB, the limit for a prompt`);
          }
          chunks.push(chunk as Buffer);
        }
      } catch (e) {
        if (controller.signal.aborted) throw controller.signal.reason;
        throw e;
      } finally {
        controller.signal.removeEventListener("abort", stop);
      }
      if (controller.signal.aborted) throw controller.signal.reason;
      return Buffer.concat(chunks).toString("utf8");
    },
    stderrIsTTY: Boolean(process.stderr.isTTY),
    columns: process.stderr.columns ?? 80,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
    redact: (t) => redactKnown(t),
    streams: { stdin: process.stdin, stdout: process.stdout },
  };
  // What a library prints reaches stderr as dissent's own line (issue 32: node-llama-cpp's did not).
  globalThis.console = libraryConsole((line) => void process.stderr.write(io.redact(line)));
  return io;
}
