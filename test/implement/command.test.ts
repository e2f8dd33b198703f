/**
 * Running the agent (docs/implement.md): its process group is stopped at the time limit (SIGTERM,
 * then SIGKILL), whatever it started goes with it, its output is kept only as a redacted tail, and
 * one that ignores SIGTERM is killed all the same. Real processes, no sleeps in the test.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OUTPUT_TAIL_BYTES, runCommand } from "../../src/implement/command.js";
import { scratch } from "../support/cli.js";

const sh = (script: string, o: { timeoutMs?: number; stdin?: string; cwd?: string } = {}) =>
  runCommand({
    file: "/bin/sh",
    args: ["-c", script],
    cwd: o.cwd ?? process.cwd(),
    env: { PATH: process.env.PATH ?? "" },
    timeoutMs: o.timeoutMs ?? 10_000,
    redact: (t) => t.replaceAll("sk-secret-123456", "[redacted]"),
    ...(o.stdin !== undefined ? { stdin: o.stdin } : {}),
  });

/** Running and not a zombie. */
const running = (pid: number) => existsSync(`/proc/${pid}/stat`) && !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));

describe("runCommand", () => {
  it("reports the exit code, reads stdin, and keeps a redacted tail of the output", async () => {
    const r = await sh('read line; echo "got $line"; echo "key sk-secret-123456" >&2; exit 3', { stdin: "hello\n" });
    expect(r).toMatchObject({ exit_code: 3, signal: null, timed_out: false });
    expect(r.output_tail).toContain("got hello");
    expect(r.output_tail).toContain("key [redacted]");
    expect(r.output_tail).not.toContain("sk-secret");
  });

  it("keeps only the last 8 KiB of a large output, and counts all of it", async () => {
    const r = await sh("i=0; while [ $i -lt 4000 ]; do echo line-$i-xxxxxxxxxxxxxxxx; i=$((i+1)); done");
    expect(r.output_bytes).toBeGreaterThan(100_000);
    expect(Buffer.byteLength(r.output_tail)).toBeLessThanOrEqual(OUTPUT_TAIL_BYTES);
    expect(r.output_tail.trimEnd().endsWith("line-3999-xxxxxxxxxxxxxxxx")).toBe(true);
  });

  it("stops a command that ignores SIGTERM at its time limit, with the process it started", async () => {
    const s = scratch("dissent-command-");
    try {
      const r = await sh(`trap '' TERM; (trap '' TERM; sleep 600) & echo $! > ${s.dir}/child; sleep 600`, { timeoutMs: 500, cwd: s.dir });
      expect(r.timed_out).toBe(true);
      expect(r.exit_code).toBeNull();
      expect(r.signal).toBe("SIGKILL");
      const child = Number(readFileSync(`${s.dir}/child`, "utf8"));
      expect(running(child)).toBe(false);
    } finally {
      s.cleanup();
    }
  });

  it("an abort stops the group and rejects with the abort's reason", async () => {
    const c = new AbortController();
    const p = runCommand({
      file: "/bin/sh",
      args: ["-c", "sleep 600"],
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? "" },
      timeoutMs: 60_000,
      redact: (t) => t,
      signal: c.signal,
    });
    c.abort(new Error("stopped by the test"));
    await expect(p).rejects.toThrow("stopped by the test");
  });

  it("a daemon it left in a session of its own, holding its pipes, does not hold the result: the run ends when the command does, what it wrote kept", async () => {
    const s = scratch("dissent-command-");
    let after = 0;
    try {
      const r = await runCommand({
        file: "/bin/sh",
        args: [
          "-c",
          `setsid sh -c 'echo daemon up; echo $$ > ${s.dir}/daemon; exec sleep 600' & while [ ! -s ${s.dir}/daemon ]; do sleep 0.05; done; echo leader done`,
        ],
        cwd: s.dir,
        env: { PATH: process.env.PATH ?? "" },
        timeoutMs: 60_000,
        redact: (t) => t,
        afterExit: () => after++,
      });
      expect(r).toMatchObject({ exit_code: 0, timed_out: false });
      expect(r.output_tail).toContain("daemon up");
      expect(r.output_tail).toContain("leader done");
      expect(after).toBe(1);
      const daemon = Number(readFileSync(`${s.dir}/daemon`, "utf8"));
      expect(running(daemon)).toBe(true); // outside the group: left to whoever knows it (the attempt's sweep)
      process.kill(daemon, "SIGKILL");
    } finally {
      s.cleanup();
    }
  });

  it("reports the pid it started: the id of its process group", async () => {
    let pid = 0;
    const r = await runCommand({
      file: "/bin/sh",
      args: ["-c", "ps -o pgid= -p $$"],
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? "" },
      timeoutMs: 10_000,
      redact: (t) => t,
      onSpawn: (p) => {
        pid = p;
      },
    });
    expect(Number(r.output_tail.trim())).toBe(pid);
  });
});
