import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseEntry, readWiki, setFrontMatter } from "../carryover/wiki.js";
import { readBounded } from "../files/read.js";
import { folderNoFollow, sameFolder, writeNoFollow } from "../files/write.js";
import { WIKI_ENTRY_BYTES } from "../store/port.js";
import { jsonLine } from "../terminal.js";
import { RunError, UsageError } from "../errors.js";
import { json, olderThanDays, withDissent, type Common } from "./common.js";
import type { Io } from "./io.js";
import { table } from "./table.js";

/** `dissent wiki list`. */
export async function wikiList(opts: Common, io: Io): Promise<number> {
  return withDissent(
    opts,
    io,
    async (d, status) => {
      const entries = await readWiki((await d.store()).wiki, (m) => status.print(`dissent: warning: ${m}`));
      if (opts.json) {
        io.stdout(`${jsonLine(entries.map(({ body: _b, meta: _m, ...e }) => e))}\n`);
      } else if (!entries.length) {
        io.stdout("the wiki is empty (entries appear when an issue merges with unresolved CRITICAL or HIGH concerns)\n");
      } else {
        io.stdout(
          table(
            ["entry", "severity", "stale", "prs", "title"],
            entries.map((e) => [e.id, e.severity, e.stale ? "stale" : "", e.prs.map((p) => `#${p}`).join(","), e.title]),
          ),
        );
      }
      return 0;
    },
    { readOnly: true },
  );
}

/** `dissent wiki show ENTRY`. */
export async function wikiShow(entry: string, opts: Common, io: Io): Promise<number> {
  return withDissent(
    opts,
    io,
    async (d, status) => {
      const store = await d.store();
      const id = entry.replace(/\.md$/, "");
      const found = (await readWiki(store.wiki, (m) => status.print(`dissent: warning: ${m}`))).find((e) => e.id === id);
      if (!found) throw new RunError(`no wiki entry '${entry}' (dissent wiki list shows them)`);
      if (opts.json) io.stdout(`${jsonLine({ ...found, meta: undefined })}\n`);
      else io.stdout((await store.wiki.get(id))?.text ?? "");
      return 0;
    },
    { readOnly: true },
  );
}

/** `dissent wiki prune --older-than DAYS`: marks old entries stale; stale entries are never injected. */
export async function wikiPrune(opts: Common & { olderThan: string }, io: Io): Promise<number> {
  const days = olderThanDays(opts.olderThan);
  return withDissent(opts, io, async (d, status) => {
    const store = await d.store();
    const cutoff = Date.now() - days * 86_400_000;
    const pruned: string[] = [];
    for (const e of await readWiki(store.wiki, (m) => status.print(`dissent: warning: ${m}`))) {
      const updated = Date.parse(e.updated || e.created);
      if (e.stale || Number.isNaN(updated) || updated >= cutoff) continue;
      await setFrontMatter(store.wiki, e.id, { stale: true });
      pruned.push(e.id);
    }
    if (opts.json) json(io, { pruned });
    else io.stdout(pruned.length ? `marked stale: ${pruned.join(", ")}\n` : "nothing older than that\n");
    return 0;
  });
}

/** `dissent wiki export DIR`: writes every entry as the markdown file of docs/issue.md. */
export async function wikiExport(dir: string, opts: Common, io: Io): Promise<number> {
  return withDissent(
    opts,
    io,
    async (d) => {
      // Never through a link: not DIR itself, nor a folder on the way to it, nor one planted at DIR/<id>.md.
      const folder = folderNoFollow(dir, io.cwd);
      if (!folder.ok) throw new UsageError(`wiki export: ${folder.reason}`);
      const target = folder.path;
      const entries = await (await d.store()).wiki.list();
      for (const e of entries) {
        const file = join(target, `${e.id}.md`);
        if (!sameFolder(folder)) throw new UsageError(`wiki export: ${dir} was replaced while the entries were written: nothing more is written`);
        const wrote = writeNoFollow(file, e.text, { overwrite: true });
        if (!wrote.ok) throw new UsageError(`wiki export: ${file} ${wrote.reason}`);
      }
      if (opts.json) json(io, { exported: entries.map((e) => e.id), dir: target });
      else io.stdout(`exported ${entries.length} wiki entr${entries.length === 1 ? "y" : "ies"} to ${target}\n`);
      return 0;
    },
    { readOnly: true },
  );
}

/** `dissent wiki import DIR`: reads hand-edited entry files back; a malformed one is skipped with a warning naming it. */
export async function wikiImport(dir: string, opts: Common, io: Io): Promise<number> {
  const source = resolve(io.cwd, dir);
  if (!existsSync(source) || !statSync(source).isDirectory()) throw new UsageError(`${dir} is not a directory`);
  return withDissent(opts, io, async (d, status) => {
    const store = await d.store();
    const imported: string[] = [];
    for (const name of readdirSync(source).sort()) {
      if (!name.endsWith(".md") || name.startsWith(".")) continue;
      const id = name.replace(/\.md$/, "");
      if (!/^[A-Za-z0-9._-]{1,120}$/.test(id)) {
        status.print(`dissent: warning: skipping ${join(source, name)}: not a wiki entry name`);
        continue;
      }
      // Bounded and regular files only: a FIFO among the entries is skipped, never waited on.
      const got = readBounded(join(source, name), WIKI_ENTRY_BYTES);
      if (!got.ok) {
        status.print(`dissent: warning: skipping ${join(source, name)}: ${got.reason}`);
        continue;
      }
      const text = got.text;
      const parsed = parseEntry(text, join(source, name), id);
      if (typeof parsed === "string") {
        status.print(`dissent: warning: skipping wiki entry ${join(source, name)}: ${parsed}`);
        continue;
      }
      await store.wiki.put({ id, text });
      imported.push(id);
    }
    if (opts.json) json(io, { imported });
    else io.stdout(`imported ${imported.length} wiki entr${imported.length === 1 ? "y" : "ies"}\n`);
    return 0;
  });
}
