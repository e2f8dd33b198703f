import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { formatLimit } from "./format-limit.js";

/**
 * Why a file was not read: it is not there, it is not a regular file (a folder, a FIFO, a device, a
 * socket), it is larger than the limit, or the system refused (permissions, an I/O error).
 */
export type ReadRefusal = "missing" | "not_a_file" | "too_large" | "unreadable";

/** A bounded read's outcome: the text, or why there is none as a phrase ("is a FIFO, not a regular file"). */
export type BoundedRead = { ok: true; text: string } | { ok: false; refusal: ReadRefusal; reason: string };

/** What a special file is, for the refusal. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSocket()) return "a socket";
  return "not a plain file";
}

/** Bytes read at a time. */
const CHUNK = 64 * 1024;

/** The open flags of a read that never blocks: a FIFO opened without O_NONBLOCK waits for a writer forever. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The one reader of every file dissent reads (config, policies, body files, eval sets and reports,
 * wiki entries, model headers): a regular file only, at most `limit` bytes, as UTF-8 (a BOM
 * dropped). It never blocks the main thread — a FIFO is opened without waiting for a writer and
 * refused, as are folders and devices (/dev/zero) — and never reads past the limit, whatever the
 * file claims (docs/limits.md).
 */
export function readBounded(path: string, limit: number): BoundedRead {
  const got = readBytesBounded(path, limit);
  if (!got.ok) return got;
  return { ok: true, text: got.bytes.toString("utf8").replace(/^\uFEFF/, "") };
}

/** `readBounded`'s bytes, or why not; with `head`, the first `limit` bytes of a longer file are fine (a model file's header). */
export function readBytesBounded(
  path: string,
  limit: number,
  opts: { head?: boolean } = {},
): { ok: true; bytes: Buffer; size: number } | Extract<BoundedRead, { ok: false }> {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (e) {
    return refusedOpen(e);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, refusal: "not_a_file", reason: `is ${kindOf(st)}, not a regular file` };
    if (st.size > limit && !opts.head) return tooLarge(limit);
    // One byte more than the limit tells a file that grew since fstat from one that fits.
    const want = opts.head ? limit : limit + 1;
    const chunks: Buffer[] = [];
    let n = 0;
    while (n < want) {
      // No bigger than the file said it is (plus the one byte that tells it grew): small files, small buffers.
      const chunk = Buffer.alloc(Math.max(1, Math.min(CHUNK, want - n, st.size + 1 - n)));
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      chunks.push(read === chunk.length ? chunk : chunk.subarray(0, read));
      n += read;
    }
    const bytes = Buffer.concat(chunks, n);
    if (n > limit && !opts.head) return tooLarge(limit);
    return { ok: true, bytes: n > limit ? bytes.subarray(0, limit) : bytes, size: st.size };
  } catch (e) {
    return refusedOpen(e);
  } finally {
    closeSync(fd);
  }
}

function tooLarge(limit: number): Extract<BoundedRead, { ok: false }> {
  return { ok: false, refusal: "too_large", reason: `is larger than ${formatLimit(limit)}, the limit` };
}

function refusedOpen(e: unknown): Extract<BoundedRead, { ok: false }> {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, refusal: "missing", reason: "no such file" };
  if (code === "EISDIR") return { ok: false, refusal: "not_a_file", reason: "is a folder, not a regular file" };
  if (code === "ELOOP") return { ok: false, refusal: "unreadable", reason: "cannot be read (ELOOP: too many symbolic links)" };
  return { ok: false, refusal: "unreadable", reason: `cannot be read (${code ?? (e instanceof Error ? e.message : String(e))})` };
}
