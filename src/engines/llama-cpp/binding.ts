import type { Llama } from "node-llama-cpp";
import { codeOf, ConfigError } from "../../errors.js";
import { addPart, OPT_IN_PARTS } from "../../opt-in.js";

/** The node-llama-cpp module: an optional dependency, imported only when a llama-cpp model is loaded. */
export type NodeLlamaCpp = typeof import("node-llama-cpp");

/** The last lines llama.cpp logged: the reason a load failed is there, not in the error (a bare "Failed to load model"). */
export class LogTail {
  private readonly lines: string[] = [];
  private total = 0;
  push(line: string): void {
    this.lines.push(line);
    this.total++;
    if (this.lines.length > 200) this.lines.shift();
  }
  /** A position in the log: `last(pattern, mark)` looks only at what came after it. */
  mark(): number {
    return this.total;
  }
  /** The most recent line matching `pattern` (logged after `mark`, when given). */
  last(pattern: RegExp, mark = 0): string | undefined {
    const first = Math.max(0, this.lines.length - (this.total - mark));
    for (let i = this.lines.length - 1; i >= first; i--) {
      const l = this.lines[i];
      if (l !== undefined && pattern.test(l)) return l;
    }
    return undefined;
  }
}

let imported: Promise<NodeLlamaCpp> | undefined;

/** Imports node-llama-cpp once; a missing package is a configuration error saying how to install it. */
export function importNodeLlamaCpp(): Promise<NodeLlamaCpp> {
  imported ??= import("node-llama-cpp").catch((e: unknown) => {
    imported = undefined;
    const code = codeOf(e);
    if (code === "ERR_MODULE_NOT_FOUND") {
      throw new ConfigError(`provider type llama-cpp needs node-llama-cpp, which a default install of dissent leaves out: ${addPart(OPT_IN_PARTS.engine)}`, {
        cause: e,
      });
    }
    throw new ConfigError(
      `node-llama-cpp could not be loaded (${(e as Error).message.split("\n")[0] ?? "error"}): reinstall it: ${addPart(OPT_IN_PARTS.engine)}`,
      { cause: e },
    );
  });
  return imported;
}

/** A llama.cpp runtime: the module, one Llama instance, and the log it writes to (never the console). */
export interface Binding {
  nlc: NodeLlamaCpp;
  llama: Llama;
  logs: LogTail;
}

/**
 * Starts llama.cpp with a prebuilt binary (never compiling, never downloading one): `gpu: "auto"` uses
 * CUDA, Vulkan or Metal when one works here and the CPU otherwise. Its logs go to a tail kept for
 * error messages, never to the console.
 */
export async function openBinding(gpu: "auto" | false): Promise<Binding> {
  const nlc = await importNodeLlamaCpp();
  const logs = new LogTail();
  try {
    const llama = await nlc.getLlama({
      gpu,
      build: "never",
      skipDownload: true,
      progressLogs: false,
      logLevel: nlc.LlamaLogLevel.warn,
      logger: (level, message) => logs.push(`${level}: ${message.trim()}`),
    });
    return { nlc, llama, logs };
  } catch (e) {
    if (e instanceof nlc.NoBinaryFoundError || (e as Error).name === "NoBinaryFoundError") {
      throw new ConfigError(
        `no usable llama.cpp binary for ${process.platform}-${process.arch}${gpu === false ? "" : " (gpu: auto)"}: reinstall node-llama-cpp so its prebuilt binary for this platform is present${gpu === false ? "" : ", or set gpu: false on the llama-cpp provider"}`,
        { cause: e },
      );
    }
    throw new ConfigError(`llama.cpp could not start: ${(e as Error).message.split("\n")[0] ?? "error"}`, { cause: e });
  }
}
