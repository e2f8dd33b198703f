import { z } from "zod";

/**
 * What the councils read of the code (issue 30, ADR-032; docs/issue.md "The code the councils read"):
 * where a finding's code quote sits, and what each role of a stage was given, as the StageRun records it.
 */

/** The file and lines of the code block a finding's evidence quotes (docs/issue.md "Findings about the code"). */
export const CodeLocation = z.object({ path: z.string(), start_line: z.number().int(), end_line: z.number().int() });
export type CodeLocation = z.infer<typeof CodeLocation>;

/** One thing a selection chose: a map entry, an excerpt of a file, or a chunk of a context file; its rank and why. */
export const ContextItem = z.object({
  path: z.string(),
  kind: z.enum(["map", "excerpt", "file_chunk"]),
  start_line: z.number().int().optional(),
  end_line: z.number().int().optional(),
  rank: z.number().int(),
  /** The seeds (paths, identifiers, terms of the issue) it matched. */
  terms: z.array(z.string()),
  tokens: z.number().int(),
  why: z.string(),
});
export type ContextItem = z.infer<typeof ContextItem>;

/**
 * One code block of a stage: the roles whose requests carried it (the same bytes for each), its size
 * in estimated tokens, a digest of its text, and what it holds. A stage records one per distinct block.
 */
export const StageContext = z.object({
  roles: z.array(z.string()),
  tokens: z.number().int(),
  digest: z.string(),
  items: z.array(ContextItem),
});
export type StageContext = z.infer<typeof StageContext>;
