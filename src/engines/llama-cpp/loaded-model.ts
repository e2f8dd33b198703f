import type { ChatHistoryItem, ChatWrapper, GbnfJsonSchema, LlamaContext, LlamaGrammar, LlamaModel } from "node-llama-cpp";
import pLimit from "p-limit";
import { DissentError, Interrupted } from "../../errors.js";
import { canonicalJson } from "../../hash.js";
import type { Binding } from "./binding.js";
import { toGrammarSchema } from "./json-schema.js";
import { loadFailure, settleLogs } from "./load-errors.js";

/** How one model is loaded: its file and the context its requests share. */
export interface ModelSettings {
  path: string;
  /** `providers.<name>`, named in error messages. */
  where: string;
  /** Tokens per sequence; default: what fits in memory, at most 8192 (and the model's training context). */
  contextSize?: number;
  /** Requests served at once: the context's sequences, batched into one decode. */
  sequences: number;
  threads?: number;
  /** Aborts loading (Ctrl-C, SIGTERM): node-llama-cpp stops reading the file and the load fails as interrupted. */
  signal?: AbortSignal;
  /** One line of what dissent noticed about the model (a chat template it cannot use), never node-llama-cpp's own console output. */
  warn?: (message: string) => void;
}

/** One request to a loaded model. */
export interface GenerateRequest {
  /** The chat, ending with the empty model turn to generate. */
  history: ChatHistoryItem[];
  /** A JSON reply: constrained by a grammar (the schema's, or any JSON object), with reasoning off. */
  json?: { schema?: unknown };
  maxTokens?: number;
  temperature: number;
  seed?: number;
  signal?: AbortSignal;
  /** Each piece of text as it is generated (streaming). */
  onText?: (text: string) => void;
}

