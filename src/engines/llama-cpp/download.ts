import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, DissentError, Interrupted, ProviderError } from "../../errors.js";
import { importNodeLlamaCpp } from "./binding.js";
import { hasGgufMagic } from "./model-file.js";
import type { HfModelRef } from "./model-ref.js";
import type { DownloadReporter } from "./progress.js";

/** Where and how a download runs. */
export interface DownloadOptions {
  modelsDir: string;
  /** HF_ENDPOINT / MODEL_ENDPOINT (another Hugging Face host, or a mirror) and HF_TOKEN (gated models) are read from it. */
  env: Record<string, string | undefined>;
  reporter: DownloadReporter;
  /** `providers.<name>`, named in messages. */
  where: string;
  provider: string;
  signal?: AbortSignal;
}

/** A failed download as one line: what to check, or where to place the file by hand. */
function downloadFailure(e: unknown, ref: HfModelRef, dest: string, o: DownloadOptions): DissentError {
  if (DissentError.isInstance(e)) return e;
  if (o.signal?.aborted) {
    const reason: unknown = o.signal.reason;
    return DissentError.isInstance(reason) ? reason : new Interrupted(`the download of ${ref.uri} was interrupted; the next run resumes it`);
  }
  const message = (e instanceof Error ? e.message : String(e)).split("\n")[0] ?? "";
  const what = ref.quant ? `no ${ref.quant} file` : `no file ${ref.file ?? ""}`;
  if (/does not exist|Cannot get quantization|404/i.test(message)) {
    return new ConfigError(`${ref.uri} was not found on Hugging Face (no repository ${ref.user}/${ref.repo}, or ${what} in it): check ${o.where}.model`, {
      cause: e,
    });
  }
  if (/\b(401|403)\b|unauthori[sz]ed|forbidden|gated/i.test(message)) {
    return new ConfigError(`${ref.uri} needs a Hugging Face token (a gated model): set HF_TOKEN, or place the file at ${dest}`, { cause: e });
  }
  const offline = /fetch failed|ENOTFOUND|ECONNREFUSED|EAI_AGAIN|ETIMEDOUT|ECONNRESET|network/i.test(message);
  return new ProviderError(
    `could not download ${ref.uri}: ${offline ? "Hugging Face could not be reached" : message}; with no network, place the file at ${dest} (and set offline: true)`,
    { provider: o.provider, model: ref.uri, kind: offline ? "unreachable" : "fatal", attempts: 1 },
  );
}

/**
 * Downloads an `hf:` model into `models_dir` once (node-llama-cpp's downloader: resumable, ranged),
 * reporting progress, then verifies it — the size the server announced and a GGUF header — before it
 * is used; a file that fails verification is removed.
 */
export async function downloadModel(ref: HfModelRef, o: DownloadOptions): Promise<string> {
  const dest = join(o.modelsDir, ref.localName);
  const nlc = await importNodeLlamaCpp();
  mkdirSync(o.modelsDir, { recursive: true });
  const endpoint = o.env.HF_ENDPOINT || o.env.MODEL_ENDPOINT;
  const token = o.env.HF_TOKEN;
  let total = 0;
  let path: string;
  try {
    const downloader = await nlc.createModelDownloader({
      modelUri: ref.uri,
      dirPath: o.modelsDir,
      fileName: ref.localName,
      showCliProgress: false,
      skipExisting: true,
      deleteTempFileOnCancel: false, // an interrupted download resumes next time
      onProgress: ({ totalSize, downloadedSize }) => o.reporter.progress(ref.uri, downloadedSize, totalSize),
      ...(endpoint ? { endpoints: { huggingFace: endpoint.endsWith("/") ? endpoint : `${endpoint}/` } } : {}),
      ...(token ? { tokens: { huggingFace: token } } : {}),
    });
    total = downloader.totalSize;
    o.reporter.start(ref.uri, total, o.modelsDir);
    path = await downloader.download(o.signal ? { signal: o.signal } : {});
  } catch (e) {
    throw downloadFailure(e, ref, dest, o);
  }
  const size = statSync(path).size;
  if ((total > 0 && size !== total) || !hasGgufMagic(path)) {
    rmSync(path, { force: true });
    throw new ProviderError(
      `the download of ${ref.uri} is not a GGUF model (${size} bytes${total > 0 && size !== total ? `, ${total} announced` : ""}); it was removed: try again, or place the file at ${dest}`,
      { provider: o.provider, model: ref.uri, kind: "fatal", attempts: 1 },
    );
  }
  o.reporter.done(ref.uri, path, size);
  return path;
}
