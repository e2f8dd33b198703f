/**
 * The one token estimate of the code context (docs/issue.md "The code the councils read"): UTF-16
 * characters ÷ 4, rounded up — the rule the call budget's cost estimate (src/models/call.ts) and the
 * model double use. It is deterministic and cheap; a real tokenizer counts code at about 3–3.5
 * characters a token, so a budget of N tokens is about 1.1–1.3 N of a model's own count (ADR-032).
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The characters a budget of `tokens` allows. */
export const charsFor = (tokens: number): number => Math.max(0, Math.floor(tokens)) * 4;
