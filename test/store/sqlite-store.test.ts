/**
 * What only the SQLite adapter of the store port (src/store/sqlite.ts) has: a file that can be
 * damaged, or be a folder. Everything the port promises runs against both adapters in
 * test/store/store-port.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { exitCodeOf } from "../../src/cli/exit-codes.js";
import { ConfigError, StoreError } from "../../src/errors.js";
import { openSqliteStore, storeFile } from "../../src/store/sqlite.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "dissent-sqlite-store-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("a store file that cannot be used is a StoreError naming it", () => {
  async function failure(home: string): Promise<unknown> {
    return openSqliteStore(home).then(
      async (s) => {
        await s.close();
        return undefined;
      },
      (e: unknown) => e,
    );
  }

  it("a garbage dissent.db: StoreError naming the file, exit 1, no internal error", async () => {
    const home = join(dir, "home");
    mkdirSync(home);
    const file = storeFile(home);
    writeFileSync(file, "this is not a database, just some text someone saved here\n".repeat(200));
    const err = await failure(home);
    expect(StoreError.isInstance(err), String(err)).toBe(true);
    expect((err as Error).message).toContain(file);
    expect((err as Error).message).toMatch(/damaged|not a database/);
    expect((err as Error).message).not.toContain("\n");
    expect(exitCodeOf(err)).toBe(1);
  });

  it("a dissent.db that is a folder is a StoreError; a home that is a file is a ConfigError (DISSENT_HOME is configuration); both name it", async () => {
    const home = join(dir, "home");
    mkdirSync(join(home, "dissent.db"), { recursive: true });
    const folder = await failure(home);
    expect(StoreError.isInstance(folder), String(folder)).toBe(true);
    expect((folder as Error).message).toContain(storeFile(home));

    const fileHome = join(dir, "home-file");
    writeFileSync(fileHome, "not a folder");
    const notDir = await failure(fileHome);
    expect(ConfigError.isInstance(notDir), String(notDir)).toBe(true);
    expect((notDir as Error).message).toContain(fileHome);
  });
});
