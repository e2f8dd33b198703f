import { randomUUID } from "node:crypto";
import type { CallRecord, RunOutput } from "../contracts/audit.js";
import { textOrFile } from "../config/load.js";
import { UsageError } from "../errors.js";
import { auditGate } from "../gate/audit-gate.js";
import { callModel } from "../models/call.js";
import { fail, type Io } from "./io.js";
import { openRuntime } from "./runtime.js";

export interface RunFlags {
  audit?: boolean;
  json?: boolean;
  config?: string;
  constraint: string[];
  policy: string[];
  cache: boolean;
  replay?: boolean;
  verbose?: boolean;
}

function callLine(c: CallRecord): string {
  return `dissent: call ${c.role.padEnd(10)} ${c.provider}:${c.model} (${c.route})  ${c.cached ? "cached" : "network"}  ${c.latency_ms.toFixed(0)} ms  in ${c.input_tokens} / out ${c.output_tokens} tokens\n`;
}

/** `dissent run` (CONTRACT §3). */
export async function runCommand(promptArg: string | undefined, flags: RunFlags, io: Io): Promise<number> {
  if (!flags.cache && flags.replay) throw new UsageError("--no-cache and --replay cannot be used together");
  const fromStdin = promptArg === undefined ? await io.readStdin() : undefined;
  const prompt = promptArg ?? fromStdin?.replace(/\s+$/, "");
  if (!prompt || prompt.trim() === "") {
    throw new UsageError("no prompt: pass it as an argument or pipe it on stdin (dissent run \"…\")");
  }
  const rt = openRuntime({ ...(flags.config ? { config: flags.config } : {}) }, io);
  try {
    const runId = randomUUID();
    const ctx = rt.callContext({ runId, cacheMode: flags.replay ? "replay" : flags.cache ? "use" : "bypass" });
    const progress = io.stderrIsTTY && !flags.verbose;
    const result = await auditGate(
      {
        prompt,
        constraints: [...rt.config.constraints, ...flags.constraint],
        policies: [...rt.config.policies, ...flags.policy.map((p) => textOrFile(p, io.cwd))],
        audit: Boolean(flags.audit),
      },
      {
        call: (meta, request) => callModel(meta, request, ctx),
        warn: (m) => io.stderr(`${progress ? "\r\x1b[2K" : ""}dissent: warning: ${m.split("\n")[0]}\n`),
        ...(progress ? { progress: (step: string) => io.stderr(`\r\x1b[2Kdissent: ${step}…`) } : {}),
      },
    );
    if (progress) io.stderr("\r\x1b[2K");
    if (flags.verbose) for (const c of result.calls) io.stderr(callLine(c));
    if (flags.json) {
      const m = result.audit_meta;
      const out: RunOutput = {
        final_output: result.final_output,
        audit_meta: {
          audit_used: m.audit_used,
          audit_verdict: m.audit_verdict,
          revised: m.revised,
          audit_passes: m.audit_passes,
          revision_passes: m.revision_passes,
          challenger_status: m.challenger_status,
          ...(m.challenger_error !== undefined ? { challenger_error: m.challenger_error } : {}),
          concerns: m.concerns,
          ungrounded_concerns: m.ungrounded_concerns,
        },
        run: { run_id: runId, calls: result.calls },
      };
      io.stdout(`${JSON.stringify(out)}\n`);
    } else {
      io.stdout(`${result.final_output}\n`);
    }
    return 0;
  } catch (e) {
    if (io.stderrIsTTY) io.stderr("\r\x1b[2K");
    return fail(e, io, Boolean(flags.verbose), rt.router.secrets());
  } finally {
    rt.close();
  }
}
