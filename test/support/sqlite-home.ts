/**
 * A real SQLite store in a temp home, for unit tests that look at what it leaves on disk
 * (the wiki is the folder `<home>/wiki`, one `.md` file per entry).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "../../src/store/port.js";
import { openSqliteStore, type SqliteOptions } from "../../src/store/sqlite.js";

export interface SqliteHome {
  /** The temp folder holding the home (and anything else a test puts beside it). */
  dir: string;
  home: string;
  wikiDir: string;
  store: Store;
  /** `.md` file names under `<home>/wiki`, sorted; none when the folder does not exist. */
  wikiFiles(): string[];
  /** The text of `<home>/wiki/<name>` (`name` with or without `.md`). */
  wikiText(name: string): string;
  /** Closes the store and removes the temp folder. */
  cleanup(): Promise<void>;
}

export async function sqliteHome(opts: SqliteOptions = {}): Promise<SqliteHome> {
  const dir = mkdtempSync(join(tmpdir(), "dissent-store-unit-"));
  const home = join(dir, "home");
  const wikiDir = join(home, "wiki");
  const store = await openSqliteStore(home, opts);
  const file = (name: string) => join(wikiDir, name.endsWith(".md") ? name : `${name}.md`);
  return {
    dir,
    home,
    wikiDir,
    store,
    wikiFiles() {
      try {
        return readdirSync(wikiDir)
          .filter((n) => n.endsWith(".md"))
          .sort();
      } catch {
        return [];
      }
    },
    wikiText: (name) => readFileSync(file(name), "utf8"),
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A clock that ticks `step` ms per reading, from a fixed start (deterministic `at` stamps). */
export function tickingClock(start = Date.parse("2026-05-17T12:00:00.000Z"), step = 1000): () => Date {
  let t = start - step;
  return () => new Date((t += step));
}

/** A clock a test moves by hand (leases, cache age). */
export function manualClock(start = Date.parse("2026-05-17T12:00:00.000Z")): { now: () => Date; advance(ms: number): void } {
  let t = start;
  return { now: () => new Date(t), advance: (ms) => void (t += ms) };
}
