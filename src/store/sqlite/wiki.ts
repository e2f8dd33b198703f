import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { StoreError } from "../../errors.js";
import { readBounded } from "../../files/read.js";
import { writeNoFollow } from "../../files/write.js";
import { type StoredWikiEntry, UNREADABLE_WIKI, WIKI_ENTRY_BYTES, type WikiPort } from "../port.js";
import type { SqliteConn } from "./connection.js";

/** The embedded store's wiki: one markdown file per entry under the home's wiki/ folder (in memory for an in-memory store). */
export function sqliteWiki(conn: SqliteConn, memory: boolean): WikiPort {
  if (memory) return memoryWiki();
  const wikiDir = join(conn.home, "wiki");
  const wikiFiles = (): StoredWikiEntry[] => {
    if (!existsSync(wikiDir)) return [];
    const out: StoredWikiEntry[] = [];
    for (const d of readdirSync(wikiDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!d.name.endsWith(".md") || d.name.startsWith(".")) continue;
      // A dangling symlink, a folder or a FIFO named *.md, no permission, a runaway file: the reader reports it and skips it.
      const got = readBounded(join(wikiDir, d.name), WIKI_ENTRY_BYTES);
      out.push({ id: d.name.replace(/\.md$/, ""), text: got.ok ? got.text : `${UNREADABLE_WIKI}${got.reason}` });
    }
    return out;
  };
  return {
    where: wikiDir,
    list: async () => wikiFiles(),
    get: async (id) => wikiFiles().find((e) => e.id === id),
    put: async (entry) => {
      conn.writeGuard();
      mkdirSync(wikiDir, { recursive: true });
      const path = join(wikiDir, `${entry.id}.md`);
      // Write-then-rename: a crash never leaves half an entry. The no-follow writer, exclusively: a link
      // planted at the temporary name is removed, never written through (docs/implement.md#safety).
      const tmp = `${path}.tmp-${process.pid}`;
      rmSync(tmp, { force: true, recursive: true });
      const done = writeNoFollow(tmp, conn.redact(entry.text), { overwrite: false });
      if (!done.ok) throw new StoreError(`cannot write the wiki entry ${path}: it ${done.reason}`);
      renameSync(tmp, path);
    },
  };
}

/** Wiki entries held in memory (an in-memory store has no folder). */
function memoryWiki(): WikiPort {
  const entries = new Map<string, string>();
  const sorted = () => [...entries.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, text]) => ({ id, text }));
  return {
    where: "memory",
    list: async () => sorted(),
    get: async (id) => {
      const text = entries.get(id);
      return text === undefined ? undefined : { id, text };
    },
    put: async (e) => void entries.set(e.id, e.text),
  };
}
