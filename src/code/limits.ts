import type { CodeLimits } from "./types.js";

/** The map's bounds by default (docs/limits.md; `context.map.*` sets them). */
export const DEFAULT_CODE_LIMITS: CodeLimits = {
  maxFiles: 5000,
  maxFileBytes: 256 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
  parseMs: 2000,
};

/** The default `context.budget_tokens`: tokens of code per request. */
export const DEFAULT_BUDGET_TOKENS = 6000;
