import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { LanguageModel } from "ai";
import type { Config, ProviderConfig } from "../../contracts/config.js";
import { ConfigError, RunError } from "../../errors.js";
import { importNodeLlamaCpp, openBinding, type Binding } from "./binding.js";
import { downloadModel } from "./download.js";
import { ModelHashes } from "./file-hash.js";
import { llamaLanguageModel } from "./language-model.js";
import { loadModel, type LoadedModel } from "./loaded-model.js";
import { modelFileProblem } from "./model-file.js";
import { describeRef, isModelRef, localPathOf, parseModelRef, type ModelRef } from "./model-ref.js";
import { formatBytes, type DownloadReporter } from "./progress.js";

/** Requests one llama-cpp model serves at once when `max_concurrency` is not set: its context's sequences. */
export const DEFAULT_SEQUENCES = 2;

/** The sidecar in `models_dir` remembering model files' hashes. */
export const HASHES_FILE = ".dissent-sha256.json";
/** A model file at least this big is said before it is hashed (reading it whole takes seconds). */
export const HASH_NOTICE_BYTES = 256 * 2 ** 20;

type LlamaProvider = Extract<ProviderConfig, { type: "llama-cpp" }>;

/** A well-known model, described before it is downloaded (the no-config default's pair). */
export interface KnownModel {
  /** e.g. "Qwen2.5-1.5B-Instruct Q4_K_M for the executor and producers" */
  label: string;
  approxBytes: number;
}

/** What the engines need from the configuration and the process. */
export interface EngineOptions {
  config: Pick<Config, "source" | "baseDir" | "modelsDir" | "offline" | "providers">;
  env: Record<string, string | undefined>;
  reporter: DownloadReporter;
  /** Names and sizes of well-known `hf:` models, for the line said before downloading them. */
  known?: (uri: string) => KnownModel | undefined;
  /** Stops a download (Ctrl-C); what was fetched is kept, and the next run resumes it. */
  signal?: AbortSignal;
  /** Where the engine's warnings go (a chat template it cannot use): one line each, said by the caller. */
  warn?: (message: string) => void;
}

/** Where a route's model is on this machine. */
export interface Located {
  ref: ModelRef;
  path: string;
  present: boolean;
}

/** One llama-cpp route target, as the router names it. */
export interface EngineTarget {
  name: string;
  p: ProviderConfig;
  model: string;
}

/** The in-process engine behind every `type: llama-cpp` provider of one configuration (docs/local-engine.md). */
export interface LlamaEngines {
  /** The cache identity `llama-cpp <sha256 of the model file>` (hashed once, then remembered). */
  identity(name: string, p: ProviderConfig, model: string): string;
  /** The AI SDK model for a route: the file downloaded if need be, loaded once, shared. */
  create(name: string, p: ProviderConfig, model: string): Promise<LanguageModel>;
  /** Before the first call: downloads what the targets need (said first, with sizes), and hashes every file. */
  prepare(targets: readonly EngineTarget[], intro?: string): Promise<void>;
  /**
   * Hashes the model files of the targets that are here (never downloading), off the event loop's
   * critical path and stopped by the engines' signal: `identity()` then finds them known (replay, doctor).
   */
  hash(targets: readonly EngineTarget[]): Promise<void>;
  /** Where a target's model file is, without loading anything (doctor). */
  locate(name: string, p: ProviderConfig, model: string): Located;
  /** Frees every model these engines loaded (the process's llama.cpp runtime stays, shared). */
  dispose(): Promise<void>;
}

const asLlama = (p: ProviderConfig): LlamaProvider | undefined => (p.type === "llama-cpp" ? p : undefined);

/** Threads for a provider: its `threads`, else DISSENT_LLAMA_THREADS, else llama.cpp's choice. */
function threadsOf(p: LlamaProvider, env: Record<string, string | undefined>): number | undefined {
  if (p.threads) return p.threads;
  const t = Number(env.DISSENT_LLAMA_THREADS);
  return Number.isInteger(t) && t > 0 ? t : undefined;
}

/**
 * A copy of the config in which every llama-cpp provider without `max_concurrency` has the engine's
 * (its sequences): requests beyond it queue in the router, where queued time does not count against
 * call_timeout_ms (docs/configuration.md).
 */
