import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load.js";
import { UsageError } from "../errors.js";
import { json, withDissent, type Common } from "./common.js";
import { exitCodeOf } from "./exit-codes.js";
import type { Io } from "./io.js";

/** `dissent serve [--port 5555] [--host 127.0.0.1]`: the live dashboard and its JSON API (docs/serve.md). */
export async function serveCommand(opts: Common & { port: string; host: string }, io: Io): Promise<number> {
  if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65_535)
    throw new UsageError(`--port must be a port number (0 to 65535; 0 picks a free one), not '${opts.port}'`);
  const host = opts.host.trim();
  if (!/^[A-Za-z0-9.:[\]%-]{1,255}$/.test(host)) throw new UsageError(`--host must be an address or a host name, not '${opts.host}'`);
  const { serveToken } = await import("../serve/auth.js");
  const token = serveToken(host, io.env); // refuses a non-loopback address without DISSENT_SERVE_TOKEN (exit 2)
  // Read-only where the store exists; a home with no store yet gets one, so what is committed later shows.
  const config = loadConfig({ ...(opts.config ? { flag: opts.config } : {}), env: io.env, cwd: io.cwd });
  const readOnly = config.store.type !== "sqlite" || existsSync(join(config.home, "dissent.db"));
  return withDissent(
    opts,
    io,
    async (d, status) => {
      if (token !== undefined) d.redact.add(token);
      const { startServer } = await import("../serve/server.js");
      const server = await startServer({
        store: await d.store(),
        tracker: await d.tracker(),
        redact: d.redact,
        host,
        port: Number(opts.port),
        ...(token !== undefined ? { token } : {}),
        bufferBytes: d.config.serve.clientBufferBytes,
        maxClients: d.config.serve.maxClients,
        estimateAt: d.config.serve.estimateAt,
        warn: (m) => status.print(`dissent: warning: ${m}`),
      });
      if (opts.json) json(io, { url: server.url, host, port: server.port, token_required: token !== undefined });
      else io.stdout(`dissent serve: ${server.url}${token !== undefined ? " (every request needs Authorization: Bearer $DISSENT_SERVE_TOKEN)" : ""}\n`);
      // Serve until Ctrl-C or SIGTERM: then close every stream and exit 130 / 143 (docs/errors.md).
      await new Promise<void>((resolve) => (io.signal.aborted ? resolve() : io.signal.addEventListener("abort", () => resolve(), { once: true })));
      await server.close();
      return exitCodeOf(io.signal.reason);
    },
    { readOnly },
  );
}
