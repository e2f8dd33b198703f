import { z } from "zod";
import { ground, groundingText } from "../adversarial/grounding.js";
import type { Concern, ConcernResolution, Finding } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import { isObject, lenientEnum, optionalText, readList, type Read } from "../contracts/lenient.js";
import { parseStructured, type Parsed } from "../models/json.js";
import { ACCEPTANCE_ROLE } from "./roles.js";

export { ACCEPTANCE_ROLE } from "./roles.js";

/** `met`, `not_met` or `cannot_tell` ("Not met", "NOT-MET" read as well). */
export const CRITERION_VERDICTS = ["met", "not_met", "cannot_tell"] as const;
export type CriterionVerdict = (typeof CRITERION_VERDICTS)[number];

/** One criterion's verdict: quote first, then the decision. */
export const CriterionCheck = z.object({
  criterion: z.string().trim().min(1),
  evidence: optionalText,
  verdict: lenientEnum(CRITERION_VERDICTS),
  reason: optionalText,
});
export type CriterionCheck = z.infer<typeof CriterionCheck>;

/** `addressed`, `not_addressed` or `cannot_tell` ("Not addressed", "NOT-ADDRESSED" read as well). */
export const CONCERN_VERDICTS = ["addressed", "not_addressed", "cannot_tell"] as const;
export type ConcernVerdict = (typeof CONCERN_VERDICTS)[number];

/**
 * One forwarded concern's verdict (docs/implement.md "Forwarded concerns"): a concern the plan
 * forwarded to implementation, by its id, with the line of the diff that answers it.
 */
export const ConcernCheck = z.object({
  id: z.preprocess((v) => (typeof v === "number" ? String(v) : v), z.string().trim().min(1)),
  evidence: optionalText,
  verdict: lenientEnum(CONCERN_VERDICTS),
  reason: optionalText,
});
export type ConcernCheck = z.infer<typeof ConcernCheck>;

/** `review.acceptance`'s reply (the JSON Schema sent as response_format). */
export const AcceptanceReply = z.object({ criteria: z.array(CriterionCheck) });
/** Its reply when it is given tracked concerns too: a verdict per criterion and per concern. */
export const SettlementReply = z.object({ criteria: z.array(CriterionCheck), concerns: z.array(ConcernCheck) });
export type AcceptanceReply = z.infer<typeof AcceptanceReply> & { concerns?: ConcernCheck[] };

/** A concern's verdict may name it `concern_id` (the producers' word) rather than `id`. */
const concernItem = (v: unknown): unknown => (isObject(v) && v.id === undefined && v.concern_id !== undefined ? { ...v, id: v.concern_id } : v);
/** An item of a bare list that is a concern's verdict, not a criterion's: it names a concern and no criterion. */
const isConcernItem = (v: unknown): boolean => isObject(v) && v.criterion === undefined && (v.id !== undefined || v.concern_id !== undefined);

/**
 * Reads the reply leniently: an item that is not a verdict is dropped and counted; a bare list is
 * the criteria — and, where its items name a concern (`id`, `concern_id`), the concerns.
 */
export function readAcceptanceReply(value: unknown): Read<AcceptanceReply> {
  let rawCriteria: unknown;
  let rawConcerns: unknown;
  if (Array.isArray(value)) {
    rawCriteria = value.filter((v) => !isConcernItem(v));
    rawConcerns = value.filter(isConcernItem);
  } else if (isObject(value)) {
    rawCriteria = value.criteria;
    rawConcerns = value.concerns ?? value.tracked_concerns;
    if (rawCriteria === undefined && rawConcerns === undefined) return { ok: false, error: "criteria: missing" };
  } else return { ok: false, error: "criteria: missing" };
  const criteria = readList(rawCriteria, CriterionCheck);
  if (!criteria) return { ok: false, error: "criteria: expected a list" };
  const concerns = readList(Array.isArray(rawConcerns) ? rawConcerns.map(concernItem) : rawConcerns, ConcernCheck);
  if (!concerns) return { ok: false, error: "concerns: expected a list" };
  const invalid = criteria.invalid + concerns.invalid;
  if (criteria.items.length + concerns.items.length === 0 && invalid > 0) return { ok: false, error: "criteria: no item is a verdict" };
  return {
    ok: true,
    value: { criteria: criteria.items, ...(concerns.items.length ? { concerns: concerns.items } : {}) },
    invalid,
    dropped: [...criteria.dropped, ...concerns.dropped],
  };
}

