import { lstatSync, readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { git } from "./git.js";

/** The most entries one snapshot lists: beyond it the rest of a folder is not watched (docs/limits.md). */
export const SNAPSHOT_ENTRIES = 20_000;

/** What the agent could write outside its worktree, as seen at one moment: path → size and modification time. */
export type Snapshot = Map<string, string>;

/** Where to look: folders listed file by file (minus what to skip), and git checkouts whose status is compared. */
export interface Watched {
  /** Folders listed recursively (the worktrees folder: the agent's `..`; dissent's home). */
  folders: readonly string[];
  /** Absolute paths not listed: the agent's own worktree, dissent's store files, task files. */
  skip: (path: string) => boolean;
  /** The user's checkout: its HEAD, branch and `git status` must not change. */
  checkouts: readonly string[];
}

/** Lists a folder's entries (size and mtime each), depth first, at most `room` of them. */
function list(dir: string, skip: (p: string) => boolean, into: Snapshot, room: { left: number }): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    into.set(dir, `unreadable:${(e as NodeJS.ErrnoException).code ?? "error"}`);
    return;
  }
  for (const name of names.sort()) {
    if (room.left <= 0) return;
    const path = join(dir, name);
    if (skip(path)) continue;
    room.left--;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(path);
    } catch {
      continue; // gone between readdir and lstat: the next snapshot says so
    }
    into.set(path, st.isDirectory() ? "dir" : `${st.size}:${st.mtimeMs}`);
    if (st.isDirectory() && !st.isSymbolicLink()) list(path, skip, into, room);
  }
}

/**
 * A snapshot of everything an agent might write outside its worktree (docs/implement.md safety):
 * every file under the watched folders, and each watched checkout's HEAD, branch and status.
 */
export async function snapshot(w: Watched): Promise<Snapshot> {
  const out: Snapshot = new Map();
  const room = { left: SNAPSHOT_ENTRIES };
  for (const f of w.folders) list(resolve(f), w.skip, out, room);
  for (const c of w.checkouts) {
    // One git call: `# branch.oid` and `# branch.head` say HEAD and the branch, the other lines every changed or untracked path.
    const status = await git(c, ["status", "--porcelain=v2", "--branch", "--untracked-files=all"], { allowFail: true, maxBytes: 1024 * 1024 });
    for (const line of status.stdout.split("\n").filter(Boolean)) {
      if (line.startsWith("# ")) {
        const [key = "", value = ""] = line.slice(2).split(" ");
        if (key === "branch.oid" || key === "branch.head") out.set(`${c} (${key})`, value);
        continue;
      }
      // v2 lines end with the path (after the fields of their kind); `?` untracked, `!` ignored (not listed).
      const path = line.startsWith("? ")
        ? line.slice(2)
        : line
            .split(" ")
            .slice(line.startsWith("2 ") ? 9 : 8)
            .join(" ");
      out.set(join(c, path), `status ${line.split(" ").slice(0, 2).join(" ")}`);
    }
  }
  return out;
}

/** Paths that appeared, changed or went away between two snapshots (at most 20, shown relative to `base`). */
export function changedPaths(before: Snapshot, after: Snapshot, base: string): string[] {
  const out: string[] = [];
  for (const [p, v] of after) if (before.get(p) !== v) out.push(p);
  for (const p of before.keys()) if (!after.has(p)) out.push(p);
  return [...new Set(out)]
    .sort()
    .slice(0, 20)
    .map((p) => relative(base, p) || p);
}
