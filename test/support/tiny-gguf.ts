/**
 * A writer of tiny GGUF v3 model files for tests that run a model in-process (node-llama-cpp / llama.cpp).
 * No model can be downloaded here, so tests build one: a llama-architecture transformer with seeded random
 * F32 weights and a SentencePiece ("llama") vocabulary of only <unk>, <s>, </s>, the 256 byte-fallback
 * tokens <0x00>..<0xFF> and "▁", enough to spell any text (JSON included) about one byte per token.
 * node-llama-cpp 3.22 loads the default (~460 KiB) in ~40 ms and generates ~500-1000 tokens/s on one
 * thread (use `maxThreads: 1`: more threads on a tiny model are 10-100x slower).
 *
 * Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md — little-endian; header, metadata
 * key/values, tensor infos (dims innermost first, offsets relative to the data section), then the tensor
 * data, every tensor aligned to `general.alignment` (32).
 */
import { createHash } from "node:crypto";
import { truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface TinyGgufOptions {
  /** PRNG seed for the weights; the same options give the same bytes. Default 1. */
  seed?: number;
  /** Transformer blocks. Default 2. */
  layers?: number;
  /** Embedding width (a multiple of `heads`). Default 64. */
  embd?: number;
  /** Attention heads (query and key/value alike). Default 4. */
  heads?: number;
  /** `general.name`. Default "dissent-tiny". */
  name?: string;
  /** `general.architecture`; anything llama.cpp does not know makes loading fail. Default "llama". */
  architecture?: string;
  /** A Jinja `tokenizer.chat_template`; none by default (callers pick a chat wrapper). */
  chatTemplate?: string;
  /** Keep only this many leading bytes: a corrupt (truncated) file for error tests. */
  truncateTo?: number;
  /** ASCII bytes made likelier in every prediction (bakeLogitBias); `"` makes JSON strings short. */
  favour?: string;
  /** `llama.context_length` (the training context llama.cpp reports). Default 512. */
  contextLength?: number;
  /**
   * ASCII bytes after which `</s>` is all but certain (bakeLogitBias), so free text (no grammar) ends on
   * its own instead of running to the context's end. Greedy decoding of the default model writes
   * "6s6s6s…" whatever the prompt, so `"6"` makes its free-text reply "6". A grammar masks `</s>` until
   * the JSON is complete, so structured replies are unaffected. Default: none.
   */
  eosAfter?: string;
}

export interface TinyGguf {
  path: string;
  bytes: number;
  sha256: string;
}

// --- GGUF value types and tensor types (gguf.md) -------------------------------------------------------
const T = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 } as const;
const GGML_F32 = 0;
const ALIGNMENT = 32;

type MetaValue =
  | { type: "u32"; value: number }
  | { type: "f32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "str"; value: string }
  | { type: "strs"; value: string[] }
  | { type: "f32s"; value: number[] }
  | { type: "i32s"; value: number[] };

interface Tensor {
  name: string;
  /** ggml `ne`: innermost (contiguous) dimension first. */
  dims: number[];
  data: Float32Array;
}

// --- Byte encoding ---------------------------------------------------------------------------------------
/** A fixed-size little-endian field. */
function field(size: number, write: (b: Buffer) => void): Buffer {
  const b = Buffer.alloc(size);
  write(b);
  return b;
}
const u32 = (n: number): Buffer => field(4, (b) => b.writeUInt32LE(n));
const i32 = (n: number): Buffer => field(4, (b) => b.writeInt32LE(n));
const f32 = (n: number): Buffer => field(4, (b) => b.writeFloatLE(n));
const u64 = (n: number): Buffer => field(8, (b) => b.writeBigUInt64LE(BigInt(n)));

/** A GGUF string: u64 byte length, then UTF-8 bytes (no terminator). */
function str(s: string): Buffer {
  const bytes = Buffer.from(s, "utf8");
  return Buffer.concat([u64(bytes.length), bytes]);
}

function array(elementType: number, items: Buffer[]): Buffer {
  return Buffer.concat([u32(T.ARRAY), u32(elementType), u64(items.length), ...items]);
}

/** One metadata entry: key, value type, value. */
function encodeKv(key: string, v: MetaValue): Buffer {
  const head = str(key);
  switch (v.type) {
    case "u32":
      return Buffer.concat([head, u32(T.UINT32), u32(v.value)]);
    case "f32":
      return Buffer.concat([head, u32(T.FLOAT32), f32(v.value)]);
    case "bool":
      return Buffer.concat([head, u32(T.BOOL), Buffer.from([v.value ? 1 : 0])]);
    case "str":
      return Buffer.concat([head, u32(T.STRING), str(v.value)]);
    case "strs":
      return Buffer.concat([head, array(T.STRING, v.value.map(str))]);
    case "f32s":
      return Buffer.concat([head, array(T.FLOAT32, v.value.map(f32))]);
    case "i32s":
      return Buffer.concat([head, array(T.INT32, v.value.map(i32))]);
  }
}

function padTo(length: number): number {
  return (ALIGNMENT - (length % ALIGNMENT)) % ALIGNMENT;
}

// --- Vocabulary -------------------------------------------------------------------------------------------
const UNK = 0;
const BOS = 1;
const EOS = 2;
const FIRST_BYTE_TOKEN = 3;
/** llama_token_type values. */
const TOKEN_TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, BYTE: 6 } as const;

