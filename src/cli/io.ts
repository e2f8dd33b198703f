import { DissentError, Interrupted, messageOf, UsageError } from "../errors.js";
import { missingOptional } from "../opt-in.js";
import { redact as redactKnown } from "../redact.js";
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
  /** Every write passes through this (CONTRACT §6: secrets never reach stdout or stderr). */
  redact: (text: string) => string;
}

/** Terminal control sequences and control characters, removed from titles and model text shown in tables. */
const CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
export const safe = (text: string) => text.replace(CONTROL, "");

/** Reports an error as one line (CONTRACT §6) and returns its exit code; the stack only with --verbose. */
export function fail(thrown: unknown, io: Io, verbose: boolean): number {
  const e = missingOptional(thrown) ?? thrown;
  const line = safe(io.redact(messageOf(e)).split("\n")[0] ?? "");
  io.stderr(`dissent: error: ${DissentError.isInstance(e) ? line : `internal error: ${line}`}\n`);
  if (verbose && e instanceof Error && e.stack) io.stderr(`${io.redact(e.stack)}\n`);
  return exitCodeOf(e);
}

/** The real process. */
export function processIo(): Io {
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = (signal: "SIGINT" | "SIGTERM") => {
    interrupts++;
    if (interrupts > 1) process.exit(signal === "SIGTERM" ? 143 : 130);
    controller.abort(new Interrupted(signal === "SIGTERM" ? "terminated (SIGTERM)" : "interrupted (Ctrl-C)", signal));
  };
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  const io: Io = {
    stdout: (t) => void process.stdout.write(io.redact(t)),
    stderr: (t) => void process.stderr.write(io.redact(t)),
    readStdin: async (limit) => {
      if (process.stdin.isTTY) return undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of process.stdin) {
        size += (chunk as Buffer).length;
        if (size > limit) {
          process.stdin.destroy();
          throw new UsageError(`stdin is larger than ${Math.round(limit / 1024)} KiB, the limit for a prompt`);
        }
        chunks.push(chunk as Buffer);
      }
      return Buffer.concat(chunks).toString("utf8");
    },
    stderrIsTTY: Boolean(process.stderr.isTTY),
    columns: process.stderr.columns ?? 80,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
    redact: (t) => redactKnown(t),
  };
  return io;
}