export function withEngineLimits<C extends Pick<Config, "providers">>(config: C): C {
  const providers: Config["providers"] = {};
  let changed = false;
  for (const [name, p] of Object.entries(config.providers)) {
    if (p.type === "llama-cpp" && p.max_concurrency === undefined) {
      providers[name] = { ...p, max_concurrency: DEFAULT_SEQUENCES };
      changed = true;
    } else providers[name] = p;
  }
  return changed ? { ...config, providers } : config;
}

// One llama.cpp runtime per GPU setting for the whole process: its native library loads once, and
// every configuration's engines share it (only their models are theirs to free).
const runtimes = new Map<string, Promise<Binding>>();
function runtimeFor(gpu: "auto" | false): Promise<Binding> {
  const key = String(gpu);
  let b = runtimes.get(key);
  if (!b) {
    b = openBinding(gpu);
    b.catch(() => runtimes.delete(key));
    runtimes.set(key, b);
  }
  return b;
}

/**
 * Offline, with several models not downloaded yet: one error naming every file to place, in the one
 * folder. The no-config default's pair is no configuration of the user's: exit 1, not 2 (issue 32).
 */
function offlineMissing(missing: readonly Located[], config: EngineOptions["config"]): ConfigError | RunError {
  const files = missing.map((m) => {
    const ref = m.ref as Extract<ModelRef, { kind: "hf" }>;
    return `${ref.uri} as ${basename(m.path)} (from https://huggingface.co/${ref.user}/${ref.repo})`;
  });
  const message = `offline: ${missing.length} models are not in ${config.modelsDir}: place ${files.join(" and ")} in that folder, or turn offline off to download them`;
  return config.source === "defaults" ? new RunError(message) : new ConfigError(message);
}

