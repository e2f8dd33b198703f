import { groundingText } from "../adversarial/grounding.js";
import type { CodeEvidence } from "../adversarial/code-grounding.js";
import type { StageContext } from "../contracts/code-context.js";
import type { NewEvent } from "../contracts/events.js";
import { diffContext } from "../code/diff.js";
import { locateQuote } from "../code/locate.js";
import { selectContext } from "../code/select.js";
import type { CodeContext, RepoMap } from "../code/types.js";
import { sha256 } from "../hash.js";

/**
 * The code the roles of a council read (issue 30, ADR-032; docs/issue.md "The code the councils
 * read"): one selection of the repository map — and of `project.context_files`, ranked with the code
 * — for what a stage is about, under the role's token budget (`context.budget_tokens`,
 * `context.roles`). Selections are pure functions of their inputs and memoised, so every call of a
 * stage (the same texts, the same budget) carries a byte-identical code block.
 */

/** A selection as a request carries it: the block's text, the selection behind it, and the block as evidence. */
export interface CodeSelection {
  text: string;
  tokens: number;
  context: CodeContext;
  evidence: CodeEvidence;
}

/** What the pipeline asks of the code: a selection for some texts, or the code around a diff. */
export interface CodeSource {
  /** Where the code comes from, for messages (a folder, owner/name@branch, or the context files). */
  where: string;
  /** The code a request of `role` carries about these texts (the issue, the artifacts, the draft); undefined when there is none. */
  forTexts(role: string, texts: readonly string[]): CodeSelection | undefined;
  /** The definitions a diff changes and their callers, then what `texts` (the plan) name: the implement review's code. */
  aroundDiff(role: string, diff: string, texts: readonly string[]): CodeSelection | undefined;
}

/** Selections kept per source: a stage asks for a handful (producer, critics, verifier), a run for a few dozen. */
const MEMO = 64;

/** A map of no files: context files alone are ranked and chunked the same way. */
export function emptyMap(where: string): RepoMap {
  return {
    commit: null,
    where,
    files: 0,
    languages: {},
    skipped: { ignored: 0, binary: 0, vendored: 0, generated: 0, too_large: 0, over_count: 0 },
    builtAt: "",
    fromCache: false,
    parsed: 0,
    reused: 0,
    dirty: false,
    index: { files: [], byPath: new Map() },
  };
}

const asSelection = (context: CodeContext): CodeSelection | undefined =>
  context.text.trim() === ""
    ? undefined
    : {
        text: context.text,
        tokens: context.tokens,
        context,
        evidence: { key: context.digest, text: groundingText(context.text), locate: (e) => locateQuote(context, e) },
      };

/**
 * The code source of a run: the repository's map (null: none configured or it could not be read),
 * `project.context_files` as extra sources, and each role's budget. Undefined when there is neither:
 * then requests are as they were before the councils read code.
 */
export function codeSourceOf(
  map: RepoMap | null,
  contextFiles: readonly { path: string; text: string }[],
  budgetFor: (role: string) => number,
): CodeSource | undefined {
  const extra = contextFiles.filter((f) => f.text.trim() !== "");
  if (!map && extra.length === 0) return undefined;
  const repo = map ?? emptyMap("project.context_files");
  const memo = new Map<string, CodeSelection | undefined>();
  const remember = (key: string, make: () => CodeSelection | undefined) => {
    if (memo.has(key)) return memo.get(key);
    const got = make();
    if (memo.size >= MEMO) memo.delete(memo.keys().next().value as string);
    memo.set(key, got);
    return got;
  };
  return {
    where: repo.where,
    forTexts(role, texts) {
      const budget = budgetFor(role);
      if (budget <= 0) return undefined;
      return remember(`t\0${budget}\0${sha256(texts.join("\0"))}`, () =>
        asSelection(selectContext(repo, { texts, ...(extra.length ? { extraSources: extra } : {}) }, { budgetTokens: budget })),
      );
    },
    aroundDiff(role, diff, texts) {
      const budget = budgetFor(role);
      if (budget <= 0) return undefined;
      // The map is of the user's checkout: the diff's base side (the agent's change is not in it).
      return remember(`d\0${budget}\0${sha256(`${diff}\0${texts.join("\0")}`)}`, () =>
        asSelection(
          map
            ? diffContext(repo, diff, { budgetTokens: budget, texts, side: "old" })
            : selectContext(repo, { texts: [...texts, diff], extraSources: extra }, { budgetTokens: budget }),
        ),
      );
    },
  };
}

/**
 * What a stage's requests carried, for its StageRun (`code_context`): one entry per distinct block,
 * with the roles that read it, in the order they first did.
 */
export class ContextLedger {
  private readonly byDigest = new Map<string, { roles: string[]; sel: CodeSelection }>();

  note(role: string, sel: CodeSelection | undefined): void {
    if (!sel) return;
    const got = this.byDigest.get(sel.context.digest);
    if (!got) this.byDigest.set(sel.context.digest, { roles: [role], sel });
    else if (!got.roles.includes(role)) got.roles.push(role);
  }

  /** Puts what the stage read on its record: the StageRun and the stage's AdversarialStageCompleted event. */
  record(stageRun: { code_context?: StageContext[] }, events: NewEvent[]): void {
    const read = this.entries();
    if (!read.length) return;
    stageRun.code_context = read;
    for (const e of events) if (e.type === "AdversarialStageCompleted") e.stage_run = { ...e.stage_run, code_context: read };
  }

  entries(): StageContext[] {
    return [...this.byDigest.values()].map(({ roles, sel }) => ({
      roles,
      tokens: sel.tokens,
      digest: sel.context.digest,
      items: sel.context.chosen.map((c) => ({
        path: c.path,
        kind: c.kind,
        ...(c.start_line !== undefined ? { start_line: c.start_line } : {}),
        ...(c.end_line !== undefined ? { end_line: c.end_line } : {}),
        rank: c.rank,
        terms: c.terms,
        tokens: c.tokens,
        why: c.why,
      })),
    }));
  }
}
