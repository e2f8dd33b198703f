import { closeSync, openSync, readSync, statSync } from "node:fs";
import { codeOf, ConfigError } from "../../errors.js";

/** Is this file a GGUF model (its first four bytes)? */
export function hasGgufMagic(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const b = Buffer.alloc(4);
    return readSync(fd, b, 0, 4, 0) === 4 && b.toString("latin1") === "GGUF";
  } finally {
    closeSync(fd);
  }
}

/**
 * What is wrong with a model file that can be told without llama.cpp — missing, a folder, unreadable,
 * not GGUF — as the one-line error; undefined when it may be loaded. Checked before node-llama-cpp is
 * imported, so these fail at once.
 */
export function modelFileProblem(path: string, where: string): ConfigError | undefined {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (e) {
    const code = codeOf(e);
    if (code === "ENOENT" || code === "ENOTDIR")
      return new ConfigError(`model file not found: ${path} (${where}.model): check the path, or name an hf: model to download`, { cause: e });
    return new ConfigError(`model file ${path} cannot be read (${code ?? "error"}): check its permissions`, { cause: e });
  }
  if (!isFile) return new ConfigError(`model path ${path} is a folder, not a .gguf file (${where}.model)`);
  try {
    if (!hasGgufMagic(path))
      return new ConfigError(`model file ${path} is not a GGUF file: point ${where}.model at a .gguf model (or delete it so an hf: model is downloaded again)`);
  } catch (e) {
    return new ConfigError(`model file ${path} cannot be read (${codeOf(e) ?? "error"}): check its permissions`, { cause: e });
  }
  return undefined;
}