/**
 * <unk>, <s>, </s>, <0x00>..<0xFF> (SentencePiece byte fallback spells every input), then "▁": SPM turns
 * spaces into U+2581 and only a normal token for it detokenizes back to a space (byte tokens would not).
 */
function vocabulary(): { tokens: string[]; types: number[] } {
  const bytes = Array.from({ length: 256 }, (_, i) => `<0x${i.toString(16).toUpperCase().padStart(2, "0")}>`);
  return {
    tokens: ["<unk>", "<s>", "</s>", ...bytes, "\u2581"],
    types: [TOKEN_TYPE.UNKNOWN, TOKEN_TYPE.CONTROL, TOKEN_TYPE.CONTROL, ...bytes.map(() => TOKEN_TYPE.BYTE), TOKEN_TYPE.NORMAL],
  };
}

// --- Weights ----------------------------------------------------------------------------------------------
/** mulberry32: a tiny deterministic PRNG in [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Uniform weights in ±1/sqrt(fan-in), fan-in being the innermost dimension. */
function randomTensor(rand: () => number, name: string, dims: number[]): Tensor {
  const count = dims.reduce((a, b) => a * b, 1);
  const scale = 1 / Math.sqrt(dims[0] ?? 1);
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) data[i] = (rand() * 2 - 1) * scale;
  return { name, dims, data };
}

function onesTensor(name: string, n: number): Tensor {
  return { name, dims: [n], data: new Float32Array(n).fill(1) };
}

/** Bytes no JSON answer needs: controls but \t \n \r, DEL, and all non-ASCII (random multi-byte runs are
 * invalid UTF-8, which llama.cpp's grammar lets through and detokenizing turns into U+FFFD). */
function unwantedByte(b: number): boolean {
  return (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) || b >= 0x7f;
}

/**
 * Bake a logit bias into the weights (llama has no output bias tensor): hidden dimension 0 is a large
 * constant (8) in every token embedding, so it still dominates after the final RMS norm, and a token's
 * output weight on it becomes a fixed bonus or penalty, far larger than the random logits (about ±1).
 * Unwanted bytes get -4 (never sampled); favoured bytes get +1 (roughly e^5 ≈ 150x likelier).
 */
