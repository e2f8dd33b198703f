import { json, olderThanDays, withDissent, type Common } from "./common.js";
import type { Io } from "./io.js";

/** `dissent cache clear [--older-than DAYS]` (docs/run.md): says how many replies it removed. */
export async function cacheClear(opts: Common & { olderThan?: string }, io: Io): Promise<number> {
  const days = opts.olderThan === undefined ? undefined : olderThanDays(opts.olderThan);
  return withDissent(opts, io, async (d) => {
    const removed = await (await d.store()).cache.clear(days);
    if (opts.json) json(io, { removed });
    else
      io.stdout(`removed ${removed} cached repl${removed === 1 ? "y" : "ies"}${days !== undefined ? ` older than ${days} day${days === 1 ? "" : "s"}` : ""}\n`);
    return 0;
  });
}
