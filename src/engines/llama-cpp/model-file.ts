import { ConfigError } from "../../errors.js";
import { readBytesBounded } from "../../files/read.js";

/** GGUF's fixed header: magic, version (u32), tensor count (u64), metadata key/value count (u64). */
const HEADER_BYTES = 24;
/** The fewest bytes one tensor info can take: name length (u64), dimension count (u32), one dimension (u64), type (u32). */
const MIN_TENSOR_INFO_BYTES = 24;
/** The fewest bytes one metadata entry can take: key length (u64), value type (u32), a one-byte value. */
const MIN_KV_BYTES = 13;

/** What a GGUF file's fixed header says. */
export interface GgufHeader {
  version: number;
  tensors: bigint;
  keys: bigint;
}

/** The first bytes of a model file: whether it is GGUF and, when the whole header is there, what it says. */
function readHeader(path: string): { gguf: boolean; header?: GgufHeader; size: number } | { problem: string } {
  const got = readBytesBounded(path, HEADER_BYTES, { head: true });
  if (!got.ok) return { problem: got.reason };
  const b = got.bytes;
  const gguf = b.length >= 4 && b.toString("latin1", 0, 4) === "GGUF";
  if (!gguf || b.length < HEADER_BYTES) return { gguf, size: got.size };
  return { gguf, size: got.size, header: { version: b.readUInt32LE(4), tensors: b.readBigUInt64LE(8), keys: b.readBigUInt64LE(16) } };
}

/** Is this file a GGUF model (its first four bytes)? */
export function hasGgufMagic(path: string): boolean {
  const h = readHeader(path);
  return "gguf" in h && h.gguf;
}

/**
 * Can a file of `size` bytes hold what the header claims? Each tensor and each key takes some bytes,
 * so counts beyond that are a corrupt or hostile file — one whose counts of 2^64−1 would have the
 * engine's reader allocate without end (docs/local-engine.md).
 */
export function headerFits(h: GgufHeader, size: number): boolean {
  const least = BigInt(HEADER_BYTES) + h.tensors * BigInt(MIN_TENSOR_INFO_BYTES) + h.keys * BigInt(MIN_KV_BYTES);
  return least <= BigInt(size);
}

/**
 * What is wrong with a model file that can be told without llama.cpp — missing, a folder, a FIFO or
 * a device, unreadable, not GGUF, a header whose counts the file cannot hold — as the one-line error;
 * undefined when it may be loaded. Checked before node-llama-cpp is imported, so these fail at once.
 */
export function modelFileProblem(path: string, where: string): ConfigError | undefined {
  const got = readHeader(path);
  if ("problem" in got) {
    const missing = got.problem === "no such file";
    if (missing) return new ConfigError(`model file not found: ${path} (${where}.model): check the path, or name an hf: model to download`);
    if (/is a folder/.test(got.problem)) return new ConfigError(`model path ${path} is a folder, not a .gguf file (${where}.model)`);
    return new ConfigError(`model file ${path} ${got.problem} (${where}.model): point it at a readable .gguf file`);
  }
  if (!got.gguf)
    return new ConfigError(`model file ${path} is not a GGUF file: point ${where}.model at a .gguf model (or delete it so an hf: model is downloaded again)`);
  const h = got.header;
  if (!h) return new ConfigError(`model file ${path} is corrupt or incomplete: delete it and download it again (its ${got.size}-byte header is cut short)`);
  if (h.version === 1) return new ConfigError(`model file ${path} is GGUF version 1, which llama.cpp no longer reads: download a current conversion`);
  if (!headerFits(h, got.size))
    return new ConfigError(
      `model file ${path} is corrupt: its header claims ${h.tensors} tensors and ${h.keys} metadata keys, more than its ${got.size} bytes can hold: delete it and download it again`,
    );
  return undefined;
}
