import type { AuditMeta } from "../contracts/audit.js";
import { nearestKey } from "../config/key-suggest.js";
import { LIMITS } from "../config/load.js";
import { UsageError } from "../errors.js";
import { withDissent, json, type Common } from "./common.js";
import type { Io } from "./io.js";

export interface RunFlags extends Common {
  audit?: boolean;
  /** `--fail-on` values as given: each a condition or a comma list of them (repeatable). */
  failOn?: string[];
  constraint: string[];
  policy: string[];
  cache: boolean;
  replay?: boolean;
}

/**
 * What `--fail-on` can fail a CI job on, and the exit code of each (docs/errors.md "Exit codes"):
 * distinct from 1 (the run itself failed) and 2 (usage), so a job can tell them apart. When several
 * hold, the highest code wins (drift comes only with a revision, so only after needs_work).
 */
export const FAIL_ON = { needs_work: 3, challenger_failed: 4, drift: 5 } as const;
export type FailOn = keyof typeof FAIL_ON;
const FAIL_ON_NAMES = Object.keys(FAIL_ON) as FailOn[];

/** `--fail-on needs_work --fail-on drift`, `--fail-on needs_work,drift`: the set of conditions, or a usage error naming the bad one. */
export function parseFailOn(values: readonly string[] | undefined): Set<FailOn> {
  const out = new Set<FailOn>();
  for (const value of values ?? []) {
    for (const raw of value.split(",")) {
      const name = raw.trim();
      if (name === "") continue;
      if (!(FAIL_ON_NAMES as string[]).includes(name)) {
        const near = nearestKey(name, FAIL_ON_NAMES);
        throw new UsageError(`--fail-on ${name}: not a condition (${FAIL_ON_NAMES.join(", ")})${near ? `; did you mean '${near}'?` : ""}`);
      }
      out.add(name as FailOn);
    }
  }
  if ((values ?? []).length > 0 && out.size === 0) throw new UsageError(`--fail-on needs a condition: ${FAIL_ON_NAMES.join(", ")}`);
  return out;
}

/** The conditions of `failOn` that hold for a run, each with the sentence that says so. */
export function failedConditions(meta: AuditMeta, failOn: ReadonlySet<FailOn>): { condition: FailOn; why: string }[] {
  const held: { condition: FailOn; why: string }[] = [];
  if (failOn.has("needs_work") && meta.audit_verdict === "needs_work")
    held.push({
      condition: "needs_work",
      why: `the challenger's verdict was needs_work (${meta.concerns} grounded concern${meta.concerns === 1 ? "" : "s"}${meta.revised ? "; the answer printed is the revision" : ""})`,
    });
  if (failOn.has("challenger_failed") && meta.challenger_status === "failed")
    held.push({ condition: "challenger_failed", why: `the challenger failed and the draft is unaudited: ${meta.challenger_error ?? "no audit"}` });
  const drift = meta.revision_drift ?? [];
  if (failOn.has("drift") && drift.length > 0)
    held.push({
      condition: "drift",
      why: `the revision added ${drift.length} fact${drift.length === 1 ? "" : "s"} found in nothing given (audit_meta.revision_drift)`,
    });
  return held;
}

/** `dissent run` (docs/run.md). */
export async function runCommand(promptArg: string | undefined, flags: RunFlags, io: Io): Promise<number> {
  if (!flags.cache && flags.replay) throw new UsageError("--no-cache and --replay cannot be used together");
  const failOn = parseFailOn(flags.failOn);
  if (failOn.size > 0 && !flags.audit) throw new UsageError("--fail-on needs --audit: without an audit there is no verdict to fail on");
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
    // The answer is printed whatever the verdict: --fail-on only sets the exit code, and says why on stderr.
    const held = failedConditions(out.audit_meta, failOn);
    if (held.length === 0) return 0;
    const code = Math.max(...held.map((h) => FAIL_ON[h.condition]));
    for (const h of held) io.stderr(`dissent: --fail-on ${h.condition}: ${h.why}\n`);
    io.stderr(`dissent: exiting ${code} (--fail-on: ${held.map((h) => `${h.condition} ${FAIL_ON[h.condition]}`).join(", ")}; docs/errors.md#exit-codes)\n`);
    return code;
  });
}
