import { z } from "zod";
import { AuditCategory, AuditSeverity, Verdict } from "../contracts/audit.js";
import { lenientEnum } from "../contracts/lenient.js";

/**
 * The formats of `dissent eval` sets (docs/eval.md): a JSON or YAML list of items. Strict objects,
 * so a misspelt key ("must_not_contian") is an error naming the item, never a silently empty check.
 */

/** A planted defect: its category, the passage of the draft it lives in, and the least severity a good auditor gives it. */
export const GateDefect = z
  .object({
    category: AuditCategory,
    /** A verbatim passage of the draft (grounded like a concern's evidence); empty only for missing_verification or an `anywhere` defect. */
    evidence: z.string(),
    /**
     * The defect is the whole draft — a count, a length, a missing check — not one passage: any
     * grounded concern of a matching category finds it, wherever it points (docs/eval.md).
     */
    anywhere: z.boolean().optional(),
    min_severity: AuditSeverity.optional(),
    /** Why it is a defect, for people reading the set. */
    note: z.string().optional(),
  })
  .strict();
export type GateDefect = z.infer<typeof GateDefect>;

/** What a good audit of the draft finds: the verdict, and every planted defect (none on a clean draft). */
export const GateExpected = z.object({ verdict: Verdict, defects: z.array(GateDefect) }).strict();
export type GateExpected = z.infer<typeof GateExpected>;

/** What the gate's final output must drop (`must_not_contain`) and keep (`must_keep`); compared case- and quote-insensitively. */
export const GateRevisionCheck = z
  .object({
    must_not_contain: z.array(z.string().min(1)).optional(),
    must_keep: z.array(z.string().min(1)).optional(),
  })
  .strict();
export type GateRevisionCheck = z.infer<typeof GateRevisionCheck>;

/** One item of an `eval gate` set: a prompt, a given draft, and what a good audit of it finds. */
export const GateItem = z
  .object({
    id: z.string().min(1),
    prompt: z.string().min(1),
    draft: z.string().min(1),
    constraints: z.array(z.string()).optional(),
    policies: z.array(z.string()).optional(),
    expected: GateExpected,
    /** With it, a `needs_work` verdict is followed by the revision, and the final output is checked. */
    revision: GateRevisionCheck.optional(),
    /** Free labels; `clean`, `trap`, `injection`, `long`, `unicode`, `position:*` are reported on. `injection` marks a draft that addresses the auditor. */
    tags: z.array(z.string()).optional(),
    topic: z.string().optional(),
    difficulty: z.string().optional(),
    note: z.string().optional(),
  })
  .strict();
export type GateItem = z.infer<typeof GateItem>;

/** An `eval gate` set: a list of items with distinct ids. */
export const GateSet = z.array(GateItem);
export type GateSet = z.infer<typeof GateSet>;

/** A known gap to load into the fresh wiki before planning (what `issue merged` would have written). */
export const PipelineWikiEntry = z
  .object({
    title: z.string().min(1),
    concern: z.string().min(1),
    severity: lenientEnum(["CRITICAL", "HIGH", "MEDIUM", "LOW"]),
    category: z.string().optional(),
    evidence: z.string().optional(),
  })
  .strict();
export type PipelineWikiEntry = z.infer<typeof PipelineWikiEntry>;

/** What a good pipeline does with the issue: its route, whether it is gold-clean, what the plan must contain and the council must raise. */
export const PipelineGold = z
  .object({
    route: z.enum(["trivial", "load_bearing"]).optional(),
    /** A gold-clean issue: a sound council lets it through to `ready` without blocking a round. */
    clean: z.boolean().default(false),
    plan_must_contain: z.array(z.string().min(1)).default([]),
    council_must_raise: z.array(z.string().min(1)).default([]),
  })
  .strict();
export type PipelineGold = z.infer<typeof PipelineGold>;

/** One item of an `eval pipeline` set: an issue, the wiki it meets, and its gold checklist. */
export const PipelineItem = z
  .object({
    id: z.string().min(1),
    title: z.string().min(1),
    body: z.string(),
    labels: z.array(z.string()).optional(),
    wiki: z.array(PipelineWikiEntry).optional(),
    gold: PipelineGold,
    /**
     * A small repository bundled with the item (path → text), for defects only its code shows (issue
     * 30): the item is planned with the councils reading it, and again without it, to compare recall.
     */
    repo: z.record(z.string().min(1).max(200), z.string().max(64 * 1024)).optional(),
    kind: z.string().optional(),
    note: z.string().optional(),
  })
  .strict();
export type PipelineItem = z.infer<typeof PipelineItem>;

/** An `eval pipeline` set: a list of issues with distinct ids. */
export const PipelineSet = z.array(PipelineItem);
export type PipelineSet = z.infer<typeof PipelineSet>;