function bakeLogitBias(embd: number, tokenEmbd: Tensor, output: Tensor, favour: string, eosAfter: string): void {
  const vocab = tokenEmbd.dims[1] ?? 0;
  for (let t = 0; t < vocab; t++) tokenEmbd.data[t * embd] = 8;
  for (let b = 0; b < 256; b++) if (unwantedByte(b)) output.data[(FIRST_BYTE_TOKEN + b) * embd] = -4;
  for (const b of Buffer.from(favour, "utf8")) output.data[(FIRST_BYTE_TOKEN + b) * embd] = 1;
  if (eosAfter === "") return;
  // Hidden dimension 1 flags the `eosAfter` bytes (8 in their embeddings, 0 in every other), and only
  // </s> reads it: the token after a flagged byte is </s>, and nothing else changes.
  for (let t = 0; t < vocab; t++) {
    tokenEmbd.data[t * embd + 1] = 0;
    output.data[t * embd + 1] = 0;
  }
  for (const b of Buffer.from(eosAfter, "utf8")) tokenEmbd.data[(FIRST_BYTE_TOKEN + b) * embd + 1] = 8;
  output.data[EOS * embd + 1] = 1;
}

/** The tensors llama.cpp's llama architecture expects, with its names and shapes. */
function llamaTensors(rand: () => number, layers: number, embd: number, vocab: number, ff: number): Tensor[] {
  const tensors: Tensor[] = [randomTensor(rand, "token_embd.weight", [embd, vocab])];
  for (let i = 0; i < layers; i++) {
    const p = `blk.${i}.`;
    tensors.push(
      onesTensor(`${p}attn_norm.weight`, embd),
      randomTensor(rand, `${p}attn_q.weight`, [embd, embd]),
      randomTensor(rand, `${p}attn_k.weight`, [embd, embd]),
      randomTensor(rand, `${p}attn_v.weight`, [embd, embd]),
      randomTensor(rand, `${p}attn_output.weight`, [embd, embd]),
      onesTensor(`${p}ffn_norm.weight`, embd),
      randomTensor(rand, `${p}ffn_gate.weight`, [embd, ff]),
      randomTensor(rand, `${p}ffn_up.weight`, [embd, ff]),
      randomTensor(rand, `${p}ffn_down.weight`, [ff, embd]),
    );
  }
  tensors.push(onesTensor("output_norm.weight", embd), randomTensor(rand, "output.weight", [embd, vocab]));
  return tensors;
}

// --- File assembly ----------------------------------------------------------------------------------------
interface Shape {
  layers: number;
  embd: number;
  heads: number;
  ff: number;
}

/** The keys llama.cpp reads for a llama model and its SentencePiece tokenizer. */
function metadata(arch: string, name: string, shape: Shape, contextLength: number, chatTemplate?: string): [string, MetaValue][] {
  const { layers, embd, heads, ff } = shape;
  const { tokens, types } = vocabulary();
  const kv: [string, MetaValue][] = [
    ["general.architecture", { type: "str", value: arch }],
    ["general.name", { type: "str", value: name }],
    ["general.alignment", { type: "u32", value: ALIGNMENT }],
    ["general.file_type", { type: "u32", value: 0 }], // ALL_F32
    [`${arch}.context_length`, { type: "u32", value: contextLength }],
    [`${arch}.embedding_length`, { type: "u32", value: embd }],
    [`${arch}.block_count`, { type: "u32", value: layers }],
    [`${arch}.feed_forward_length`, { type: "u32", value: ff }],
    [`${arch}.attention.head_count`, { type: "u32", value: heads }],
    [`${arch}.attention.head_count_kv`, { type: "u32", value: heads }],
    [`${arch}.attention.layer_norm_rms_epsilon`, { type: "f32", value: 1e-5 }],
    [`${arch}.rope.dimension_count`, { type: "u32", value: embd / heads }],
    [`${arch}.vocab_size`, { type: "u32", value: tokens.length }],
    ["tokenizer.ggml.model", { type: "str", value: "llama" }],
    ["tokenizer.ggml.tokens", { type: "strs", value: tokens }],
    ["tokenizer.ggml.scores", { type: "f32s", value: tokens.map(() => 0) }],
    ["tokenizer.ggml.token_type", { type: "i32s", value: types }],
    ["tokenizer.ggml.unknown_token_id", { type: "u32", value: UNK }],
    ["tokenizer.ggml.bos_token_id", { type: "u32", value: BOS }],
    ["tokenizer.ggml.eos_token_id", { type: "u32", value: EOS }],
    ["tokenizer.ggml.add_bos_token", { type: "bool", value: true }],
    ["tokenizer.ggml.add_space_prefix", { type: "bool", value: false }],
  ];
  if (chatTemplate !== undefined) kv.push(["tokenizer.chat_template", { type: "str", value: chatTemplate }]);
  return kv;
}