/** Parses `review.acceptance`'s reply; a JSON object quoted from the request is never the reply. */
export function parseAcceptance(answer: string, quotedFrom: readonly string[]): Parsed<AcceptanceReply> {
  return parseStructured(answer, readAcceptanceReply, { quotedFrom, arrays: true });
}

/** Matches the reply's checks to the criteria (by words, case and spacing ignored): every criterion gets one, `cannot_tell` when unanswered. */
export function verdictsFor(criteria: readonly string[], checks: readonly CriterionCheck[]): CriterionCheck[] {
  const key = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, " ")
      .trim();
  return criteria.map((criterion, i) => {
    const found = checks.find((c) => key(c.criterion) === key(criterion)) ?? checks[i];
    return found ? { ...found, criterion } : { criterion, verdict: "cannot_tell" as const, reason: "The reviewer gave no verdict for this criterion." };
  });
}

/**
 * The verdicts as findings for the tally (docs/implement.md): `not_met` is HIGH, `cannot_tell`
 * MEDIUM, `met` none. Each quotes the reviewer's evidence, so an unquoted `not_met` counts as MEDIUM.
 */
export function acceptanceFindings(verdicts: readonly CriterionCheck[]): Finding[] {
  const out: Finding[] = [];
  for (const v of verdicts) {
    if (v.verdict === "met") continue;
    out.push({
      ...(v.evidence ? { evidence: v.evidence } : {}),
      severity: v.verdict === "not_met" ? "HIGH" : "MEDIUM",
      category: "acceptance",
      concern:
        v.verdict === "not_met" ? `Acceptance criterion not met: ${v.criterion}` : `Cannot tell from the diff whether this criterion is met: ${v.criterion}`,
    });
  }
  // not_met first: a critic's first five findings are the ones counted.
  return out.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === "HIGH" ? -1 : 1));
}

/**
 * What the review made of one forwarded concern on the final attempt (docs/implement.md "Forwarded
 * concerns"). `addressed` only with its evidence grounded in the diff; `ungrounded` marks an
 * `addressed` whose quote is not in it, counted as `cannot_tell`.
 */
export interface Settlement {
  concern: Concern;
  verdict: ConcernVerdict;
  evidence?: string;
  reason?: string;
  /** The file of the diff its evidence quotes (an `addressed` one). */
  file?: string;
  ungrounded?: true;
}

const idKey = (s: string) => s.trim().toLowerCase();

/**
 * Matches the reply's concern verdicts to the tracked concerns by id (case ignored): every concern
 * gets one, `cannot_tell` when unanswered. An item naming no tracked concern stands for the concern
 * at its place among such items (a model that renumbered them).
 */
export function concernVerdictsFor(tracked: readonly Concern[], checks: readonly ConcernCheck[]): ConcernCheck[] {
  const ids = new Set(tracked.map((c) => idKey(c.id)));
  const strays = checks.filter((c) => !ids.has(idKey(c.id)));
  const unmatched = tracked.filter((c) => !checks.some((k) => idKey(k.id) === idKey(c.id)));
  return tracked.map((c) => {
    const found = checks.find((k) => idKey(k.id) === idKey(c.id)) ?? strays[unmatched.indexOf(c)];
    return found ? { ...found, id: c.id } : { id: c.id, verdict: "cannot_tell" as const, reason: "The reviewer gave no verdict for this concern." };
  });
}

const FILE_HEADER = /^(?:\+\+\+|---) /;
/** A diff's lines without their `+`, `-` or space marker: a quote over several lines of a hunk is found in it. */
const unmarked = (diff: string) =>
  diff
    .split("\n")
    .map((l) => (FILE_HEADER.test(l) ? l : /^[+\- ]/.test(l) ? l.slice(1) : l))
    .join("\n");
