import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** A write's outcome: done, or why not as a phrase ("is a symbolic link: …"). */
export type SafeWrite = { ok: true } | { ok: false; reason: string };

/** Open flags of a write that never follows a link at the path and never blocks on a FIFO. */
const BASE = constants.O_WRONLY | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * The one writer of files a user names (`init --config`, `wiki export DIR`, `eval --html`): it
 * never writes through a symbolic link planted at the path (a link is refused, dangling or not),
 * nor through a hard link (a file with another name: writing it would change that one too), never
 * into a FIFO or a device, and says plainly when the folder does not exist. Without `overwrite` an
 * existing file is refused too (docs/limits.md "Files dissent writes").
 */
export function writeNoFollow(path: string, text: string, opts: { overwrite: boolean }): SafeWrite {
  // lstat first for the clearer message; O_NOFOLLOW below still refuses a link planted in between.
  try {
    if (lstatSync(path).isSymbolicLink())
      return { ok: false, reason: "is a symbolic link: dissent never writes through a link (remove it, or name the file it points to)" };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") return refused(e, path);
  }
  let fd: number;
  try {
    fd = openSync(path, BASE | (opts.overwrite ? 0 : constants.O_EXCL), 0o644);
  } catch (e) {
    return refused(e, path);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, reason: "is not a regular file (a FIFO or a device): dissent writes only regular files" };
    // Nothing is written yet (no O_TRUNC): another name of the same file is left as it was.
    if (st.nlink > 1)
      return {
        ok: false,
        reason: `has ${st.nlink - 1} other hard link${st.nlink === 2 ? "" : "s"}: dissent never writes through a hard link (another name of the file would change too; remove this one first)`,
      };
    // Truncate only once it is known to be a regular file.
    if (opts.overwrite) ftruncateSync(fd);
    const bytes = Buffer.from(text, "utf8");
    for (let n = 0; n < bytes.length; ) n += writeSync(fd, bytes, n, bytes.length - n);
    return { ok: true };
  } catch (e) {
    return refused(e, path);
  } finally {
    closeSync(fd);
  }
}

function refused(e: unknown, path: string): { ok: false; reason: string } {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, reason: `cannot be written: the folder ${dirname(path)} does not exist` };
  if (code === "ELOOP" || code === "EMLINK") return { ok: false, reason: "is a symbolic link: dissent never writes through a link" };
  if (code === "EEXIST") return { ok: false, reason: "already exists" };
  if (code === "EISDIR") return { ok: false, reason: "is a folder" };
  if (code === "ENXIO") return { ok: false, reason: "is a FIFO with no reader: dissent writes only regular files" };
  return { ok: false, reason: `cannot be written (${code ?? (e instanceof Error ? e.message : String(e))})` };
}

/** A folder checked for writing into: its identity, to see that it is still the same folder before each file. */
export type SafeFolder = { ok: true; path: string; dev: number; ino: number } | { ok: false; reason: string };

/**
 * The folder `dir` (relative to `cwd`), made ready to write files into (`wiki export DIR`): never
 * reached through a symbolic link. DIR itself may not be a link, nor — for a DIR inside `cwd`, where
 * a checkout may hold links someone else committed — any folder between `cwd` and DIR; the folders
 * it lacks are created one at a time, each checked after it is made (a link planted meanwhile is
 * refused). The folders above an absolute DIR elsewhere are the user's to choose (macOS's `/tmp`
 * is a link). `reason` names the part at fault.
 */
export function folderNoFollow(dir: string, cwd: string): SafeFolder {
  const abs = resolve(cwd, dir);
  const root = resolve(cwd);
  const parts: string[] = [];
  if (abs === root || abs.startsWith(root.endsWith(sep) ? root : `${root}${sep}`)) {
    let at = root;
    for (const name of relative(root, abs).split(sep).filter(Boolean)) parts.push((at = join(at, name)));
  } else {
    // DIR itself, and the folders missing above it up to the first that exists.
    for (let at = abs; ; at = dirname(at)) {
      parts.unshift(at);
      if (exists(at) || dirname(at) === at) break;
    }
    if (parts.length > 1 && exists(parts[0] as string)) parts.shift(); // an existing ancestor: the user's
  }
  for (const part of parts) {
    const shown = relative(root, part) || part;
    if (!exists(part)) {
      try {
        mkdirSync(part);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST")
          return { ok: false, reason: `${shown} cannot be created (${(e as NodeJS.ErrnoException).code ?? String(e)})` };
      }
    }
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(part);
    } catch (e) {
      return { ok: false, reason: `${shown} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})` };
    }
    if (st.isSymbolicLink()) return { ok: false, reason: `${shown} is a symbolic link: dissent never writes through a link (name the folder it points to)` };
    if (!st.isDirectory()) return { ok: false, reason: `${shown} is not a directory` };
  }
  const st = lstatSync(abs);
  return { ok: true, path: abs, dev: st.dev, ino: st.ino };
}

/** Is `folder` still the folder `folderNoFollow` checked (not replaced by a link or another folder since)? */
export function sameFolder(folder: { path: string; dev: number; ino: number }): boolean {
  try {
    const st = lstatSync(folder.path);
    return st.isDirectory() && !st.isSymbolicLink() && st.dev === folder.dev && st.ino === folder.ino;
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
