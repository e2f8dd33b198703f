import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { codeOf } from "../errors.js";
import { pidSpace } from "../pid-space.js";

/**
 * The variable every agent and test process is started with: its value is new for each command, so
 * whatever that command left running — even a daemon that left its process group with `setsid` —
 * is found again by it (docs/implement.md#safety).
 */
export const AGENT_MARK = "DISSENT_AGENT_RUN";

/** A new mark for one command. */
export const newMark = (): string => randomBytes(12).toString("hex");

/** A process's fields from /proc/PID/stat: state, process group, start time (clock ticks after boot). */
function statOf(pid: number): { state: string; pgrp: number; started: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may hold spaces or parentheses: the fields start after the last ")".
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: f[0] ?? "", pgrp: Number(f[2]), started: Number(f[19]) };
}

/** Every live (not zombie) process on this machine's /proc, with its fields. */
function processes(): { pid: number; pgrp: number; started: number }[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: { pid: number; pgrp: number; started: number }[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const s = statOf(Number(n));
    if (s && s.state !== "Z" && s.state !== "X") out.push({ pid: Number(n), pgrp: s.pgrp, started: s.started });
  }
  return out;
}

/** What is recorded of a command's process group when it starts (the `ImplementProcessStarted` event). */
export interface ProcessRecord {
  pgid: number;
  /** pidSpace() of the dissent that started it. */
  space: string;
  /** Its leader's start time, so a pid used again by another process is never taken for it. */
  started: number;
  mark: string;
}

/** The record of a process group just started (its leader's pid is its group's id). */
export function recordOf(pid: number, mark: string): ProcessRecord {
  return { pgid: pid, space: pidSpace(), started: statOf(pid)?.started ?? 0, mark };
}

/** Signals one process, ignoring one already gone. */
function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (e) {
    if (codeOf(e) !== "ESRCH" && codeOf(e) !== "EPERM") throw e;
  }
}

/** Pids whose environment carries the mark (what a command left running, in its group or not). */
function marked(mark: string): number[] {
  const needle = Buffer.from(`\0${AGENT_MARK}=${mark}\0`);
  const first = Buffer.from(`${AGENT_MARK}=${mark}\0`);
  const out: number[] = [];
  for (const p of processes()) {
    if (p.pid === process.pid) continue;
    let env: Buffer;
    try {
      env = readFileSync(`/proc/${p.pid}/environ`);
    } catch {
      continue; // gone, or not ours to read
    }
    if (env.includes(needle) || env.subarray(0, first.length).equals(first)) out.push(p.pid);
  }
  return out;
}

/**
 * Kills whatever a command left running (SIGKILL): every process carrying its mark — a daemon it
 * left behind with `setsid` included. Returns how many were found.
 */
export function sweep(mark: string): number {
  const found = marked(mark);
  for (const pid of found) kill(pid, "SIGKILL");
  return found.length;
}

/** The live members of a recorded group, unless its id now belongs to another process's group. */
function members(r: ProcessRecord): number[] {
  const all = processes();
  const leader = all.find((p) => p.pid === r.pgid);
  if (leader && r.started && leader.started !== r.started) return []; // the pid was used again: not our group
  return all.filter((p) => p.pgrp === r.pgid && p.started >= r.started).map((p) => p.pid);
}

/**
 * Stops the process groups a dissent that was killed left running (docs/implement.md#resuming): each
 * recorded group still alive in this pid space, and every process carrying its mark, gets SIGKILL,
 * and this waits (at most `waitMs`) until they are gone. A group started in another pid space (another
 * machine or container) cannot be reached from here: it is counted in `elsewhere`. Returns what was stopped.
 */
export async function stopLeftovers(records: readonly ProcessRecord[], waitMs = 5_000): Promise<{ stopped: number; elsewhere: number }> {
  const here = pidSpace();
  let stopped = 0;
  let elsewhere = 0;
  const pending: number[] = [];
  for (const r of records) {
    if (!here || r.space !== here) {
      elsewhere++;
      continue;
    }
    const pids = [...new Set([...members(r), ...marked(r.mark)])];
    if (!pids.length) continue;
    stopped++;
    for (const pid of pids) kill(pid, "SIGKILL");
    pending.push(...pids);
  }
  const until = Date.now() + waitMs;
  while (pending.length && Date.now() < until) {
    const live = new Set(processes().map((p) => p.pid));
    if (!pending.some((p) => live.has(p))) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return { stopped, elsewhere };
}