/** The code as the diff leaves it: its context and added lines, unmarked (a model quoting the new code across a removed line). */
const newSide = (diff: string) =>
  diff
    .split("\n")
    .filter((l) => FILE_HEADER.test(l) || !l.startsWith("-"))
    .map((l) => (FILE_HEADER.test(l) ? l : /^[+ ]/.test(l) ? l.slice(1) : l))
    .join("\n");

/** The diff cut into its files: each file's path (its new side) and its text. */
function diffFiles(diff: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const part of diff.split(/^(?=diff --git )/m)) {
    const path = /^\+\+\+ b\/(.+)$/m.exec(part)?.[1] ?? /^diff --git a\/\S+ b\/(\S+)/.exec(part)?.[1] ?? /^--- a\/(.+)$/m.exec(part)?.[1];
    if (path) out.push({ path, text: part });
  }
  return out;
}

/** Does an excerpt ground in a diff (docs/run.md "Grounding"): its lines with or without their markers, or the code as it leaves it? */
const groundsIn = (text: string, evidence: string) => [text, unmarked(text), newSide(text)].some((t) => ground(groundingText(t), evidence).grounded);

/**
 * The settlement of each tracked concern on the final attempt's diff (docs/implement.md "Forwarded
 * concerns"): the reviewer's `addressed` stands only when its evidence is grounded in the diff
 * itself (not the test output, not the plan); otherwise it counts as `cannot_tell`.
 */
export function settle(tracked: readonly Concern[], checks: readonly ConcernCheck[], diff: string): Settlement[] {
  return concernVerdictsFor(tracked, checks).map((v, i) => {
    const concern = tracked[i] as Concern;
    const said = { ...(v.evidence ? { evidence: v.evidence } : {}), ...(v.reason ? { reason: v.reason } : {}) };
    if (v.verdict !== "addressed") return { concern, verdict: v.verdict, ...said };
    if (!v.evidence || !groundsIn(diff, v.evidence)) return { concern, verdict: "cannot_tell", ...said, ungrounded: true };
    const file = diffFiles(diff).find((f) => groundsIn(f.text, v.evidence ?? ""))?.path;
    return { concern, verdict: "addressed", ...said, ...(file ? { file } : {}) };
  });
}

/** Every settlement `cannot_tell`: the review gave none for the final attempt (its acceptance critic failed, or the attempt was not put to the models). */
export const unsettled = (tracked: readonly Concern[], reason: string): Settlement[] => tracked.map((concern) => ({ concern, verdict: "cannot_tell", reason }));

/** A path of a test file: under a test folder, or named `*.test.*`, `*_spec.*`, `test.*`. */
const TEST_PATH = /(^|\/)(tests?|__tests__|specs?)\/|(^|[/._-])(tests?|specs?)\.[^/]+$/i;

/**
 * The ConcernAddressed events of the addressed settlements (docs/implement.md "Forwarded concerns"):
 * resolved by `review.acceptance`, addressed in a test when the quoted line is in a test file, its
 * note the file and the quote. The rest go on to the pull request unresolved.
 */
export function settlementEvents(issueId: string, settlements: readonly Settlement[], now: () => string): NewEvent[] {
  const out: NewEvent[] = [];
  for (const s of settlements) {
    if (s.verdict !== "addressed" || !s.evidence) continue;
    const resolution: ConcernResolution = {
      concern_id: s.concern.id,
      fingerprint: s.concern.fingerprint,
      resolution_kind: s.file && TEST_PATH.test(s.file) ? "addressed-in-test" : "addressed-in-code",
      note: `The diff${s.file ? ` (${s.file})` : ""}: "${s.evidence}"${s.reason ? ` — ${s.reason}` : ""}`,
      resolved_by: ACCEPTANCE_ROLE,
      resolved_at: now(),
    };
    out.push({ type: "ConcernAddressed", issue_id: issueId, resolution });
  }
  return out;
}
