import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { MiddlewareHandler } from "hono";
import { UsageError } from "../errors.js";

/** The environment variable holding the dashboard's bearer token (docs/serve.md). */
export const TOKEN_ENV = "DISSENT_SERVE_TOKEN";

/** True for an address only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped !== null && (mapped[1] ?? "").startsWith("127.");
}

/**
 * The token every request must carry, or undefined when none is needed. Binding anything but
 * loopback without DISSENT_SERVE_TOKEN is refused (docs/serve.md); once set, the token is required
 * on every address, loopback included.
 */
export function serveToken(
  host: string,
  env: Record<string, string | undefined>,
  /** `dissent mcp --http` names its own variable and flag (docs/mcp.md). */
  o: { tokenEnv?: string; flag?: string } = {},
): string | undefined {
  const name = o.tokenEnv ?? TOKEN_ENV;
  const token = env[name];
  if (token !== undefined && token.trim() === "")
    throw new UsageError(`${name} is set but empty: give it a secret, or unset it to serve on loopback without one`);
  if (token === undefined && !isLoopback(host)) {
    throw new UsageError(
      `${o.flag ?? "--host"} ${host} is not a loopback address: set ${name} to a secret first (every request must then carry Authorization: Bearer <token>)`,
    );
  }
  return token;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Compares in constant time (hashes first, so lengths leak nothing either). */
export function tokenMatches(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** The bearer token of an Authorization header, if it has one. */
export function bearerOf(header: string | undefined): string | undefined {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? "");
  return m?.[1];
}

/**
 * Rejects a request without the token with 401. `/` still answers 401, with the page's
 * shell as its body: it holds no data, only the form that asks for the token (a browser cannot
 * send a header when it opens a URL); everything else gets a JSON error.
 */
export function requireBearer(token: string, shell: () => string | undefined): MiddlewareHandler {
  return async (c, next) => {
    const given = bearerOf(c.req.header("authorization"));
    if (given !== undefined && tokenMatches(given, token)) return next();
    c.header("WWW-Authenticate", 'Bearer realm="dissent"');
    const page = c.req.path === "/" ? shell() : undefined;
    if (page !== undefined) return c.html(page, 401);
    return c.json({ error: given === undefined ? "this dashboard needs a token: send Authorization: Bearer <DISSENT_SERVE_TOKEN>" : "wrong token" }, 401);
  };
}

/**
 * On a loopback address without a token, answers only requests addressed to this machine by name
 * (Host: 127.0.0.1, localhost, [::1]): a web page elsewhere cannot rebind its DNS name onto the
 * dashboard and read it.
 */
export function loopbackHostsOnly(): MiddlewareHandler {
  return async (c, next) => {
    const host = (c.req.header("host") ?? "").toLowerCase();
    const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "");
    if (isLoopback(name)) return next();
    return c.json({ error: `requests must address this machine as localhost or 127.0.0.1, not '${name}'` }, 421);
  };
}