function tensorInfo(t: Tensor, offset: number): Buffer {
  return Buffer.concat([str(t.name), u32(t.dims.length), ...t.dims.map(u64), u32(GGML_F32), u64(offset)]);
}

/** Header, metadata, tensor infos, padding, then each tensor's data padded to the alignment. */
function assemble(kv: [string, MetaValue][], tensors: Tensor[]): Buffer {
  const infos: Buffer[] = [];
  const data: Buffer[] = [];
  let offset = 0;
  for (const t of tensors) {
    infos.push(tensorInfo(t, offset));
    const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    data.push(bytes, Buffer.alloc(padTo(bytes.length)));
    offset += bytes.length + padTo(bytes.length);
  }
  const head = Buffer.concat([Buffer.from("GGUF", "ascii"), u32(3), u64(tensors.length), u64(kv.length), ...kv.map(([k, v]) => encodeKv(k, v)), ...infos]);
  return Buffer.concat([head, Buffer.alloc(padTo(head.length)), ...data]);
}

/** Write a tiny, deterministic llama GGUF to `path` (about 0.5 MB with the defaults). */
export function writeTinyGguf(path: string, opts: TinyGgufOptions = {}): TinyGguf {
  const layers = opts.layers ?? 2;
  const embd = opts.embd ?? 64;
  const heads = opts.heads ?? 4;
  if (embd % heads !== 0) throw new Error(`embd ${embd} is not a multiple of heads ${heads}`);
  const ff = embd * 2;
  const rand = prng(opts.seed ?? 1);
  const vocab = vocabulary().tokens.length;
  const tensors = llamaTensors(rand, layers, embd, vocab, ff);
  const tokenEmbd = tensors[0];
  const output = tensors[tensors.length - 1];
  if (tokenEmbd && output) bakeLogitBias(embd, tokenEmbd, output, opts.favour ?? "", opts.eosAfter ?? "");
  const shape = { layers, embd, heads, ff };
  const kv = metadata(opts.architecture ?? "llama", opts.name ?? "dissent-tiny", shape, opts.contextLength ?? 512, opts.chatTemplate);
  let file = assemble(kv, tensors);
  if (opts.truncateTo !== undefined) file = file.subarray(0, opts.truncateTo);
  writeFileSync(path, file);
  return { path, bytes: file.length, sha256: createHash("sha256").update(file).digest("hex") };
}

/**
 * The options engine tests use: strings close quickly (`"` favoured) and free text ends at once
 * (`</s>` after `"`), so an executor's reply is `"` and a grammar-constrained reply is short, valid
 * JSON; an 8192-token training context fits the gate's prompts (the byte vocabulary spends one token
 * a character).
 */
export const TINY_CHAT: TinyGgufOptions = { favour: '"', eosAfter: '"', contextLength: 8192 };

/**
 * A tiny GGUF made sparse to 8 GiB (`big.gguf` in `dir`: zeros after the model, so its header still
 * fits and reading it whole takes seconds, storing it nothing) and a config routing the gate's two
 * roles to it — what the hash-on-SIGTERM test and bench/signals.mjs stop mid-hash.
 */
export function writeBigGguf(dir: string): { path: string; config: string } {
  const big = writeTinyGguf(join(dir, "big.gguf"), TINY_CHAT);
  truncateSync(big.path, 8 * 2 ** 30);
  const config = [
    "models_dir: ./models",
    "providers:",
    '  tiny: { type: llama-cpp, model: "./big.gguf", threads: 1, gpu: false }',
    "routes:",
    '  executor: { primary: "tiny:drafter" }',
    '  challenger: { primary: "tiny:judge" }',
  ].join("\n");
  return { path: big.path, config };
}
