import type { Config } from "../contracts/config.js";
import { ConfigError } from "../errors.js";
import type { Store } from "./port.js";

/** What opening a store needs besides the config. */
export interface OpenStoreOptions {
  env: Record<string, string | undefined>;
  redact?: (text: string) => string;
  /** A read-only command: works on a read-only home (docs/errors.md; issue #9 defect 18). */
  readOnly?: boolean;
  /** Stops opening a store that does not answer (Ctrl-C, SIGTERM: docs/errors.md "Signals"). */
  signal?: AbortSignal;
}

/** Opens the store the config names: the embedded SQLite file under the home, or PostgreSQL (docs/factory.md). */
export async function openStore(config: Config, opts: OpenStoreOptions): Promise<Store> {
  if (config.store.type === "sqlite") {
    const { openSqliteStore } = await import("./sqlite.js");
    return openSqliteStore(config.home, { ...(opts.redact ? { redact: opts.redact } : {}), ...(opts.readOnly ? { readOnly: true } : {}) });
  }
  const url = opts.env[config.store.url_env];
  if (!url)
    throw new ConfigError(`${config.source}: store postgres needs a connection URL in the environment variable ${config.store.url_env}, which is not set`);
  const { openPostgresStore } = await import("./postgres.js");
  return openPostgresStore(url, {
    ...(opts.redact ? { redact: opts.redact } : {}),
    home: config.home,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(config.store.statement_timeout_ms !== undefined ? { statementTimeoutMs: config.store.statement_timeout_ms } : {}),
  });
}
