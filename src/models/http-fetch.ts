import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { promisify } from "node:util";
import { brotliDecompress, constants, gunzip, inflate, type ZlibOptions } from "node:zlib";
import { cappedFetch, ReplyTooLarge } from "./reply-cap.js";

/** One keep-alive agent per scheme for every provider of the process (idle sockets never hold the process open). */
let agents: { http: HttpAgent; https: HttpsAgent } | undefined;
const agentFor = (secure: boolean) => {
  agents ??= { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  return secure ? agents.https : agents.http;
};

/** Statuses whose response has no body (fetch's "null body status"): a Response refuses one. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** Statuses fetch follows (with a Location): the hop after one goes through fetch itself. */
const REDIRECT = new Set([301, 302, 303, 307, 308]);

/** The content codings fetch decodes, each bounded by `maxOutputLength` in `decode`. */
const inflaters: Record<string, (buf: Buffer, opts: ZlibOptions) => Promise<Buffer>> = {
  gzip: promisify(gunzip),
  "x-gzip": promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress) as (buf: Buffer, opts: ZlibOptions) => Promise<Buffer>,
};
// As fetch does (and cURL): a body cut just short of its trailer still yields what arrived.
const ZLIB_FLUSH: ZlibOptions = { flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH };
const BROTLI_FLUSH: ZlibOptions = { flush: constants.BROTLI_OPERATION_FLUSH, finishFlush: constants.BROTLI_OPERATION_FLUSH };

/** `body` decoded through each content coding in turn (last applied first), none growing past `limit` bytes. */
async function decode(body: Buffer, encoding: string | undefined, limit: number): Promise<Buffer> {
  const codings = (encoding ?? "")
    .toLowerCase()
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c && c !== "identity");
  let out = body;
  if (out.length === 0) return out; // nothing to inflate (a 204, a HEAD): zlib would call it truncated
  for (const coding of codings.reverse()) {
    const inflater = inflaters[coding];
    if (!inflater) return out; // a coding fetch does not know either: handed on as it came
    try {
      out = await inflater(out, { ...(coding === "br" ? BROTLI_FLUSH : ZLIB_FLUSH), maxOutputLength: limit });
    } catch (e) {
      // zlib stops at maxOutputLength: that is the reply passing the cap as it inflates, never read further.
      if ((e as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE") throw new ReplyTooLarge(limit);
      throw e;
    }
  }
  return out;
}

/** Request headers as one plain record (the SDK passes a record; a Headers or pair list is accepted too). */
function headerRecord(init: RequestInit["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!init) return out;
  const pairs = init instanceof Headers || Array.isArray(init) ? init : Object.entries(init);
  for (const [k, v] of pairs) if (v !== undefined) out[k.toLowerCase()] = typeof v === "string" ? v : v.join(", ");
  return out;
}

/** A response's headers as `Headers`, from the raw name/value list (a repeated header appended in order, as sent). */
function responseHeaders(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

/** What a body this transport sends may be; anything else (a stream, a form) goes the fetch way. */
const plainBody = (body: unknown): body is string | Uint8Array | undefined => body === undefined || typeof body === "string" || body instanceof Uint8Array;

/** Does the request ask for a streamed reply (the SDK's `stream: true`)? The caller then reads it as it comes. */
const wantsStream = (body: unknown): boolean => typeof body === "string" && /"stream"\s*:\s*true/.test(body);

/** A network failure as fetch reports one, so the SDK and `classify` read it the same way: a TypeError with the cause. */
const fetchFailed = (cause: unknown) => new TypeError("fetch failed", { cause });

/** One exchange's outcome: the whole (raw, still encoded) body, or where a redirect points. */
type Exchange = { res: IncomingMessage; body: Buffer } | { res: IncomingMessage; redirect: string };

/**
 * One request over the keep-alive agent, its reply read whole and counted against `limit` as it
 * arrives: a declared length over `limit` fails before a byte is read, an undeclared one at the byte
 * that passes it, and either way the connection is destroyed (never read further, never reused).
 * The caller's signal ends it at any point with the signal's reason, as fetch does.
 */
function exchange(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  limit: number,
  signal: AbortSignal | undefined,
) {
  return new Promise<Exchange>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const secure = url.protocol === "https:";
    const req = (secure ? httpsRequest : httpRequest)(url, { method, headers, agent: agentFor(secure) });
    let settled = false;
    const settle = (e: unknown, value?: Exchange) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      if (value) return resolve(value);
      req.destroy(); // a failed or abandoned exchange's socket is never handed to the next request
      reject(e);
    };
    const onAbort = () => settle(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (e) => settle(fetchFailed(e)));
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      if (REDIRECT.has(status) && res.headers.location !== undefined) {
        res.resume(); // not wanted; read off so the socket can serve the next request
        return settle(undefined, { res, redirect: res.headers.location });
      }
      const length = res.headers["content-length"];
      if (length !== undefined && Number(length) > limit) return settle(new ReplyTooLarge(limit));
      const chunks: Buffer[] = [];
      let seen = 0;
      res.on("data", (chunk: Buffer) => {
        seen += chunk.byteLength;
        if (seen > limit) settle(new ReplyTooLarge(limit));
        else chunks.push(chunk);
      });
      // A connection cut mid-body: `error` ("aborted", ECONNRESET) and/or `close` before the end.
      res.on("error", (e) => settle(fetchFailed(e)));
      res.on("close", () => {
        if (!res.complete) settle(fetchFailed(Object.assign(new Error("other side closed"), { code: "ECONNRESET" })));
      });
      res.on("end", () => settle(undefined, { res, body: Buffer.concat(chunks, seen) }));
    });
    req.end(body);
  });
}

