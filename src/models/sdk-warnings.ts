import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamResult,
  SharedV3Warning,
} from "@ai-sdk/provider";

/**
 * The AI SDK's warnings (a feature the model does not support: `seed` on Anthropic, `temperature` on
 * OpenAI's reasoning models) as dissent reports them. Left to the SDK, the first one prints its
 * "AI SDK Warning System" notice with console.info — on stdout, which breaks `--json`. So every
 * model the call door sends to has its warnings taken off the result and handed to a sink
 * (docs/run.md "Warnings"), unless the program set `globalThis.AI_SDK_LOG_WARNINGS` itself: a
 * library user's own choice (false, or a function) wins.
 */

/** Where one formatted warning line goes (the CLI: stderr as `dissent: warning: …`). */
export type WarningSink = (message: string) => void;

/** One warning as a line naming the configured provider and model. */
export function formatSdkWarning(w: SharedV3Warning, provider: string, model: string): string {
  const who = `provider '${provider}' (${model})`;
  const details = (d: string | undefined) => (d ? `: ${d}` : "");
  switch (w.type) {
    case "unsupported":
      return `${who} does not support "${w.feature}", so the AI SDK left it out${details(w.details)}`;
    case "compatibility":
      return `${who} uses "${w.feature}" in a compatibility mode${details(w.details)}`;
    case "other":
      return `${who}: ${w.message}`;
    default:
      return `${who}: ${JSON.stringify(w)}`;
  }
}

/** A sink that passes each distinct message once: a warning on every call of a run is said once. */
export function onceEach(sink: WarningSink): WarningSink {
  const seen = new Set<string>();
  return (message) => {
    if (seen.has(message)) return;
    seen.add(message);
    sink(message);
  };
}

/** The warnings of one call, sent where the program's own AI SDK setting says, else to `sink`. */
export function reportSdkWarnings(
  warnings: readonly SharedV3Warning[],
  who: { provider: string; model: string; sdk: LanguageModelV3 },
  sink: WarningSink,
): void {
  if (warnings.length === 0) return;
  const own = globalThis.AI_SDK_LOG_WARNINGS;
  if (own === false) return;
  if (typeof own === "function") {
    own({ warnings: [...warnings], provider: who.sdk.provider, model: who.sdk.modelId });
    return;
  }
  for (const w of warnings) sink(formatSdkWarning(w, who.provider, who.model));
}

/**
 * A v3 model whose generate calls hand their warnings to the sink and give the SDK none to log. The
 * call door only generates (never streams), so a stream passes through untouched. Written out rather
 * than built with `wrapLanguageModel`: its wrapper adds four async hops, two closures and a copy of
 * every result to each call, for a middleware that reads one field; this is one small object per
 * attempt and one await (ADR-026c, "runAudit, third pass").
 */
export class QuietModel implements LanguageModelV3 {
  readonly specificationVersion = "v3";
  readonly provider: string;
  readonly modelId: string;
  readonly #who: { provider: string; model: string; sdk: LanguageModelV3 };
  readonly #sink: WarningSink;

  constructor(sdk: LanguageModelV3, configured: { provider: string; model: string }, sink: WarningSink) {
    this.provider = sdk.provider;
    this.modelId = sdk.modelId;
    this.#who = { provider: configured.provider, model: configured.model, sdk };
    this.#sink = sink;
  }

  /** The model's own: read when the SDK asks, as the wrapped model would answer it. */
  get supportedUrls(): LanguageModelV3["supportedUrls"] {
    return this.#who.sdk.supportedUrls;
  }

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const result = await this.#who.sdk.doGenerate(options);
    reportSdkWarnings(result.warnings, this.#who, this.#sink);
    // No warnings: the result as it came (nothing for the SDK to log, nothing to copy).
    return result.warnings.length === 0 ? result : { ...result, warnings: [] };
  }

  doStream(options: LanguageModelV3CallOptions): PromiseLike<LanguageModelV3StreamResult> {
    return this.#who.sdk.doStream(options);
  }
}
