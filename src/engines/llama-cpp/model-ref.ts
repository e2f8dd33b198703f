import { homedir } from "node:os";
import { basename, resolve } from "node:path";

/** A model on Hugging Face, downloaded once into `models_dir` under `localName` (docs/local-engine.md). */
export interface HfModelRef {
  kind: "hf";
  /** The reference as node-llama-cpp reads it: `hf:user/repo:QUANT` or `hf:user/repo/path/file.gguf`. */
  uri: string;
  user: string;
  repo: string;
  /** The quantisation tag (`Q4_K_M`), for a tagged reference. */
  quant?: string;
  /** The file in the repository, for a reference that names one. */
  file?: string;
  /** The file name it has in `models_dir`. */
  localName: string;
}

/** A `.gguf` file on disk. */
export interface FileModelRef {
  kind: "file";
  /** The absolute path (a relative one is relative to the config file's folder). */
  path: string;
}

/** Where a llama-cpp model comes from. */
export type ModelRef = HfModelRef | FileModelRef;

/** The quantisation an `hf:user/repo` reference with no tag means (node-llama-cpp's default too). */
export const DEFAULT_QUANT = "Q4_K_M";

const HF_PREFIX = /^(?:hf|huggingface):(?:\/\/)?/i;
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "_");

/** Does this string name a model (an `hf:` reference or a `.gguf` path), rather than being a route label? */
export function isModelRef(spec: string): boolean {
  return HF_PREFIX.test(spec.trim()) || /\.gguf$/i.test(spec.trim());
}

/**
 * Reads `hf:<user>/<repo>:<quant>`, `hf:<user>/<repo>` (Q4_K_M), `hf:<user>/<repo>/<path>.gguf`, or a
 * file path (`~/` is the home folder; a relative path is relative to `baseDir`). Returns an error
 * sentence instead of a reference when the text cannot be one.
 */
export function parseModelRef(spec: string, baseDir: string): ModelRef | { error: string } {
  const text = spec.trim();
  if (!HF_PREFIX.test(text)) {
    const path = text.startsWith("~/") ? resolve(homedir(), text.slice(2)) : resolve(baseDir, text);
    return { kind: "file", path };
  }
  const [user, repoTag, ...rest] = text.replace(HF_PREFIX, "").split("/");
  if (!user || !repoTag)
    return { error: `'${spec}' is not a Hugging Face reference: write hf:<user>/<repo>:<quant> (e.g. hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M)` };
  if (rest.length > 0) {
    const file = rest.join("/");
    if (!/\.gguf$/i.test(file)) return { error: `'${spec}' names a file that is not a .gguf file` };
    return {
      kind: "hf",
      uri: `hf:${user}/${repoTag}/${file}`,
      user,
      repo: repoTag,
      file,
      localName: `hf_${safe(user)}_${safe(repoTag)}_${safe(basename(file))}`,
    };
  }
  const colon = repoTag.indexOf(":");
  const repo = colon < 0 ? repoTag : repoTag.slice(0, colon);
  const quant = (colon < 0 ? DEFAULT_QUANT : repoTag.slice(colon + 1)).toUpperCase();
  if (!repo || !/^[A-Z0-9_]+$/.test(quant))
    return { error: `'${spec}' is not a Hugging Face reference: write hf:<user>/<repo>:<quant> (e.g. hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M)` };
  return {
    kind: "hf",
    uri: `hf:${user}/${repo}:${quant}`,
    user,
    repo,
    quant,
    localName: `hf_${safe(user)}_${safe(repo.replace(/-gguf$/i, ""))}.${quant}.gguf`,
  };
}

/** The file a reference resolves to on this machine (an `hf:` model: its place in `models_dir`). */
export function localPathOf(ref: ModelRef, modelsDir: string): string {
  return ref.kind === "file" ? ref.path : resolve(modelsDir, ref.localName);
}

/** How a reference reads in messages. */
export function describeRef(ref: ModelRef): string {
  return ref.kind === "file" ? ref.path : ref.uri;
}
