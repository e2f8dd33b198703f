import { STATUS_CODES } from "node:http";
import { promisify } from "node:util";
import { brotliDecompress, constants, gunzip, inflate, type ZlibOptions } from "node:zlib";
import type { Agent } from "undici";
import { cappedFetch, ReplyTooLarge } from "./reply-cap.js";

type Undici = typeof import("undici");

/** The undici package and one keep-alive Agent for every provider of the process, once loaded. */
let client: { request: Undici["request"]; agent: Agent } | undefined;
let loading: Promise<unknown> | undefined;

/**
 * Loads the transport's HTTP client (before any call's clock starts: providers are built in `prepare`).
 * Imported on first use, not with the module: a command that calls no model never loads it.
 */
export function loadHttpClient(): Promise<unknown> {
  loading ??= import("undici").then(({ request, Agent }) => {
    client = { request, agent: new Agent() };
  });
  return loading;
}

/** Statuses whose response has no body (fetch's "null body status"): a Response refuses one. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);

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

/** A response's headers as `Headers` (repeated ones, as undici gives them in a list, appended in order). */
function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (Array.isArray(v)) for (const one of v) headers.append(k, one);
    else if (v !== undefined) headers.append(k, v);
  }
  return headers;
}

/** What a body this transport sends may be; anything else (a stream, a form) goes the fetch way. */
const plainBody = (body: unknown): body is string | Uint8Array | undefined | null =>
  body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;

/** Does the request ask for a streamed reply (the SDK's `stream: true`)? The caller then reads it as it comes. */
const wantsStream = (body: unknown): boolean => typeof body === "string" && /"stream"\s*:\s*true/.test(body);

/** A body not read: destroyed, its connection closed; the abort error that destroying raises is the one expected. */
function drop(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.once("error", () => undefined);
  body.destroy();
}

/** A network failure as fetch reports one, so the SDK and `classify` read it the same way: a TypeError with the cause. */
const fetchFailed = (cause: unknown) => new TypeError("fetch failed", { cause });

/**
 * The model calls' transport (docs/limits.md "max_reply_bytes"): a `fetch` on undici's `request()`
 * over one keep-alive Agent, without web streams, that reads the reply whole — counted against
 * `limit` as it arrives (a declared length over it fails before a byte is read; a compressed body is
 * inflated no further than `limit`) — and returns a standard Response built from those bytes.
 * A streamed request, a body that is not a string or bytes, a Request object and a redirect go
 * through Node's fetch with the same cap (`cappedFetch`), which streams and follows redirects.
 */
export function httpFetch(limit: number): typeof fetch {
  const viaFetch = cappedFetch(limit);
  return async (input, init) => {
    const body = init?.body;
    if (!client || input instanceof Request || !plainBody(body) || wantsStream(body)) return viaFetch(input, init);
    const headers = headerRecord(init?.headers);
    // fetch asks for compressed replies unless told otherwise; so does this transport (real providers gzip).
    headers["accept-encoding"] ??= String(input).startsWith("https:") ? "br, gzip, deflate" : "gzip, deflate";
    const method = (init?.method ?? "GET").toUpperCase();
    let res: Awaited<ReturnType<Undici["request"]>>;
    try {
      res = await client.request(input, {
        dispatcher: client.agent,
        method: method as "GET",
        headers,
        body: body ?? null,
        ...(init?.signal ? { signal: init.signal } : {}),
      });
    } catch (e) {
      throw init?.signal?.aborted ? e : fetchFailed(e);
    }
    const { statusCode: status, headers: raw } = res;
    if (REDIRECT.has(status) && raw.location !== undefined) {
      drop(res.body); // not wanted: fetch follows the redirect from here on, as before this transport
      const toGet = status === 303 || ((status === 301 || status === 302) && method === "POST"); // fetch's rule for the method
      const next = new URL(String(raw.location), String(input));
      return viaFetch(next, toGet ? { ...init, method: "GET", body: null } : init);
    }
    const declared = raw["content-length"] === undefined ? Number.NaN : Number(raw["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      drop(res.body); // nothing of it is wanted: the connection closes
      throw new ReplyTooLarge(limit);
    }
    const chunks: Buffer[] = [];
    let seen = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        seen += chunk.byteLength;
        if (seen > limit) throw new ReplyTooLarge(limit); // leaving the loop destroys the body: the connection closes
        chunks.push(chunk);
      }
    } catch (e) {
      if (e instanceof ReplyTooLarge || init?.signal?.aborted) throw e;
      throw fetchFailed(e); // a connection cut mid-body: retried like any unreachable provider
    }
    const encoding = raw["content-encoding"];
    let bytes: Buffer;
    try {
      bytes = await decode(Buffer.concat(chunks, seen), Array.isArray(encoding) ? encoding.join(",") : encoding, limit);
    } catch (e) {
      if (e instanceof ReplyTooLarge) throw e;
      throw fetchFailed(e); // a body that does not decode: as fetch, a failed read of the reply
    }
    const out = responseHeaders(raw);
    const empty = NULL_BODY.has(status) || method === "HEAD";
    return new Response(empty ? null : bytes, { status, statusText: STATUS_CODES[status] ?? "", headers: out });
  };
}
