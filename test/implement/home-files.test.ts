/**
 * What dissent writes under its home goes through the no-follow writer (issue 32): a symbolic link an
 * agent planted where a task file goes, or in place of one of dissent's folders, is removed — the
 * file it points to is never written.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ownDir, writeOwnFile } from "../../src/implement/home-files.js";
import { scratch } from "../support/cli.js";

const dirs: { cleanup(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

function home() {
  const s = scratch("dissent-home-files-");
  dirs.push(s);
  const outside = join(s.dir, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "victim.txt"), "the user's\n");
  return { home: join(s.dir, "home"), outside };
}

describe("dissent's own files under its home", () => {
  it("a link planted at the next task file's path is replaced by the file; the file it pointed to is untouched", () => {
    const h = home();
    const tasks = ownDir(h.home, "tasks");
    symlinkSync(join(h.outside, "victim.txt"), join(tasks, "issue-1-attempt-2.md"));
    const path = writeOwnFile(tasks, "issue-1-attempt-2.md", "# the task\n");
    expect(lstatSync(path).isFile()).toBe(true);
    expect(readFileSync(path, "utf8")).toBe("# the task\n");
    expect(readFileSync(join(h.outside, "victim.txt"), "utf8")).toBe("the user's\n");
  });

  it("a link planted in place of one of dissent's folders is replaced by a folder; nothing is written where it pointed", () => {
    const h = home();
    mkdirSync(h.home);
    symlinkSync(h.outside, join(h.home, "tasks"));
    const tasks = ownDir(h.home, "tasks");
    expect(lstatSync(tasks).isDirectory()).toBe(true);
    writeOwnFile(tasks, "issue-1-attempt-1.md", "# the task\n");
    expect(existsSync(join(h.outside, "issue-1-attempt-1.md"))).toBe(false);
  });
});