/**
 * The model calls' transport (docs/limits.md "max_reply_bytes"): a `fetch` on `node:http`/`node:https`
 * with one keep-alive agent per scheme, without web streams, that reads the reply whole — counted
 * against `limit` as it arrives (a declared length over it fails before a byte is read; a compressed
 * body is inflated no further than `limit`) — and returns a standard Response built from those bytes.
 * A streamed request, a body that is not a string or bytes, a Request object and the hop after a
 * redirect go through Node's fetch with the same cap (`cappedFetch`), which streams and follows redirects.
 */
export function httpFetch(limit: number): typeof fetch {
  const viaFetch = cappedFetch(limit);
  return async (input, init) => {
    const body = init?.body ?? undefined;
    if (input instanceof Request || !plainBody(body) || wantsStream(body)) return viaFetch(input, init);
    const url = new URL(String(input));
    const headers = headerRecord(init?.headers);
    // fetch asks for compressed replies unless told otherwise; so does this transport (real providers gzip).
    headers["accept-encoding"] ??= url.protocol === "https:" ? "br, gzip, deflate" : "gzip, deflate";
    if (body !== undefined) headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
    const method = (init?.method ?? "GET").toUpperCase();
    const got = await exchange(url, method, headers, body, limit, init?.signal ?? undefined);
    const status = got.res.statusCode ?? 0;
    if ("redirect" in got) {
      const toGet = status === 303 || ((status === 301 || status === 302) && method === "POST"); // fetch's rule for the method
      return viaFetch(new URL(got.redirect, url), toGet ? { ...init, method: "GET", body: null } : init);
    }
    let bytes: Buffer;
    try {
      bytes = await decode(got.body, got.res.headers["content-encoding"], limit);
    } catch (e) {
      if (e instanceof ReplyTooLarge) throw e;
      throw fetchFailed(e); // a body that does not decode: as fetch, a failed read of the reply
    }
    const empty = NULL_BODY.has(status) || method === "HEAD";
    return new Response(empty ? null : bytes, { status, statusText: got.res.statusMessage ?? "", headers: responseHeaders(got.res.rawHeaders) });
  };
}
