/**
 * The store's code index (issue 30), one suite for both adapters: entries by key, counted; bounded,
 * the oldest-used out first; shared by every process on the store; redacted like every sink. And
 * the map built through it: a second store opened on the same storage parses nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openRepoMap } from "../../src/code/index.js";
import { tickingClock } from "../support/sqlite-home.js";
import { BACKENDS, type Backend } from "../support/store-backends.js";
import { makeRepo, shopFiles } from "./repos.js";

describe.each(BACKENDS)("the code index on %s", (_name, make) => {
  let backend: Backend;
  beforeEach(() => {
    backend = make();
  });
  afterEach(async () => {
    await backend.cleanup();
  });

  it("keeps values by key and counts what it is asked", async () => {
    const s = await backend.open({ clock: tickingClock() });
    const idx = s.codeIndex;
    expect(await idx.getMany(["a", "b"])).toEqual(new Map());
    await idx.putMany([
      { key: "a", value: "alpha" },
      { key: "b", value: "β and more" },
    ]);
    await idx.putMany([{ key: "a", value: "alpha again" }]);
    expect(await idx.getMany(["a", "b", "c", "a"])).toEqual(
      new Map([
        ["a", "alpha again"],
        ["b", "β and more"],
      ]),
    );
    expect(idx.stats).toEqual({ hits: 2, misses: 3, puts: 3 });
    expect(await idx.size()).toEqual({ entries: 2, bytes: Buffer.byteLength("alpha again") + Buffer.byteLength("β and more") });
    // Another process on the same storage sees them.
    const other = await backend.reopen(s, { clock: tickingClock() });
    expect((await other.codeIndex.getMany(["b"])).get("b")).toBe("β and more");
  });

  it("is bounded: past its size the entries used longest ago go first", async () => {
    const s = await backend.open({ clock: tickingClock(), codeIndexBytes: 300 });
    const idx = s.codeIndex;
    const v = (c: string) => c.repeat(100);
    await idx.putMany([{ key: "one", value: v("1") }]);
    await idx.putMany([{ key: "two", value: v("2") }]);
    await idx.putMany([{ key: "three", value: v("3") }]);
    await idx.getMany(["one"]); // used: now the newest
    await idx.putMany([{ key: "four", value: v("4") }]);
    expect([...(await idx.getMany(["one", "two", "three", "four"])).keys()].sort()).toEqual(["four", "one", "three"]);
    expect((await idx.size()).bytes).toBeLessThanOrEqual(300);
  });

  it("redacts what it keeps, as every sink of the store", async () => {
    const s = await backend.open({ clock: tickingClock(), redact: (t) => t.replaceAll("ghp_secret123", "[REDACTED]") });
    await s.codeIndex.putMany([{ key: "blob:1", value: 'const token = "ghp_secret123";' }]);
    expect((await s.codeIndex.getMany(["blob:1"])).get("blob:1")).toBe('const token = "[REDACTED]";');
  });

  it("serves the repository map: a second store on the same storage maps the same commit without parsing", async () => {
    const repo = makeRepo(shopFiles());
    try {
      const s = await backend.open({ clock: tickingClock() });
      const first = await openRepoMap({ kind: "local", root: repo.root }, { cache: s.codeIndex });
      expect(first.parsed).toBe(32);
      const other = await backend.reopen(s, { clock: tickingClock() });
      const second = await openRepoMap({ kind: "local", root: repo.root }, { cache: other.codeIndex });
      expect(second).toMatchObject({ parsed: 0, reused: 32, fromCache: true, builtAt: first.builtAt });
      expect(other.codeIndex.stats.misses).toBe(0);
      expect(second.index.files.map((f) => f.defs)).toEqual(first.index.files.map((f) => f.defs));
    } finally {
      repo.remove();
    }
  });
});
