import type { LanguageModelV3, LanguageModelV3Middleware, SharedV3Warning } from "@ai-sdk/provider";

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
 * A middleware that hands a generate call's warnings to `report` and gives the SDK none to log. The
 * call door only generates (never streams), so `wrapStream` is not needed.
 */
export function warningsMiddleware(report: (warnings: readonly SharedV3Warning[]) => void): LanguageModelV3Middleware {
  return {
    specificationVersion: "v3",
    async wrapGenerate({ doGenerate }) {
      const result = await doGenerate();
      report(result.warnings);
      return { ...result, warnings: [] };
    },
  };
}
