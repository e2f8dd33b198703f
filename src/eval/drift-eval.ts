import { z } from "zod";
import { unknownKeyMessage } from "../config/key-suggest.js";
import type { DriftToken } from "../contracts/audit.js";
import { UsageError } from "../errors.js";
import { readBounded } from "../files/read.js";
import { driftOfRevision } from "../gate/drift.js";
import { sha256 } from "../hash.js";
import { packagePath } from "../package-root.js";
import { DEFAULT_BOOTSTRAP, draws, ratio, type Estimate } from "./stats.js";

/**
 * `dissent eval drift` (docs/eval.md "Revision drift"; docs/adr/ADR-036): the revision-drift check
 * itself, measured on revisions a model really wrote, each labelled with the facts it added and the
 * figures and names it did not. Deterministic and call-free, like the check: no config, no model.
 */

/** What a revision added (`drift`, each to be flagged) and what it must not be blamed for (`not_drift`). */
export const DriftExpected = z
  .object({
    drift: z.array(z.string().min(1)),
    not_drift: z.array(z.string().min(1)).optional(),
  })
  .strict();

/** One labelled revision: the prompt, constraints and policies, the draft it rewrote, and the revision. */
export const DriftItem = z
  .object({
    id: z.string().min(1),
    /** Where the revision comes from (a recording, or the item it was constructed from). */
    source: z.string().optional(),
    prompt: z.string().min(1),
    constraints: z.array(z.string()).optional(),
    policies: z.array(z.string()).optional(),
    draft: z.string().min(1),
    revision: z.string().min(1),
    expected: DriftExpected,
    /** What the item exercises: derived, conversion, code_name, code_digit, code_keyword, number_word, replacement, unit, constructed. */
    cases: z.array(z.string().min(1)).optional(),
    note: z.string().optional(),
  })
  .strict();
export type DriftItem = z.infer<typeof DriftItem>;

export interface DriftSet {
  name: string;
  sha256: string;
  items: DriftItem[];
  total: number;
}

const MAX_SET_BYTES = 32 * 1024 * 1024;

/** Parses a drift set (a JSON list); the first error is one line naming the file and the item. */
export function parseDriftSet(text: string, name: string): DriftSet {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${name}: not valid JSON: ${(e as Error).message.split("\n")[0]}`);
  }
  if (!Array.isArray(raw)) throw new UsageError(`${name}: a set is a list of items (a JSON array)`);
  if (raw.length === 0) throw new UsageError(`${name}: the set has no items`);
  const items: DriftItem[] = [];
  const seen = new Set<string>();
  for (const [i, value] of raw.entries()) {
    const id = typeof (value as { id?: unknown })?.id === "string" ? (value as { id: string }).id : undefined;
    const where = `${name}: item ${id ? `'${id}' ` : ""}(#${i + 1})`;
    const parsed = DriftItem.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const what =
        issue?.code === "unrecognized_keys"
          ? unknownKeyMessage(DriftItem, issue.path, issue.keys[0] ?? "")
          : `${issue?.path.map(String).join(".") || "item"}: ${issue?.message ?? "invalid"}`;
      throw new UsageError(`${where}: ${what}`);
    }
    if (seen.has(parsed.data.id)) throw new UsageError(`${where}: duplicate id '${parsed.data.id}'`);
    seen.add(parsed.data.id);
    items.push(parsed.data);
  }
  return { name, sha256: sha256(text), items, total: items.length };
}

/** The bundled set: the revisions of evals/drift.json. */
export const BUNDLED_DRIFT = () => packagePath("evals", "drift.json");

/** Loads a drift set from a file, or the bundled one; `limit` keeps the first N items. */
export function loadDriftSet(file?: string, limit?: number, name: string = file ?? "bundled:drift.json"): DriftSet {
  const got = readBounded(file ?? BUNDLED_DRIFT(), MAX_SET_BYTES);
  if (!got.ok) throw new UsageError(`${name}: ${got.reason}`);
  const set = parseDriftSet(got.text, name);
  return limit === undefined ? set : { ...set, items: set.items.slice(0, limit) };
}

/** The words of a token as labels compare them: `resp.headers.get_content_charset` → resp, headers, get_content_charset. */
const wordsOf = (s: string) =>
  (
    s
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{N}_,]+/gu) ?? []
  ).map((w) => w.replace(/,$/, ""));
