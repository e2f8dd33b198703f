import { formatLimit } from "../files/format-limit.js";

/** The default `max_reply_bytes` (docs/limits.md): far above any real answer, far below a runaway one. */
export const DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024;

/** The name a reply cut at the cap carries, for `classify` to find in any cause chain. */
export const REPLY_TOO_LARGE = "DissentReplyTooLarge";

/** A reply (body bytes as they arrive, streamed or not) that passed `max_reply_bytes`: it is not read further. */
export class ReplyTooLarge extends Error {
  override readonly name = REPLY_TOO_LARGE;
  constructor(
    readonly limit: number,
    setting = "max_reply_bytes",
    what = "the reply",
  ) {
    super(`${what} is larger than ${formatLimit(limit)} (${setting})`);
  }
}

/** Is `e`, or anything in its cause chain, a reply cut at the cap? */
export function replyTooLarge(e: unknown, depth = 0): ReplyTooLarge | undefined {
  if (!e || typeof e !== "object" || depth > 8) return undefined;
  if ((e as { name?: unknown }).name === REPLY_TOO_LARGE) return e as ReplyTooLarge;
  return replyTooLarge((e as { cause?: unknown }).cause, depth + 1);
}

/**
 * A fetch whose response bodies (answers and error pages alike) are counted as they arrive: past
 * `limit` bytes the body errors with ReplyTooLarge and the connection is cancelled, so a 200 MB reply
 * costs at most `limit` bytes of memory — never read whole, printed or cached.
 */
export function cappedFetch(limit: number, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => capResponse(await base(input, init), limit);
}

/** The response with its body counted against `limit` (a Content-Length beyond it fails before a byte is read). */
export async function capResponse(res: Response, limit: number): Promise<Response> {
  const length = res.headers.get("content-length");
  const declared = length === null ? Number.NaN : Number(length);
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => undefined); // nothing of it is wanted
    throw new ReplyTooLarge(limit);
  }
  if (!res.body) return res;
  // A body of declared length that arrives as sent is bounded by that length already (HTTP framing ends it there):
  // it is handed on untouched, without a second stream per reply. A compressed one can inflate past it: counted.
  const encoding = res.headers.get("content-encoding");
  if (Number.isFinite(declared) && (!encoding || encoding === "identity")) return res;
  let seen = 0;
  const counted = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit)
          controller.error(new ReplyTooLarge(limit)); // the source is cancelled: the socket closes
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
}
