import { lstatSync, readdirSync, type Stats } from "node:fs";
import { join, relative, resolve } from "node:path";
import { git } from "./git.js";

/** The most entries one snapshot lists: beyond it the rest of a folder is not watched (docs/limits.md). */
export const SNAPSHOT_ENTRIES = 20_000;

/** What the agent could write outside its clone, as seen at one moment: path → size and change times. */
export type Snapshot = Map<string, string>;

/** Where to look: folders listed file by file (minus what to skip), and git checkouts whose state is compared. */
export interface Watched {
  /** Folders listed recursively (dissent's home: the agent's `..`). */
  folders: readonly string[];
  /** Absolute paths not listed: the agent's own clone, dissent's store files, task files, other issues' clones. */
  skip: (path: string) => boolean;
  /**
   * The user's checkout: its HEAD, branch and `git status`, its ignored files (an `.env`), and its
   * git folder but the objects (refs, config, hooks) must not change.
   */
  checkouts: readonly string[];
}

/** A file's stamp: size, modification and status-change time (the last cannot be set back by `touch`). */
function stamp(st: Stats): string {
  return st.isDirectory() ? "dir" : `${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/** Lists a folder's entries (a stamp each), depth first, at most `room` of them. */
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
    let st: Stats;
    try {
      st = lstatSync(path);
    } catch {
      continue; // gone between readdir and lstat: the next snapshot says so
    }
    into.set(path, stamp(st));
    if (st.isDirectory() && !st.isSymbolicLink()) list(path, skip, into, room);
  }
}

/** One checkout's state: HEAD and branch, every changed, untracked or ignored path, and its git folder. */
async function checkout(c: string, skip: (p: string) => boolean, out: Snapshot, room: { left: number }): Promise<void> {
  // One git call: `# branch.oid` and `# branch.head` say HEAD and the branch, the other lines every changed or untracked path.
  const status = await git(c, ["status", "--porcelain=v2", "--branch", "--untracked-files=all"], { scope: "user", allowFail: true, maxBytes: 1024 * 1024 });
  for (const line of status.stdout.split("\n").filter(Boolean)) {
    if (line.startsWith("# ")) {
      const [key = "", value = ""] = line.slice(2).split(" ");
      if (key === "branch.oid" || key === "branch.head") out.set(`${c} (${key})`, value);
      continue;
    }
    // v2 lines end with the path (after the fields of their kind); `?` untracked.
    const path = line.startsWith("? ")
      ? line.slice(2)
      : line
          .split(" ")
          .slice(line.startsWith("2 ") ? 9 : 8)
          .join(" ");
    out.set(join(c, path), `status ${line.split(" ").slice(0, 2).join(" ")}`);
  }
  // Ignored files (`.env`, build output) are not in the status: each is stamped; an ignored folder as one entry.
  const ignored = await git(c, ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], {
    scope: "user",
    allowFail: true,
    maxBytes: 1024 * 1024,
  });
  for (const rel of ignored.stdout.split("\0").filter(Boolean)) {
    if (room.left <= 0) break;
    const path = join(c, rel);
    if (skip(path.replace(/\/$/, ""))) continue;
    room.left--;
    try {
      out.set(path, stamp(lstatSync(path)));
    } catch {
      // gone since git listed it: the other snapshot says so
    }
  }
  // The git folder but its objects and index: refs (loose and packed), HEAD, config, hooks, info. The
  // `dissent/` branches are left out: dissent itself fetches another issue's branch in while this agent works.
  const dir = (await git(c, ["rev-parse", "--path-format=absolute", "--git-common-dir"], { scope: "user", allowFail: true })).stdout.trim();
  if (dir) {
    const mine = new Set([join(dir, "objects"), join(dir, "index"), join(dir, "refs", "heads", "dissent"), join(dir, "logs", "refs", "heads", "dissent")]);
    list(dir, (p) => mine.has(p) || skip(p), out, room);
  }
}

/**
 * A snapshot of everything an agent might write outside its clone (docs/implement.md safety):
 * every file under the watched folders, and each watched checkout's state.
 */
export async function snapshot(w: Watched): Promise<Snapshot> {
  const out: Snapshot = new Map();
  const room = { left: SNAPSHOT_ENTRIES };
  for (const f of w.folders) list(resolve(f), w.skip, out, room);
  for (const c of w.checkouts) await checkout(c, w.skip, out, room);
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
