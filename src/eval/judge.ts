import type { CallRecord } from "../contracts/audit.js";
import type { Config } from "../contracts/config.js";
import { isFatal, messageOf, ProviderError } from "../errors.js";
import { callModel } from "../models/call.js";
import { resolvedModel } from "../models/router.js";
import type { CallContext, ModelRequest } from "../models/types.js";
import { STAGES } from "../pipeline/stages.js";
import { dataBlock } from "../prompting/data-block.js";
import { promptFile } from "../prompts.js";

/** The role that judges checklist coverage (routes: `eval.judge` → `eval` → `default`). */
export const JUDGE_ROLE = "eval.judge";

/** What the document under judgment is. */
export type JudgedDocument = "plan" | "council_concerns";

/** The judge's request: the prompt file, the document and the checklist item as data, and the task restated last. */
export function judgeRequest(kind: JudgedDocument, document: string, item: string): ModelRequest {
  const f = promptFile("prompts/eval-judge.md");
  const what = kind === "plan" ? "the plan" : "the concerns the council raised";
  return {
    system: f.text,
    messages: [
      {
        role: "user",
        content: [
          dataBlock(kind === "plan" ? "plan" : "council_concerns", document),
          dataBlock("checklist_item", item),
          `Task: does ${what} cover the checklist item? Answer with one word: YES or NO.`,
        ].join("\n\n"),
      },
    ],
    promptFile: { name: f.name, hash: f.hash },
  };
}

const YES = new Set(["yes", "y", "true", "covered"]);
const NO = new Set(["no", "n", "false"]);

/**
 * Reads a one-word answer leniently: case, markdown and punctuation are ignored; the first word
 * decides ("**Yes.**", "NO — the plan…"); failing that, a reply holding exactly one of the words
 * "yes" and "no" ("The answer is YES"). Anything else is unreadable (null), never a guess.
 */
export function readJudgeAnswer(answer: string): boolean | null {
  const words = answer
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, " ")
    .split(/\s+/)
    .filter(Boolean);
  const first = words[0];
  if (first && YES.has(first)) return true;
  if (first && NO.has(first)) return false;
  const yes = words.includes("yes");
  const no = words.includes("no");
  return yes !== no ? yes : null;
}

/** One checklist item judged: covered (or null), the judge's answer as received, and its call. */
export interface Judgment {
  covered: boolean | null;
  answer: string;
  records: CallRecord[];
}

/** Asks the judge about one checklist item; a failed call is an unreadable judgment, never a "no" (what ends a run still does). */
export async function judge(calls: CallContext, kind: JudgedDocument, document: string, item: string): Promise<Judgment> {
  try {
    const reply = await callModel({ role: JUDGE_ROLE }, judgeRequest(kind, document, item), calls);
    const answer = reply.answer.trim();
    return { covered: readJudgeAnswer(answer), answer: answer.length > 200 ? `${answer.slice(0, 197)}...` : answer, records: [reply.record] };
  } catch (e) {
    if (isFatal(e)) throw e;
    return { covered: null, answer: `(call failed: ${messageOf(e).split("\n")[0]})`, records: ProviderError.isInstance(e) ? (e.calls as CallRecord[]) : [] };
  }
}

/** Every role that votes on an issue's artifacts: the stages' critics and the plan reviewer. */
export const COUNCIL_ROLES: readonly string[] = [...new Set([...STAGES.flatMap((s) => s.critics), "plan_reviewer"])];

/** A one-line warning when the judge resolves to the same model as a critic (docs/eval.md): a model grading its own council is weak evidence. */
export function judgeSameModelWarning(config: Config): string | undefined {
  const judge = resolvedModel(config, JUDGE_ROLE);
  if (!judge) return undefined;
  const judgeModel = judge.shown;
  const same = COUNCIL_ROLES.filter((r) => resolvedModel(config, r)?.key === judge.key);
  if (same.length === 0) return undefined;
  const who =
    same.length === 1
      ? same[0]
      : same.length === COUNCIL_ROLES.length
        ? "every critic"
        : `${same.length} critics (${same.slice(0, 3).join(", ")}${same.length > 3 ? ", …" : ""})`;
  return `eval pipeline: ${JUDGE_ROLE} uses the same model as ${who} (${judgeModel}); a model grading its own council's work is weak evidence — route ${JUDGE_ROLE} to another model family`;
}
