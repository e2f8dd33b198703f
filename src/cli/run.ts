import { LIMITS } from "../config/load.js";
import { UsageError } from "../errors.js";
import { withDissent, json, type Common } from "./common.js";
import type { Io } from "./io.js";

export interface RunFlags extends Common {
  audit?: boolean;
  constraint: string[];
  policy: string[];
  cache: boolean;
  replay?: boolean;
}

/** `dissent run` (docs/run.md). */
export async function runCommand(promptArg: string | undefined, flags: RunFlags, io: Io): Promise<number> {
  if (!flags.cache && flags.replay) throw new UsageError("--no-cache and --replay cannot be used together");
  if (promptArg !== undefined && Buffer.byteLength(promptArg) > LIMITS.promptBytes)
    throw new UsageError(`the prompt is larger than ${LIMITS.promptBytes / 1024} KiB, the limit`);
  const fromStdin = promptArg === undefined ? await io.readStdin(LIMITS.promptBytes) : undefined;
  const prompt = promptArg ?? fromStdin?.replace(/\s+$/, "");
  if (!prompt || prompt.trim() === "") {
    throw new UsageError('no prompt: pass it as an argument or pipe it on stdin (dissent run "…")');
  }
  return withDissent(flags, io, async (d, status) => {
    const out = await d.run({
      prompt,
      audit: Boolean(flags.audit),
      constraints: flags.constraint,
      policies: flags.policy,
      cache: flags.replay ? "replay" : flags.cache ? "use" : "bypass",
      ...(status.live && !flags.verbose ? { progress: (step: string) => status.set(`dissent: ${step}…`) } : {}),
    });
    status.clear();
    if (flags.json) json(io, out);
    else io.stdout(`${out.final_output}\n`);
    return 0;
  });
}
