import { readFileSync, readlinkSync } from "node:fs";

let space: string | undefined;

/**
 * Which pid space this process lives in: the kernel's boot and its PID namespace. Two pids can be
 * compared only within one — two containers on one host name have two, a machine that rebooted
 * another — so a pid is only ever judged alive or dead (or signalled) from the space that recorded
 * it. Empty where /proc cannot say (not Linux): then no pid is judged at all.
 */
export function pidSpace(): string {
  if (space !== undefined) return space;
  try {
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    space = `${boot}/${readlinkSync("/proc/self/ns/pid")}`;
  } catch {
    space = "";
  }
  return space;
}
