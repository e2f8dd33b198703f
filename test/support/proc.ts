import { spawn, type ChildProcess } from "node:child_process";
import { BIN, type CliResult } from "./cli.js";

/** Starts the CLI without waiting, so a test can signal it mid-run. */
export function startDissent(args: string[], opts: { cwd: string; env?: Record<string, string> }): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: opts.cwd, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Resolves when `predicate` holds, polling every 10 ms (gives up after `ms`). */
export async function until(predicate: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A started CLI process. */
export type Started = ReturnType<typeof startDissent>;

/** Stops every process still running (SIGTERM) and waits for each to exit: an afterEach after a failed assertion. */
export async function stopAll(started: Started[]): Promise<void> {
  for (const x of started.splice(0)) {
    if (x.child.exitCode === null && x.child.signalCode === null) x.child.kill("SIGTERM");
    await x.done;
  }
}
