import { join } from "node:path";
import { loadWiki, updateFrontMatter } from "../carryover/wiki.js";
import { RunError, UsageError } from "../errors.js";
import type { Io } from "./io.js";
import { withRuntime } from "./issue.js";
import { table } from "./table.js";

interface Common {
  json?: boolean;
  config?: string;
  verbose?: boolean;
}

const warnTo = (io: Io) => (m: string) => io.stderr(`dissent: warning: ${m}\n`);

/** `dissent wiki list`. */
export async function wikiList(opts: Common, io: Io): Promise<number> {
  return withRuntime(opts, io, async (rt) => {
    const entries = loadWiki(join(rt.config.home, "wiki"), warnTo(io));
    if (opts.json) {
      io.stdout(`${JSON.stringify(entries.map(({ body: _b, meta: _m, ...e }) => e))}\n`);
    } else if (!entries.length) {
      io.stdout("the wiki is empty (entries appear when an issue merges with unresolved CRITICAL or HIGH concerns)\n");
    } else {
      io.stdout(table(["entry", "severity", "stale", "prs", "title"], entries.map((e) => [e.id, e.severity, e.stale ? "stale" : "", e.prs.map((p) => `#${p}`).join(","), e.title])));
    }
    return 0;
  });
}

/** `dissent wiki show ENTRY`. */
export async function wikiShow(entry: string, opts: Common, io: Io): Promise<number> {
  return withRuntime(opts, io, async (rt) => {
    const found = loadWiki(join(rt.config.home, "wiki"), warnTo(io)).find((e) => e.id === entry.replace(/\.md$/, ""));
    if (!found) throw new RunError(`no wiki entry '${entry}' (dissent wiki list shows them)`);
    if (opts.json) io.stdout(`${JSON.stringify({ ...found, meta: undefined })}\n`);
    else io.stdout((await import("node:fs")).readFileSync(found.path, "utf8"));
    return 0;
  });
}

/** `dissent wiki prune --older-than DAYS`: marks old entries stale; stale entries are never injected. */
export async function wikiPrune(opts: Common & { olderThan: string }, io: Io): Promise<number> {
  const days = Number(opts.olderThan);
  if (!/^\d+(\.\d+)?$/.test(opts.olderThan)) throw new UsageError(`--older-than must be a number of days, not '${opts.olderThan}'`);
  return withRuntime(opts, io, async (rt) => {
    const cutoff = Date.now() - days * 86_400_000;
    const pruned: string[] = [];
    for (const e of loadWiki(join(rt.config.home, "wiki"), warnTo(io))) {
      const updated = Date.parse(e.updated || e.created);
      if (e.stale || Number.isNaN(updated) || updated >= cutoff) continue;
      updateFrontMatter(e.path, { stale: true });
      pruned.push(e.id);
    }
    if (opts.json) io.stdout(`${JSON.stringify({ pruned })}\n`);
    else io.stdout(pruned.length ? `marked stale: ${pruned.join(", ")}\n` : "nothing older than that\n");
    return 0;
  });
}
