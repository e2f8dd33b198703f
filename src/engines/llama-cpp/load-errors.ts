import { ConfigError, DissentError } from "../../errors.js";
import type { LogTail } from "./binding.js";

/** Where a load failed, for the one-line message. */
export interface LoadSite {
  /** The model file. */
  path: string;
  /** `providers.<name>`, the config place to change. */
  where: string;
  contextSize?: number;
  logs: LogTail;
  /** The log position when the load started. */
  mark: number;
}

/** Lets the few log lines llama.cpp writes just after a failure arrive (they come one macrotask late). */
export const settleLogs = () => new Promise<void>((r) => setTimeout(r, 0));

/**
 * One line naming the file and what to do, for each way loading a model fails (docs/local-engine.md): never
 * "internal error", never llama.cpp's bare "Failed to load model".
 */
export function loadFailure(e: unknown, site: LoadSite): DissentError {
  if (DissentError.isInstance(e)) return e;
  const err = (e ?? {}) as { code?: unknown; name?: unknown; message?: unknown; constructor?: { name?: string } };
  const message = typeof err.message === "string" ? err.message : String(e);
  const kind = err.constructor?.name ?? (typeof err.name === "string" ? err.name : "");
  const { path, where } = site;
  if (err.code === "ENOENT")
    return new ConfigError(`model file not found: ${path} (${where}.model): check the path, or name an hf: model to download`, { cause: e });
  if (err.code === "EISDIR") return new ConfigError(`model path ${path} is a folder, not a .gguf file (${where}.model)`, { cause: e });
  if (err.code === "EACCES" || err.code === "EPERM")
    return new ConfigError(`model file ${path} cannot be read (${String(err.code)}): check its permissions`, { cause: e });
  if (kind === "InvalidGgufMagicError" || /Invalid GGUF magic/i.test(message)) {
    return new ConfigError(`model file ${path} is not a GGUF file: point ${where}.model at a .gguf model (or delete it so an hf: model is downloaded again)`, {
      cause: e,
    });
  }
  if (kind === "InsufficientMemoryError" || /too large for the available|not enough (V)?RAM/i.test(message)) {
    const ctx = site.contextSize ? ` with context_size ${site.contextSize}` : "";
    return new ConfigError(`not enough memory to run ${path}${ctx}: lower ${where}.context_size or ${where}.max_concurrency, or choose a smaller model`, {
      cause: e,
    });
  }
  const arch = site.logs.last(/unknown model architecture/i, site.mark)?.match(/unknown model architecture:\s*'?([^'\s]+)'?/i)?.[1];
  if (arch)
    return new ConfigError(
      `model file ${path} has architecture '${arch}', which this llama.cpp (node-llama-cpp) does not support: update node-llama-cpp or choose another model`,
      { cause: e },
    );
  const corrupt = site.logs.last(
    /not within the file bounds|corrupted or incomplete|failed to read|gguf_init|invalid magic|tensor .* has wrong|unexpectedly reached end of file/i,
    site.mark,
  );
  if (corrupt) return new ConfigError(`model file ${path} is corrupt or incomplete: delete it and download it again (${detail(corrupt)})`, { cause: e });
  const reason = site.logs.last(/error loading model|failed|error/i, site.mark);
  return new ConfigError(`model file ${path} could not be loaded: ${reason ? detail(reason) : message.split("\n")[0]}`, { cause: e });
}

/** llama.cpp's log line without its level and function prefixes. */
function detail(line: string): string {
  return line
    .replace(/^\w+:\s*/, "")
    .replace(/^[\w:]+:\s*(error loading model:\s*)?/, "")
    .trim();
}
