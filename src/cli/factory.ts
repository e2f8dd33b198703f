import { createDissent, type Dissent } from "../dissent.js";
import { Interrupted, messageOf } from "../errors.js";
import { runFactory } from "../factory/factory.js";
import { lineWriter } from "../factory/lines.js";
import { localQueue } from "../factory/local-queue.js";
import { pgBossQueue } from "../factory/pg-queue.js";
import type { WorkQueue } from "../factory/queue.js";
import { warmUp } from "../factory/warm.js";
import { factorySettings } from "../factory/settings.js";
import type { ObservedCall } from "../models/types.js";
import { requireKeys, requirePrices } from "../models/router.js";
import { IMPLEMENT_ROLES } from "../implement/roles.js";
import { PIPELINE_ROLES } from "../pipeline/stages.js";
import { isPostgresStore } from "../store/postgres.js";
import { callLine, StatusLine, type Common } from "./common.js";
import { exitCodeOf } from "./exit-codes.js";
import { terminalSafe } from "../terminal.js";
import { fail, type Io } from "./io.js";

/**
 * `dissent factory [--once] [--concurrency N] [--json]` (docs/factory.md): the wiring, then the loop of
 * src/factory. Exit: 0 (`--once`: every round planned), 1 (`--once`: a round failed; or an auth
 * error, or a store it cannot use), 2 (configuration), 130/143 (SIGINT/SIGTERM, after the running
 * rounds cleared their labels and saved their state).
 */
export async function factoryCommand(opts: Common & { once?: boolean; concurrency?: string }, io: Io): Promise<number> {
  const status = new StatusLine(io);
  const verbose = Boolean(opts.verbose);
  // Aborts every round's model calls: on SIGINT/SIGTERM, and when the factory stops of its own accord.
  const stopping = new AbortController();
  const signal = AbortSignal.any([io.signal, stopping.signal]);
  // The queue's database going away stops the factory: one line, exit 1 (the round resumes on restart). Every
  // warning after it (a label the rounds could not clear, say) is a consequence that line already names.
  const lost = new AbortController();
  const warn = (m: string) => {
    if (!lost.signal.aborted) status.print(`dissent: warning: ${terminalSafe(m.split("\n")[0] ?? "")}`);
  };
  let d: Dissent | undefined;
  let queue: WorkQueue | undefined;
  try {
    d = createDissent({
      ...(opts.config ? { config: opts.config } : {}),
      env: io.env,
      cwd: io.cwd,
      signal,
      onWarning: warn,
      ...(verbose ? { onCall: (c: ObservedCall) => status.print(callLine(c)) } : {}),
    });
    io.redact = d.redact; // every write to stdout and stderr is redacted from here on (docs/errors.md)
    const settings = factorySettings(d.config, opts, io.env);
    // A missing key or price is a configuration error now, not at the first issue.
    const roles = settings.implement ? [...PIPELINE_ROLES, ...IMPLEMENT_ROLES] : PIPELINE_ROLES;
    requireKeys(d.config, io.env, roles);
    await requirePrices(d.config, roles);
    const store = await d.store();
    const tracker = await d.tracker();
    queue = isPostgresStore(store)
      ? await pgBossQueue({
          store,
          concurrency: settings.concurrency,
          silenceMs: settings.leaseTtlMs,
          heartbeatMs: settings.leaseRenewMs,
          onError: (e) => warn(`the queue: ${messageOf(e)}`),
          onLost: (e) => lost.abort(e),
        })
      : localQueue(store);
    const line = lineWriter((t) => io.stdout(t), Boolean(opts.json));
    // The GitHub tracker's comment commands are read by every poll too (docs/github-action.md).
    const dissent = d;
    const commands =
      tracker.kind === "github"
        ? (await import("../github/poll-comments.js")).commentPoller(dissent, {
            told: (o) => line({ event: "command", issue: o.issue, comment: o.comment_id, command: o.command, status: o.status, detail: o.detail }),
          })
        : undefined;
    const result = await runFactory({
      planner: d,
      store,
      tracker,
      queue,
      settings,
      line,
      warn,
      signal: io.signal,
      ...(commands ? { commands } : {}),
      warm: () => warmUp(dissent.config, io.env, roles, Boolean(settings.implement)),
      interrupt: (e) => stopping.abort(new Interrupted(`the factory is stopping: ${messageOf(e)}`)),
      lost: lost.signal,
    });
    if (result.abandoned)
      warn(`${result.abandoned} round(s) had not finished clearing up when the factory stopped; their leases expire and the next factory resumes them`);
    if (result.fatal !== undefined) return fail(result.fatal, io, verbose);
    // A requested stop (SIGINT/SIGTERM) is the factory's normal end, not an error line (docs/factory.md).
    if (io.signal.aborted) return exitCodeOf(io.signal.reason);
    if (!settings.once) return 0;
    return result.failed || result.gaveUp ? 1 : 0;
  } catch (e) {
    if (io.signal.aborted && Interrupted.isInstance(e)) return exitCodeOf(e); // stopped while starting: still a requested stop
    return fail(e, io, verbose);
  } finally {
    status.clear();
    await queue?.close().catch(() => undefined); // the store's close below reports nothing either: the run's outcome is decided
    await d?.close().catch(() => undefined);
  }
}
