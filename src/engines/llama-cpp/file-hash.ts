import { createHash } from "node:crypto";
import { codeOf } from "../../errors.js";
import { closeSync, createReadStream, mkdirSync, openSync, readFileSync, readSync, realpathSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** What the sidecar remembers of one file: its hash, valid while its size and mtime stay the same. */
interface Known {
  size: number;
  mtimeMs: number;
  sha256: string;
}

const CHUNK = 8 * 1024 * 1024;

function hashSync(path: string): string {
  const hash = createHash("sha256");
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(CHUNK);
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

/**
 * The file's sha256, read as a stream: the event loop turns between chunks, so a signal (Ctrl-C,
 * SIGTERM) is handled at once and stops the read — a multi-GB model is never hashed to the end
 * after the user asked to stop.
 */
async function hashAsync(path: string, signal: AbortSignal | undefined): Promise<string> {
  if (signal?.aborted) throw signal.reason;
  const hash = createHash("sha256");
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: CHUNK, ...(signal ? { signal } : {}) })) hash.update(chunk as Buffer);
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    throw e;
  }
  return hash.digest("hex");
}

/** How a streamed hash is run: the signal that stops it, and who is told before a file is read whole. */
export interface HashOptions {
  signal?: AbortSignal;
  /** Called when the file is not known and is about to be read whole (its real path and size). */
  onHash?: (path: string, size: number) => void;
}

/**
 * The sha256 of model files, computed once: remembered in memory and in a sidecar file keyed by
 * real path, size and mtime, so a multi-GB model is hashed on first use only (the reply cache is
 * keyed by the model's content, not its path — docs/local-engine.md).
 */
export class ModelHashes {
  private readonly memo = new Map<string, Known>();
  /** Hashes under way, by real path: two routes to one file read it once. */
  private readonly running = new Map<string, Promise<string>>();
  private loaded = false;

  constructor(private readonly sidecar: string) {}

  /** The file's hash when it is already known (memory or sidecar) and the file is unchanged; never hashes. */
  known(path: string): string | undefined {
    const { key, size, mtimeMs } = this.stat(path);
    return this.lookup(key, size, mtimeMs);
  }

  /** The file's hash, computing it (synchronously) when unknown. */
  sync(path: string): string {
    const { key, size, mtimeMs } = this.stat(path);
    const hit = this.lookup(key, size, mtimeMs);
    if (hit) return hit;
    const sha256 = hashSync(path);
    this.remember(key, { size, mtimeMs, sha256 });
    return sha256;
  }

  /** The file's hash, computing it as a stream (the event loop keeps turning, the signal stops it) when unknown. */
  async async(path: string, o: HashOptions = {}): Promise<string> {
    const { key, size, mtimeMs } = this.stat(path);
    const hit = this.lookup(key, size, mtimeMs);
    if (hit) return hit;
    const under = this.running.get(key);
    if (under) return under;
    o.onHash?.(key, size);
    const p = hashAsync(path, o.signal).then((sha256) => {
      this.remember(key, { size, mtimeMs, sha256 });
      return sha256;
    });
    this.running.set(key, p);
    try {
      return await p;
    } finally {
      this.running.delete(key);
    }
  }

  private stat(path: string): { key: string; size: number; mtimeMs: number } {
    const st = statSync(path);
    return { key: realpathSync(path), size: st.size, mtimeMs: st.mtimeMs };
  }

  private lookup(key: string, size: number, mtimeMs: number): string | undefined {
    if (!this.loaded) {
      this.loaded = true;
      for (const [k, v] of Object.entries(this.readSidecar())) if (!this.memo.has(k)) this.memo.set(k, v);
    }
    const k = this.memo.get(key);
    return k && k.size === size && k.mtimeMs === mtimeMs ? k.sha256 : undefined;
  }

  private readSidecar(): Record<string, Known> {
    let text: string;
    try {
      text = readFileSync(this.sidecar, "utf8");
    } catch (e) {
      // Missing or unreadable: hashes are recomputed, nothing is lost but time.
      if (["ENOENT", "EACCES", "EPERM", "EISDIR"].includes(codeOf(e) ?? "")) return {};
      throw e;
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
      const out: Record<string, Known> = {};
      for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
        const e = v as Partial<Known>;
        if (typeof e.size === "number" && typeof e.mtimeMs === "number" && typeof e.sha256 === "string" && /^[0-9a-f]{64}$/.test(e.sha256)) {
          out[k] = { size: e.size, mtimeMs: e.mtimeMs, sha256: e.sha256 };
        }
      }
      return out;
    } catch (e) {
      if (e instanceof SyntaxError) return {}; // a damaged sidecar is rebuilt
      throw e;
    }
  }

  private remember(key: string, known: Known): void {
    this.memo.set(key, known);
    // Merge with what other processes wrote meanwhile, then replace the file in one rename.
    const all = { ...this.readSidecar(), [key]: known };
    const tmp = `${this.sidecar}.${process.pid}.tmp`;
    try {
      mkdirSync(dirname(this.sidecar), { recursive: true });
      writeFileSync(tmp, `${JSON.stringify(all, null, 1)}\n`);
      renameSync(tmp, this.sidecar);
    } catch (e) {
      // A read-only models_dir: the hash is remembered for this process only, and recomputed next time.
      if (!["EACCES", "EPERM", "EROFS", "ENOSPC"].includes(codeOf(e) ?? "")) throw e;
    }
  }
}
