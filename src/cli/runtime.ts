import type { Config } from "../contracts/config.js";
import { loadConfig, OLLAMA_HINT } from "../config/load.js";
import type { ReplyCache } from "../models/cache.js";
import { configRouter } from "../models/router.js";
import type { CallBudget, CallContext, Router } from "../models/types.js";
import { sqliteCache } from "../store/cache.js";
import { openDb, type Db } from "../store/db.js";
import { sqliteEventLog, type EventLog } from "../store/event-log.js";
import { stateHook } from "../store/state.js";
import type { Io } from "./io.js";

/** Everything a command needs, built once from the config and the process. */
export interface Runtime {
  config: Config;
  db: Db;
  events: EventLog;
  cache: ReplyCache;
  router: Router & { secrets(): string[] };
  /** A call context for the one model door. */
  callContext(opts: { cacheMode?: CallContext["cacheMode"]; runId?: string; issueId?: string | null; budget?: CallBudget }): CallContext;
  close(): void;
}

export function openRuntime(opts: { config?: string }, io: Io): Runtime {
  const config = loadConfig({ ...(opts.config ? { flag: opts.config } : {}), env: io.env, cwd: io.cwd });
  const db = openDb(config.home);
  const events = sqliteEventLog(db, [stateHook]);
  const cache = sqliteCache(db);
  const router = configRouter(config, io.env, config.source === "defaults" ? { unreachable: OLLAMA_HINT } : {});
  return {
    config,
    db,
    events,
    cache,
    router,
    callContext: (o) => ({
      router,
      cache,
      cacheMode: o.cacheMode ?? "use",
      seed: config.seed,
      timeoutMs: config.callTimeoutMs,
      maxRetries: 2,
      backoffMs: config.retryBackoffMs,
      signal: io.signal,
      emit: (e) => void events.append(e),
      ...(o.runId ? { runId: o.runId } : {}),
      issueId: o.issueId ?? null,
      ...(o.budget ? { budget: o.budget } : {}),
      logContent: config.logContent,
      get secrets() {
        return router.secrets();
      },
    }),
    close: () => db.close(),
  };
}
