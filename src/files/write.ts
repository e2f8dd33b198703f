import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** A write's outcome: done, or why not as a phrase ("is a symbolic link: …"). */
export type SafeWrite = { ok: true } | { ok: false; reason: string };

/** Open flags of a write that never follows a link at the path and never blocks on a FIFO. */
const BASE = constants.O_WRONLY | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * The one writer of files a user names (`init --config`, `wiki export DIR`, `eval --html`): it
 * never writes through a symbolic link planted at the path (a link is refused, dangling or not),
 * never into a FIFO or a device, and says plainly when the folder does not exist. Without
 * `overwrite` an existing file is refused too (docs/errors.md).
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
    if (!fstatSync(fd).isFile()) return { ok: false, reason: "is not a regular file (a FIFO or a device): dissent writes only regular files" };
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
