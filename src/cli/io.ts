import { DissentError, messageOf } from "../errors.js";
import { redact } from "../redact.js";

/** The CLI's window on the process: the only place that touches stdio, env, cwd and signals. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The whole of stdin, or undefined when stdin is a TTY. */
  readStdin(): Promise<string | undefined>;
  stderrIsTTY: boolean;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Aborted on Ctrl-C / SIGTERM. */
  signal: AbortSignal;
}

/** Reports an error as one line (CONTRACT §6) and returns its exit code; the stack only with --verbose. */
export function fail(e: unknown, io: Io, verbose: boolean, secrets: readonly string[] = []): number {
  const code = DissentError.isInstance(e) ? e.exitCode : 1;
  const line = redact(messageOf(e), secrets).split("\n")[0] ?? "";
  io.stderr(`dissent: error: ${DissentError.isInstance(e) ? line : `internal error: ${line}`}\n`);
  if (verbose && e instanceof Error && e.stack) io.stderr(`${redact(e.stack, secrets)}\n`);
  return code;
}

/** The real process. */
export function processIo(): Io {
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    readStdin: async () => {
      if (process.stdin.isTTY) return undefined;
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
    stderrIsTTY: Boolean(process.stderr.isTTY),
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  };
}
