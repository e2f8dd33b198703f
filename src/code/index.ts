/**
 * src/code: the repository map and the code each council reads (issue 30, ADR-032; docs/issue.md
 * "The code the councils read"). openRepoMap builds (or reads back from the store's code index) the
 * map of a checkout or of a GitHub branch; selectContext and diffContext choose the code a request
 * carries under a token budget; locateQuote says which excerpt a quoted line comes from.
 */
export { openRepoMap } from "./build.js";
export { diffContext, changedLines } from "./diff.js";
export { locateQuote } from "./locate.js";
export { selectContext } from "./select.js";
export { extractSeeds } from "./seeds.js";
export { estimateTokens } from "./tokens.js";
export { memoryCodeIndex } from "./memory-index.js";
export { DEFAULT_BUDGET_TOKENS, DEFAULT_CODE_LIMITS } from "./limits.js";
export { QUERY_VERSION } from "./queries.js";
export type {
  ChosenItem,
  CodeContext,
  CodeIndexCache,
  CodeIndexStats,
  CodeLimits,
  ContextQuery,
  Definition,
  GitHubTreeReader,
  GitTree,
  GitTreeEntry,
  RepoFile,
  RepoMap,
  RepoSource,
  Seeds,
  SkippedCounts,
} from "./types.js";
export { codeContextFor, type CodeContextDeps } from "./for-config.js";