/** Is `part`'s run of words inside `whole`'s? */
function inside(part: readonly string[], whole: readonly string[]): boolean {
  if (part.length === 0 || part.length > whole.length) return false;
  for (let i = 0; i + part.length <= whole.length; i++) if (part.every((w, k) => whole[i + k] === w)) return true;
  return false;
}
/** A flagged token and a label are the same fact when one's words run inside the other's (`HTTPError` in `urllib.error.HTTPError`). */
export function sameFact(flagged: string, label: string): boolean {
  const a = wordsOf(flagged);
  const b = wordsOf(label);
  return inside(b, a) || inside(a, b);
}

/** What the check did with one revision. */
export interface DriftOutcome {
  id: string;
  cases: string[];
  flagged: DriftToken[];
  /** Labelled drift the check flagged, and what it let through. */
  caught: string[];
  missed: string[];
  /** Flagged tokens no label names as drift. */
  false_alarms: string[];
  /** `not_drift` labels the check flagged. */
  listed_false_alarms: string[];
}

export interface DriftReport {
  kind: "dissent.eval.drift";
  set: { name: string; sha256: string; items: number; total: number };
  bootstrap: { method: "percentile"; resamples: number; seed: number; confidence: number };
  metrics: {
    /** Flagged tokens that are labelled drift. */
    precision: Estimate;
    /** Labelled drift that was flagged. */
    recall: Estimate;
    /** Flagged revisions that hold labelled drift. */
    revision_precision: Estimate;
    /** Revisions holding labelled drift that were flagged. */
    revision_recall: Estimate;
    /** `not_drift` labels flagged. */
    listed_false_alarm_rate: Estimate;
    per_case: Record<string, { recall: Estimate; listed_false_alarm_rate: Estimate }>;
  };
  items: DriftOutcome[];
}

/** Scores one item: the drift check on its revision, against its labels. */
export function scoreDriftItem(item: DriftItem): DriftOutcome {
  const flagged = driftOfRevision(
    { prompt: item.prompt, draft: item.draft, constraints: item.constraints ?? [], policies: item.policies ?? [] },
    item.revision,
  );
  const texts = flagged.map((t) => t.text);
  const expected = item.expected.drift;
  const caught = expected.filter((e) => texts.some((t) => sameFact(t, e)));
  return {
    id: item.id,
    cases: item.cases ?? [],
    flagged,
    caught,
    missed: expected.filter((e) => !caught.includes(e)),
    false_alarms: texts.filter((t) => !expected.some((e) => sameFact(t, e))),
    listed_false_alarms: (item.expected.not_drift ?? []).filter((n) => texts.some((t) => sameFact(t, n))),
  };
}

/** Runs the check over a set and measures it; the same set always gives the same digits (seeded intervals). */
export function runDriftEval(set: DriftSet): DriftReport {
  const items = set.items.map(scoreDriftItem);
  const d = draws(items.length);
  const col = (f: (o: DriftOutcome, i: number) => number) => items.map(f);
  const labelled = (i: number) => set.items[i]?.expected.drift.length ?? 0;
  const listed = (i: number) => set.items[i]?.expected.not_drift?.length ?? 0;
  const flaggedTrue = (o: DriftOutcome) => o.flagged.length - o.false_alarms.length;
  const cases = [...new Set(items.flatMap((o) => o.cases))].sort();
  const perCase: DriftReport["metrics"]["per_case"] = {};
  for (const c of cases) {
    const has = (o: DriftOutcome) => (o.cases.includes(c) ? 1 : 0);
    perCase[c] = {
      recall: ratio(
        col((o) => has(o) * o.caught.length),
        col((o, i) => has(o) * labelled(i)),
        d,
      ),
      listed_false_alarm_rate: ratio(
        col((o) => has(o) * o.listed_false_alarms.length),
        col((o, i) => has(o) * listed(i)),
        d,
      ),
    };
  }
  return {
    kind: "dissent.eval.drift",
    set: { name: set.name, sha256: set.sha256, items: set.items.length, total: set.total },
    bootstrap: { method: "percentile", ...DEFAULT_BOOTSTRAP },
    metrics: {
      precision: ratio(
        col(flaggedTrue),
        col((o) => o.flagged.length),
        d,
      ),
      recall: ratio(
        col((o) => o.caught.length),
        col((_o, i) => labelled(i)),
        d,
      ),
      revision_precision: ratio(
        col((o) => (o.caught.length > 0 ? 1 : 0)),
        col((o) => (o.flagged.length > 0 ? 1 : 0)),
        d,
      ),
      revision_recall: ratio(
        col((o) => (o.caught.length > 0 ? 1 : 0)),
        col((_o, i) => (labelled(i) > 0 ? 1 : 0)),
        d,
      ),
      listed_false_alarm_rate: ratio(
        col((o) => o.listed_false_alarms.length),
        col((_o, i) => listed(i)),
        d,
      ),
      per_case: perCase,
    },
    items,
  };
}
