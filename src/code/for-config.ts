import type { Config } from "../contracts/config.js";
import { Interrupted, isFatal, messageOf } from "../errors.js";
import type { CodeIndexCache } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import { openRepoMap } from "./build.js";
import type { GitHubTreeReader, RepoMap, RepoSource } from "./types.js";

/** What codeContextFor needs besides the config. */
export interface CodeContextDeps {
  /** The store's code index (a second issue on the same commit parses nothing); none: parse every time. */
  cache?: CodeIndexCache;
  /** The run's tracker: the GitHub tracker reads a repository with no checkout. */
  tracker?: Tracker;
  /** A GitHub reader of its own (when there is no GitHub tracker at hand). */
  reader?: GitHubTreeReader;
  signal?: AbortSignal;
  /** One line when the repository cannot be mapped (the run goes on without its code). */
  warn?: (message: string) => void;
}

/** A tracker that can read a repository's trees and blobs (the GitHub tracker). */
const readerOf = (t: Tracker | undefined): GitHubTreeReader | undefined =>
  t && "treeReader" in t && typeof t.treeReader === "function" ? (t.treeReader as () => GitHubTreeReader)() : undefined;

/**
 * The map of the repository the config names (`project.repo`, docs/configuration.md), or null when
 * it names none — then nothing changes anywhere. A repository that cannot be read (git missing, a
 * GitHub error) costs one warning and the run goes on without code; an interrupt or a fatal error
 * (a refused token, a store that is gone) stops the run as it would anywhere.
 */
export async function codeContextFor(config: Config, deps: CodeContextDeps = {}): Promise<RepoMap | null> {
  const src = config.code.source;
  if (!src) return null;
  let source: RepoSource;
  if (src.kind === "local") source = { kind: "local", root: src.root };
  else {
    const reader = deps.reader ?? readerOf(deps.tracker);
    if (!reader) {
      deps.warn?.(`the repository ${src.repo} is read through the GitHub tracker, which this command has not opened: planning without its code`);
      return null;
    }
    source = { kind: "github", repo: src.repo, reader };
  }
  try {
    return await openRepoMap(source, {
      ...(deps.cache ? { cache: deps.cache } : {}),
      limits: config.code.limits,
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
  } catch (e) {
    if (deps.signal?.aborted || isFatal(e) || Interrupted.isInstance(e)) throw e;
    const where = src.kind === "local" ? src.root : src.repo;
    deps.warn?.(`the repository ${where} (project.repo) could not be mapped (${messageOf(e).split("\n")[0]}): planning without its code`);
    return null;
  }
}
