import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { folderNoFollow, sameFolder } from "../../src/files/write.js";

let dirs: string[] = [];
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), "dissent-folder-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

describe('folderNoFollow: the folder wiki export writes into (docs/limits.md "Files dissent writes")', () => {
  it("an absolute DIR elsewhere: DIR itself may not be a link, but the folders above it are the user's (a link there is followed)", () => {
    const cwd = scratch();
    const other = scratch();
    mkdirSync(join(other, "real"));
    symlinkSync(join(other, "real"), join(other, "via"));
    expect(folderNoFollow(join(other, "via"), cwd)).toEqual({
      ok: false,
      reason: expect.stringMatching(/via is a symbolic link: dissent never writes through a link/),
    });
    const made = folderNoFollow(join(other, "via", "new", "out"), cwd);
    expect(made.ok).toBe(true);
  });

  it("a folder replaced by a link after the check is no longer the same folder", () => {
    const cwd = scratch();
    const f = folderNoFollow("out", cwd);
    if (!f.ok) throw new Error(f.reason);
    expect(sameFolder(f)).toBe(true);
    rmSync(join(cwd, "out"), { recursive: true });
    mkdirSync(join(cwd, "elsewhere"));
    symlinkSync(join(cwd, "elsewhere"), join(cwd, "out"));
    expect(sameFolder(f)).toBe(false);
  });

  it("a file on the way is not a directory; the cwd itself and real folders are fine", () => {
    const cwd = scratch();
    expect(folderNoFollow(".", cwd).ok).toBe(true);
    writeFileSync(join(cwd, "a"), "x");
    expect(folderNoFollow("a/b", cwd)).toEqual({ ok: false, reason: "a is not a directory" });
    mkdirSync(join(cwd, "d"));
    expect(folderNoFollow("d/b/c", cwd).ok).toBe(true);
  });
});
