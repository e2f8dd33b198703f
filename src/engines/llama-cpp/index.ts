/** The in-process GGUF engine (docs/local-engine.md): `type: llama-cpp` providers, node-llama-cpp loaded only when a model is. */
export {
  createLlamaEngines,
  DEFAULT_SEQUENCES,
  withEngineLimits,
  type EngineOptions,
  type EngineTarget,
  type KnownModel,
  type LlamaEngines,
  type Located,
} from "./engine.js";
export { formatBytes, silentReporter, streamReporter, type DownloadReporter, type TextSink } from "./progress.js";
export { isModelRef, parseModelRef, type ModelRef } from "./model-ref.js";
export { modelFileProblem } from "./model-file.js";
