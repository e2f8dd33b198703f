import { lstatSync, mkdirSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { RunError } from "../errors.js";
import { writeNoFollow } from "../files/write.js";

/**
 * A folder of dissent's own under its home (`tasks`, `worktrees`, `git`), made if missing. Every part
 * below the home must be a real folder: a symbolic link (or a file) planted in its place — by an agent
 * that runs unsandboxed, say — is removed and the folder made, so nothing dissent writes there is ever
 * written through a link to somewhere else (docs/implement.md#safety).
 */
export function ownDir(home: string, ...parts: string[]): string {
  mkdirSync(home, { recursive: true });
  let dir = realpathSync(home);
  for (const part of parts) {
    dir = join(dir, part);
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(dir);
    } catch {
      st = undefined;
    }
    if (st?.isDirectory()) continue;
    if (st) rmSync(dir, { force: true });
    mkdirSync(dir, { mode: 0o700 });
  }
  return dir;
}

/**
 * Writes a file of dissent's own under its home through the no-follow writer (src/files/write.ts):
 * whatever sits at the path (a link planted there, an old copy) is removed first and the file made
 * anew, exclusively — a link planted between the two makes the write fail, never follow.
 */
export function writeOwnFile(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  rmSync(path, { force: true, recursive: true });
  const done = writeNoFollow(path, text, { overwrite: false });
  if (!done.ok) throw new RunError(`dissent could not write its own file ${path}: it ${done.reason}`);
  return path;
}
