import { DEFAULT_MCP_MAX_MESSAGE_BYTES } from "../config/load.js";
import { createDissent, type Dissent } from "../dissent.js";
import { ConfigError, messageOf, UsageError } from "../errors.js";
import { observeCall, observeWarning } from "../mcp/scope.js";
import type { ObservedCall } from "../models/types.js";
import { callLine, StatusLine, type Common } from "./common.js";
import { exitCodeOf } from "./exit-codes.js";
import { terminalSafe } from "../terminal.js";
import type { Io } from "./io.js";

/** The variable `dissent mcp --http` reads its bearer token from, unless `--token-env` names another (docs/mcp.md). */
export const MCP_TOKEN_ENV = "DISSENT_MCP_TOKEN";

/** `HOST:PORT` (`[::1]:7777` for IPv6), read strictly. */
export function hostPort(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.%]+)\]|([A-Za-z0-9.-]{1,253})):(\d{1,5})$/.exec(text.trim());
  const port = Number(m?.[3]);
  if (!m || port > 65_535) throw new UsageError(`--http must be HOST:PORT (127.0.0.1:7777; 0 picks a free port), not '${text}'`);
  return { host: m[1] ?? m[2] ?? "", port };
}

/** Resolves when the signal aborts (Ctrl-C, SIGTERM) or `also` settles. */
function until(signal: AbortSignal, also?: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
    also?.then(
      () => resolve(),
      () => resolve(),
    );
  });
}

/**
 * `dissent mcp [--http HOST:PORT] [--token-env V]` (docs/mcp.md): dissent's tools over the Model
 * Context Protocol, on stdio (nothing but protocol frames on stdout; warnings on stderr) or on
 * Streamable HTTP. Runs until the client hangs up (stdio), Ctrl-C or SIGTERM.
 */
export async function mcpCommand(opts: Common & { http?: string; tokenEnv?: string }, io: Io): Promise<number> {
  const tokenEnv = opts.tokenEnv ?? MCP_TOKEN_ENV;
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(tokenEnv)) throw new UsageError(`--token-env must name an environment variable, not '${tokenEnv}'`);
  if (opts.json) throw new UsageError("dissent mcp speaks the Model Context Protocol: --json does not apply");
  const http = opts.http !== undefined ? hostPort(opts.http) : undefined;
  let token: string | undefined;
  if (http) {
    const { serveToken } = await import("../serve/auth.js");
    token = serveToken(http.host, io.env, { tokenEnv, flag: "--http" }); // a non-loopback address needs a token, as `serve`
  }
  const streams = io.streams;
  if (!http && !streams) throw new UsageError("dissent mcp over stdio needs the process's stdin and stdout");
  const status = new StatusLine(io);
  const say = (m: string) => status.print(`dissent: warning: ${terminalSafe(m.split("\n")[0] ?? "")}`);
  // A warning raised by a tool call also reaches its client, as an MCP log message (docs/mcp.md "Warnings").
  const warn = (m: string) => {
    say(m);
    observeWarning(terminalSafe(m.split("\n")[0] ?? ""));
  };
  // A config that does not load is answered to every tool call (an agent shows that line; a server that exits at once shows nothing).
  let d: Dissent | undefined;
  let broken: unknown;
  try {
    d = createDissent({
      ...(opts.config ? { config: opts.config } : {}),
      env: io.env,
      cwd: io.cwd,
      signal: io.signal,
      onWarning: warn,
      onCall: (c: ObservedCall) => {
        if (opts.verbose) status.print(callLine(c));
        observeCall(c); // progress of the tool call that made it (plan_issue)
      },
    });
    io.redact = d.redact; // every line on stderr is redacted too (docs/errors.md)
    if (token !== undefined) d.redact.add(token);
  } catch (e) {
    if (!ConfigError.isInstance(e)) throw e;
    broken = e;
    say(messageOf(e));
  }
  const dissent = (): Dissent => {
    if (d) return d;
    throw broken;
  };
  // Tool calls still running when the server stops: a plan interrupted by SIGTERM clears its labels before the exit.
  const inflight = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>) => {
    inflight.add(work);
    void work.finally(() => inflight.delete(work));
  };
  const settled = () => Promise.allSettled([...inflight]);
  const maxMessageBytes = d?.config.mcp.maxMessageBytes ?? DEFAULT_MCP_MAX_MESSAGE_BYTES;
  try {
    const { createMcpServer } = await import("../mcp/server.js");
    if (http) {
      const { startMcpHttp } = await import("../mcp/http.js");
      const running = await startMcpHttp({
        ...http,
        ...(token !== undefined ? { token } : {}),
        serverFor: () => createMcpServer(dissent, track),
        maxBodyBytes: maxMessageBytes,
        warn: say,
      });
      // The one line on stderr: stdout stays free for scripts that read nothing.
      io.stderr(`dissent mcp: ${running.url}${token !== undefined ? ` (every request needs Authorization: Bearer $${tokenEnv})` : ""}\n`);
      await until(io.signal);
      await running.close(); // every session's calls are aborted as cancelled ones…
      await settled(); // …and stop as Ctrl-C stops a plan
      return exitCodeOf(io.signal.reason);
    }
    const [{ StdioServerTransport }, { BoundedLines, refusedLine }] = await Promise.all([
      import("@modelcontextprotocol/server/stdio"),
      import("../mcp/stdio.js"),
    ]);
    const server = createMcpServer(dissent, track);
    // An over-size message is answered with an error line and the server goes on (docs/mcp.md "stdio").
    const lines = new BoundedLines(maxMessageBytes, (r) => {
      say(`refused an MCP message of ${r.bytes} bytes: over mcp.max_message_bytes (${maxMessageBytes})`);
      streams?.stdout.write(refusedLine(r, maxMessageBytes));
    });
    streams?.stdin.pipe(lines);
    // Every line the transport sees fits its own buffer (the line, its newline, a CR).
    const transport = new StdioServerTransport(lines, streams?.stdout, { maxBufferSize: maxMessageBytes + 2 });
    const hungUp = new Promise<void>((resolve) => {
      streams?.stdin.once("end", resolve);
      streams?.stdin.once("close", resolve);
      transport.onclose = resolve;
    });
    await server.connect(transport);
    await until(io.signal, hungUp);
    await server.close(); // a client that hung up cancelled what it asked: the calls abort…
    await settled(); // …and stop as Ctrl-C stops a plan
    return io.signal.aborted ? exitCodeOf(io.signal.reason) : 0;
  } finally {
    await d?.close().catch(() => undefined);
  }
}
