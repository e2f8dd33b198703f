/**
 * What a killed dissent's agent left running is found again and stopped (docs/implement.md#resuming,
 * issue 32): its process group as recorded (ImplementProcessStarted) — only in the pid space that
 * recorded it, and never a group whose id a later process took — and whatever carries its mark, a
 * daemon that left the group with setsid included. Real processes.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AGENT_MARK, newMark, recordOf, stopLeftovers, sweep } from "../../src/implement/orphans.js";
import { scratch } from "../support/cli.js";
import { until } from "../support/proc.js";

const running = (pid: number) => existsSync(`/proc/${pid}/stat`) && !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
const mine: number[] = [];
const dirs: { cleanup(): void }[] = [];
afterEach(() => {
  for (const p of mine.splice(0)) if (running(p)) process.kill(p, "SIGKILL");
  for (const d of dirs.splice(0)) d.cleanup();
});

/** An agent-like group: a leader ignoring SIGTERM, a child in its group, a daemon in a session of its own; all carrying the mark. */
async function leftovers(mark: string): Promise<{ leader: number; child: number; daemon: number }> {
  const s = scratch("dissent-orphans-");
  dirs.push(s);
  const leader = spawn(
    "/bin/sh",
    ["-c", `trap '' TERM; sleep 600 & echo $! > ${s.dir}/child; setsid sh -c 'echo $$ > ${s.dir}/daemon; exec sleep 600' & while :; do sleep 1; done`],
    { detached: true, stdio: "ignore", env: { PATH: process.env.PATH ?? "", [AGENT_MARK]: mark } },
  );
  leader.unref();
  const pid = leader.pid ?? 0;
  mine.push(pid);
  await until(() => existsSync(join(s.dir, "child")) && existsSync(join(s.dir, "daemon")) && readFileSync(join(s.dir, "daemon"), "utf8").trim() !== "");
  const child = Number(readFileSync(join(s.dir, "child"), "utf8"));
  const daemon = Number(readFileSync(join(s.dir, "daemon"), "utf8"));
  mine.push(child, daemon);
  return { leader: pid, child, daemon };
}

describe("stopLeftovers", () => {
  it("kills a recorded group still alive — leader, child, and the daemon that left the group — and waits until they are gone", async () => {
    const mark = newMark();
    const p = await leftovers(mark);
    const r = await stopLeftovers([recordOf(p.leader, mark)]);
    expect(r).toEqual({ stopped: 1, elsewhere: 0 });
    for (const pid of [p.leader, p.child, p.daemon]) expect(running(pid), String(pid)).toBe(false);
  });

  it("leaves a group recorded in another pid space alone (another machine's, another container's pids), and says so", async () => {
    const mark = newMark();
    const p = await leftovers(mark);
    const r = await stopLeftovers([{ ...recordOf(p.leader, mark), space: "another-boot/pid:[4026532999]" }]);
    expect(r).toEqual({ stopped: 0, elsewhere: 1 });
    expect(running(p.leader)).toBe(true);
  });

  it("never kills a group whose id a later process now has (a pid used again), nor anything without the mark", async () => {
    const p = await leftovers(newMark());
    const r = await stopLeftovers([{ ...recordOf(p.leader, newMark()), started: 1 }]);
    expect(r.stopped).toBe(0);
    expect(running(p.leader)).toBe(true);
    expect(running(p.daemon)).toBe(true);
  });

  it("sweep kills whatever carries a command's mark, in its group or not", async () => {
    const mark = newMark();
    const p = await leftovers(mark);
    expect(sweep(mark)).toBeGreaterThanOrEqual(3); // the leader, its child, the daemon (and the leader's passing sleep)
    await until(() => [p.leader, p.child, p.daemon].every((pid) => !running(pid)));
  });
});
