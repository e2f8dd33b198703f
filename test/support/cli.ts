import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The built CLI, run as a user runs it. */
export const BIN = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string>;
  input?: string;
  timeoutMs?: number;
}

/** Spawns `node dist/cli/bin.js …` with a clean environment (no inherited keys or config). */
export function dissent(args: string[], opts: CliOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? "", HOME: opts.cwd, ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

/** A scratch folder, removed by the returned cleanup. */
export function scratch(prefix = "dissent-test-"): { dir: string; write(name: string, text: string): string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    write(name, text) {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