/** The engines of one configuration: one runtime per GPU setting, one loaded model per file and settings. */
export function createLlamaEngines(o: EngineOptions): LlamaEngines {
  const { config, env, reporter } = o;
  const hashes = new ModelHashes(join(config.modelsDir, HASHES_FILE));
  const models = new Map<string, Promise<LoadedModel>>();
  const downloads = new Map<string, Promise<string>>();

  const refOf = (name: string, p: ProviderConfig, model: string): ModelRef => {
    const lp = asLlama(p);
    const spec = lp?.model ?? model;
    if (!lp?.model && !isModelRef(model)) {
      throw new ConfigError(
        `${config.source}: providers.${name} (llama-cpp) names no model: set providers.${name}.model to hf:<user>/<repo>:<quant> or a .gguf file (or route to ${name}:<that reference>)`,
      );
    }
    const ref = parseModelRef(spec, config.baseDir);
    if ("error" in ref) throw new ConfigError(`${config.source}: providers.${name}.model: ${ref.error}`);
    return ref;
  };

  const locate = (name: string, p: ProviderConfig, model: string): Located => {
    const ref = refOf(name, p, model);
    const path = localPathOf(ref, config.modelsDir);
    return { ref, path, present: existsSync(path) && statSync(path).isFile() };
  };

  /** The model's file, downloaded first when it is an `hf:` model not yet here (never when offline). */
  const ensure = (name: string, p: ProviderConfig, model: string): Promise<string> => {
    const { ref, path, present } = locate(name, p, model);
    if (present || ref.kind === "file") return Promise.resolve(path); // a missing file fails at load, in one line
    if (config.offline) {
      const message = `offline: ${ref.uri} is not in ${config.modelsDir}: place its .gguf file at ${path} (from https://huggingface.co/${ref.user}/${ref.repo}), or turn offline off to download it`;
      // The no-config default's models are no configuration of the user's: a failed run (1), not a bad config (2).
      return Promise.reject(config.source === "defaults" ? new RunError(message) : new ConfigError(message));
    }
    let d = downloads.get(path);
    if (!d) {
      d = downloadModel(ref, {
        modelsDir: config.modelsDir,
        env,
        reporter,
        where: `providers.${name}`,
        provider: name,
        ...(o.signal ? { signal: o.signal } : {}),
      });
      d.catch(() => downloads.delete(path));
      downloads.set(path, d);
    }
    return d;
  };

  /** Hashes files as streams (stopped by the signal); a big one is said first. */
  const hashFiles = async (paths: readonly string[]) => {
    for (const path of paths)
      await hashes.async(path, {
        ...(o.signal ? { signal: o.signal } : {}),
        onHash: (real, size) => {
          if (size >= HASH_NOTICE_BYTES) reporter.notice(`hashing ${real} (${formatBytes(size)}) once, to key the reply cache by its content`);
        },
      });
  };

  return {
    locate,

    identity(name, p, model) {
      const { ref, path, present } = locate(name, p, model);
      // Not here yet: nothing can be cached under the file's hash; the first load downloads or fails.
      if (!present) return `llama-cpp ${describeRef(ref)} (absent)`;
      return `llama-cpp ${hashes.sync(path)}`;
    },

    async create(name, p, model) {
      const lp = asLlama(p);
      if (!lp) throw new ConfigError(`${config.source}: providers.${name} is not a llama-cpp provider`);
      const path = await ensure(name, p, model);
      const problem = modelFileProblem(path, `providers.${name}`);
      if (problem) throw problem;
      const gpu = lp.gpu ?? "auto";
      const threads = threadsOf(lp, env);
      const sequences = lp.max_concurrency ?? DEFAULT_SEQUENCES;
      const real = existsSync(path) ? realpathSync(path) : path;
      const key = [real, gpu, lp.context_size ?? "", sequences, threads ?? ""].join("|");
      let loaded = models.get(key);
      if (!loaded) {
        loaded = runtimeFor(gpu).then((b) =>
          loadModel(b, {
            path,
            where: `providers.${name}`,
            sequences,
            ...(lp.context_size ? { contextSize: lp.context_size } : {}),
            ...(threads ? { threads } : {}),
            ...(o.signal ? { signal: o.signal } : {}),
            ...(o.warn ? { warn: o.warn } : {}),
          }),
        );
        loaded.catch(() => models.delete(key));
        models.set(key, loaded);
      }
      return llamaLanguageModel({ provider: name, modelId: model, model: await loaded });
    },

    async prepare(targets, intro) {
      const wanted = new Map<string, { target: EngineTarget; located: Located }>();
      for (const t of targets) {
        if (t.p.type !== "llama-cpp") continue;
        const located = locate(t.name, t.p, t.model);
        if (!wanted.has(located.path)) wanted.set(located.path, { target: t, located });
      }
      const missing = [...wanted.values()].filter((w) => !w.located.present && w.located.ref.kind === "hf");
      if (missing.length > 1 && config.offline)
        throw offlineMissing(
          missing.map((m) => m.located),
          config,
        );
      const allKnown = missing.every(({ located }) => o.known?.(describeRef(located.ref)) !== undefined);
      // Downloading needs node-llama-cpp: a missing engine is said before any download is announced.
      if (missing.length > 0 && !config.offline) await importNodeLlamaCpp();
      // One unknown model needs no summary: the download's own first line names it and its size.
      if (missing.length > 0 && !config.offline && (intro || allKnown || missing.length > 1)) {
        if (intro) reporter.notice(intro);
        const parts = missing.map(({ located }) => {
          const uri = describeRef(located.ref);
          const k = o.known?.(uri);
          return k ? `${k.label} (~${formatBytes(k.approxBytes)})` : uri;
        });
        const total = missing.reduce((n, { located }) => n + (o.known?.(describeRef(located.ref))?.approxBytes ?? 0), 0);
        const size = allKnown ? ` (~${formatBytes(total)} in all)` : "";
        reporter.notice(
          `downloading ${missing.length === 1 ? "a model" : `${missing.length} models`} once into ${config.modelsDir}${size}: ${parts.join("; ")}`,
        );
      }
      const paths: string[] = [];
      for (const { target } of wanted.values()) {
        const path = await ensure(target.name, target.p, target.model);
        // A folder, a FIFO, a file that is not GGUF or whose header lies: the configuration error now, never a read of it.
        const problem = modelFileProblem(path, `providers.${target.name}`);
        if (problem) throw problem;
        paths.push(path);
      }
      // Hash before routing, off the event loop's critical path: identity() then finds it known.
      await hashFiles(paths);
    },

    async hash(targets) {
      const paths = new Set<string>();
      for (const t of targets) {
        if (t.p.type !== "llama-cpp") continue;
        const { path, present } = locate(t.name, t.p, t.model);
        if (!present) continue; // identity() names it absent: nothing is cached under a hash it does not have
        const problem = modelFileProblem(path, `providers.${t.name}`);
        if (problem) throw problem;
        paths.add(path);
      }
      await hashFiles([...paths]);
    },

    async dispose() {
      const loaded = [...models.values()];
      models.clear();
      for (const m of loaded)
        await m.then(
          (x) => x.dispose(),
          () => undefined,
        );
    },
  };
}
