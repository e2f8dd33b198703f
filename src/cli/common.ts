import { createDissent, type Dissent } from "../dissent.js";
import { UsageError } from "../errors.js";
import type { Config } from "../contracts/config.js";
import { routeSpecs } from "../models/router.js";
import type { ObservedCall } from "../models/types.js";
import { CLEAR_LINE, jsonLine, terminalSafe } from "../terminal.js";
import { fail, type Io } from "./io.js";

/** Flags every command takes. */
export interface Common {
  json?: boolean;
  config?: string;
  verbose?: boolean;
}

/** A live status line on a TTY (fitted to the terminal's width); lines printed meanwhile clear it first. */
export class StatusLine {
  private shown = false;
  constructor(private readonly io: Io) {}
  get live(): boolean {
    return this.io.stderrIsTTY;
  }
  set(text: string): void {
    if (!this.live) return;
    const width = Math.max(20, this.io.columns - 1);
    const line = terminalSafe(text);
    this.io.stderr(`${CLEAR_LINE}${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
    this.shown = true;
  }
  clear(): void {
    if (this.shown) this.io.stderr(CLEAR_LINE);
    this.shown = false;
  }
  /** Prints a whole line on stderr (a warning, a finished stage) without garbling the status line. */
  print(line: string): void {
    this.clear();
    this.io.stderr(`${line}\n`);
  }
}

/** One line per model call, for --verbose. */
export function callLine(c: ObservedCall): string {
  const ms = Math.round(c.endedAt - c.startedAt);
  const where = c.stage ? ` ${c.stage}#${c.round ?? 0}` : "";
  const what = c.error ? `error: ${c.error.message}` : c.parseError ? `unusable reply: ${c.parseError}` : `in ${c.inputTokens} / out ${c.outputTokens} tokens`;
  return `dissent: call ${c.role.padEnd(10)}${where} ${c.target.provider}:${c.target.model} (${c.target.route})  ${c.cached ? "cached" : c.target.local ? "local" : "network"}  ${ms} ms  ${what}`;
}

/**
 * Builds the library's wiring for one command, points the process's sinks at its redactor, runs
 * `fn`, reports errors in the one-line format, and closes the store.
 */
export async function withDissent(
  opts: Common,
  io: Io,
  fn: (d: Dissent, status: StatusLine) => Promise<number>,
  o: { readOnly?: boolean } = {},
): Promise<number> {
  const status = new StatusLine(io);
  let d: Dissent | undefined;
  try {
    d = createDissent({
      ...(opts.config ? { config: opts.config } : {}),
      env: io.env,
      cwd: io.cwd,
      signal: io.signal,
      onWarning: (m) => status.print(`dissent: warning: ${terminalSafe(m.split("\n")[0] ?? "")}`),
      ...(opts.verbose ? { onCall: (c: ObservedCall) => status.print(callLine(c)) } : {}),
      ...(o.readOnly ? { readOnly: true } : {}),
    });
    io.redact = d.redact; // from here on every write to stdout and stderr is redacted (docs/errors.md)
    return await fn(d, status);
  } catch (e) {
    status.clear();
    return fail(e, io, Boolean(opts.verbose));
  } finally {
    status.clear();
    await d?.close().catch(() => undefined);
  }
}

/**
 * What the calls of these roles are, said in a summary: `local` when every route is the in-process
 * engine, `network` when none is, `model` when they mix (issue 32: in-process calls were "network").
 */
export function callKind(config: Pick<Config, "routes" | "providers">, roles: readonly string[]): "local" | "network" | "model" {
  const types = new Set(
    roles.flatMap((r) => {
      try {
        return routeSpecs(config as Config, r).map((s) => config.providers[s.provider]?.type === "llama-cpp");
      } catch {
        return []; // a role with no route is not called
      }
    }),
  );
  if (types.size !== 1) return types.size === 0 ? "network" : "model";
  return types.has(true) ? "local" : "network";
}

/** "12 local calls", "1 network call". */
export const callsText = (n: number, kind: "local" | "network" | "model") => `${n} ${kind} call${n === 1 ? "" : "s"}`;

/** `--json` output: one line of JSON with every control character escaped as JSON escapes it (src/terminal.ts jsonLine). */
export const json = (io: Io, value: unknown) => io.stdout(`${jsonLine(value)}\n`);

/** `--older-than DAYS` (`cache clear`, `wiki prune`): a number of days, read strictly. */
export function olderThanDays(text: string): number {
  const days = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || days > 100_000) throw new UsageError(`--older-than must be a number of days, not '${text}'`);
  return days;
}