/** What a request produced. */
export interface Generation {
  text: string;
  /** `length` when the reply was cut off at `maxTokens` (or the context's end). */
  finish: "stop" | "length";
  /** node-llama-cpp's own stop reason; `context-end:<tokens>` when the reply ran into the end of the context (not a max_tokens the caller set). */
  stopReason: string;
  /** Every token of the prompt; of them, `cachedInputTokens` were already in the sequence (a shared prefix reused, not evaluated again). */
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

/** A model loaded once and shared by every role routed to it (docs/local-engine.md). */
export interface LoadedModel {
  readonly path: string;
  readonly contextSize: number;
  readonly sequences: number;
  readonly trainContextSize: number;
  generate(request: GenerateRequest): Promise<Generation>;
  dispose(): Promise<void>;
}

/** The largest context the engine picks on its own (a user's context_size may go beyond). */
export const DEFAULT_MAX_CONTEXT = 8192;

/** Chat-wrapper settings that turn reasoning off: a structured reply is the JSON, never thoughts first. */
export const REASONING_OFF = {
  qwen: { thoughts: "discourage" },
  jinjaTemplate: { reasoning: false },
  gemma4: { reasoning: false },
  harmony: { reasoningEffort: "low" },
  seed: { thinkingBudget: 0 },
} as const;

/** The error of a load stopped by its signal: the signal's reason when it is one of ours (Interrupted naming the signal). */
function interrupted(signal: AbortSignal): DissentError {
  const reason: unknown = signal.reason;
  return DissentError.isInstance(reason) ? reason : new Interrupted("interrupted while loading the model");
}

/** Loads a model file and its context; a failure is one line naming the file and what to do. */
export async function loadModel(binding: Binding, s: ModelSettings): Promise<LoadedModel> {
  const { nlc, llama, logs } = binding;
  const site = { path: s.path, where: s.where, logs, mark: logs.mark(), ...(s.contextSize ? { contextSize: s.contextSize } : {}) };
  let model: LlamaModel;
  try {
    model = await llama.loadModel({ modelPath: s.path, ...(s.signal ? { loadSignal: s.signal } : {}) });
  } catch (e) {
    if (s.signal?.aborted) throw interrupted(s.signal);
    await settleLogs();
    throw loadFailure(e, site);
  }
  let context: LlamaContext;
  try {
    context = await model.createContext({
      contextSize: s.contextSize ?? { max: DEFAULT_MAX_CONTEXT },
      sequences: s.sequences,
      ...(s.threads ? { threads: s.threads } : {}),
      ...(s.signal ? { createSignal: s.signal } : {}),
    });
  } catch (e) {
    if (s.signal?.aborted) {
      await model.dispose();
      throw interrupted(s.signal);
    }
    await settleLogs();
    await model.dispose();
    throw loadFailure(e, site);
  }
  // A chat template node-llama-cpp cannot render is said once, in dissent's words, and a built-in chat
  // format is used: its own fallback would write the error and a stack to the console (issue 32).
  let templateProblem: string | undefined;
  const wrapperFor = (custom?: typeof REASONING_OFF): ChatWrapper => {
    const o = { warningLogs: false, ...(custom ? { customWrapperSettings: custom } : {}) };
    if (templateProblem === undefined) {
      try {
        return nlc.resolveChatWrapper(model, { ...o, fallbackToOtherWrappersOnJinjaError: false });
      } catch (e) {
        templateProblem = (e instanceof Error ? e.message : String(e)).split("\n")[0] ?? "";
        s.warn?.(
          `${s.where}: the chat template in ${s.path} cannot be used (${templateProblem.slice(0, 200)}): a built-in chat format is used instead, which may not be the model's own`,
        );
      }
    }
    return nlc.resolveChatWrapper(model, { ...o, noJinja: true });
  };
  const free: ChatWrapper = wrapperFor();
  const structured: ChatWrapper = wrapperFor(REASONING_OFF);
  const grammars = new Map<string, Promise<LlamaGrammar>>();
  const grammarFor = (json: { schema?: unknown }): Promise<LlamaGrammar> => {
    const key = json.schema === undefined ? "" : canonicalJson(json.schema);
    let g = grammars.get(key);
    if (!g) {
      g =
        json.schema === undefined
          ? llama.getGrammarFor("json")
          : llama.createGrammarForJsonSchema<GbnfJsonSchema>(toGrammarSchema(json.schema) as GbnfJsonSchema);
      g.catch(() => grammars.delete(key));
      grammars.set(key, g);
    }
    return g;
  };
  // One slot per sequence: a request waits here instead of failing with "No sequences left".
  const slot = pLimit(s.sequences);
  // Sequences are kept between calls: a request that starts as an earlier one did (the shared prefix
  // of a council round, docs/serve.md "Cost") evaluates only what follows it (node-llama-cpp compares
  // the sequence's tokens with the new prompt's and keeps the common start).
  type Sequence = ReturnType<typeof context.getSequence>;
  const idle: Sequence[] = [];
  let made = 0;
  /** The idle sequence holding the longest start of this prompt (and how many tokens of it), else a new one. */
  const takeSequence = (tokens: Parameters<Sequence["compareContextTokens"]>[0]): { sequence: Sequence; shared: number } => {
    let best = -1;
    let shared = 0;
    for (const [i, q] of idle.entries()) {
      const n = q.compareContextTokens(tokens).firstDifferentIndex;
      if (best === -1 || n > shared) [best, shared] = [i, n];
    }
    if (best !== -1 && (shared > 0 || made >= s.sequences))
      return { sequence: idle.splice(best, 1)[0] as Sequence, shared: Math.min(shared, tokens.length - 1) };
    made++;
    return { sequence: context.getSequence(), shared: 0 };
  };
  // Disposing stops whatever is still generating first (a caller that gave up, a test that timed out).
  const stopping = new AbortController();
  const contextSize = context.contextSize;

  return {
    path: s.path,
    contextSize,
    sequences: s.sequences,
    trainContextSize: model.trainContextSize,
    generate: (req) =>
      slot(async () => {
        const wrapper = req.json ? structured : free;
        const grammar = req.json ? await grammarFor(req.json) : undefined;
        const prompt = wrapper.generateContextState({ chatHistory: req.history }).contextText.tokenize(model.tokenizer);
        const promptTokens = prompt.length;
        // A prompt longer than the context would be cut from the front by a context shift: fail instead.
        if (promptTokens >= contextSize) {
          throw new Error(`the prompt is ${promptTokens} tokens, more than the model's context of ${contextSize}: raise ${s.where}.context_size`);
        }
        const room = contextSize - promptTokens;
        const maxTokens = Math.min(req.maxTokens ?? room, room);
        const { sequence, shared } = takeSequence(prompt);
        const chat = new nlc.LlamaChat({ contextSequence: sequence, chatWrapper: wrapper });
        const before = sequence.tokenMeter.getState();
        let kept = false;
        try {
          const r = await chat.generateResponse(req.history, {
            ...(grammar ? { grammar } : {}),
            maxTokens,
            temperature: req.temperature,
            ...(req.seed !== undefined ? { seed: req.seed } : {}),
            signal: req.signal ? AbortSignal.any([req.signal, stopping.signal]) : stopping.signal,
            ...(req.onText ? { onTextChunk: req.onText } : {}),
          });
          const after = sequence.tokenMeter.getState();
          const stopReason = r.metadata.stopReason;
          const evaluated = after.usedInputTokens - before.usedInputTokens;
          kept = true;
          // Cut where the context ends rather than at a limit the caller asked for: max_tokens is not what to raise.
          const contextEnd = stopReason === "maxTokens" && (req.maxTokens === undefined || req.maxTokens > room);
          return {
            text: r.response,
            finish: stopReason === "maxTokens" ? "length" : "stop",
            stopReason: contextEnd ? `context-end:${contextSize}` : stopReason,
            inputTokens: evaluated + shared,
            cachedInputTokens: shared,
            outputTokens: after.usedOutputTokens - before.usedOutputTokens,
          };
        } finally {
          chat.dispose({ disposeSequence: false });
          // A sequence whose call failed or was stopped may hold a half-evaluated state: it is not reused.
          if (kept && !stopping.signal.aborted) idle.push(sequence);
          else {
            made--;
            await sequence.dispose(); // the sequence's slot is free again only once this settles
          }
        }
      }),
    async dispose() {
      stopping.abort(new Error("the model was unloaded"));
      slot.clearQueue();
      await Promise.all(idle.splice(0).map((q) => q.dispose()));
      await context.dispose();
      await model.dispose();
    },
  };
}
