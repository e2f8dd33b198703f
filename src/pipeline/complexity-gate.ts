import { isFatal, messageOf } from "../errors.js";
import { stripThink } from "../models/json.js";
import type { TrackedIssue } from "../trackers/port.js";
import { excerptAt, issueProse } from "./issue-prose.js";

/** The ComplexityGate's decision, with its reason — recorded as a ComplexityGateRouted event. */
export interface GateDecision {
  route: "trivial" | "load_bearing";
  reason: string;
  source: "label" | "heuristic" | "model" | "fallback";
}

const TRIVIAL_LABELS = ["dissent-trivial", "dissent-typo", "dissent-docs-only"];

/** Words that mark an issue as load-bearing whatever else it says. */
const LOAD_BEARING =
  /\b(security|vulnerab\w*|auth|authn|authz|authenticat\w*|authoriz\w*|oauth|login|permission\w*|password\w*|secret\w*|credential\w*|token\w*|encrypt\w*|migrat\w*|schema\w*|database\w*|concurren\w*|race condition|deadlock\w*|payment\w*|billing|invoice\w*|api|breaking|data loss|corrupt\w*|performance|latency|crash\w*|outage\w*|production|rollback\w*|privacy|gdpr|architecture|refactor\w*)\b/i;
/**
 * The keyword rule reads the first 8 KiB of the body (docs/limits.md): a markdown parser's worst case
 * on hostile text grows faster than its length. What lies beyond is left to the model's answer, which
 * is given the whole issue; the heuristic never routes trivial, so nothing past the bound is missed.
 */
export const KEYWORD_SCAN_CHARS = 8 * 1024;

/** Labels first: a person's word beats any heuristic; load-bearing wins a tie. */
export function gateByLabels(labels: readonly string[]): GateDecision | undefined {
  if (labels.includes("dissent-load-bearing")) return { route: "load_bearing", reason: "label dissent-load-bearing", source: "label" };
  const trivial = TRIVIAL_LABELS.find((l) => labels.includes(l));
  return trivial ? { route: "trivial", reason: `label ${trivial}`, source: "label" } : undefined;
}

/**
 * Keyword heuristics (docs/issue.md): they may route to load_bearing, never to trivial — "Fix typo
 * in isAdmin check" changes behaviour. Only a label or the model's answer makes an issue trivial.
 * A keyword counts only in prose — never inside a URL, a code span or block, or an identifier (a
 * branch named `refactor-config` in a reproduction link, a variable named `api`) — and the reason
 * names the word, where it was and the sentence around it.
 */
export function gateByHeuristics(issue: Pick<TrackedIssue, "title" | "body">): GateDecision | undefined {
  for (const [where, markdown, inline] of [
    ["title", issue.title, true],
    ["body", issue.body.slice(0, KEYWORD_SCAN_CHARS), false],
  ] as const) {
    const { text, prose } = issueProse(markdown, inline);
    const heavy = LOAD_BEARING.exec(prose);
    if (heavy) {
      const excerpt = excerptAt(text, heavy.index, heavy[0].length);
      return { route: "load_bearing", reason: `keyword '${heavy[0].toLowerCase()}' in the ${where}: "${excerpt}"`, source: "heuristic" };
    }
  }
  return undefined;
}

/**
 * Reads the model's one-word answer: exactly TRIVIAL or LOAD-BEARING (any case, quotes, markdown
 * emphasis or a full stop around it). Anything else — "Not trivial.", a sentence — is doubt: undefined.
 */
export function parseGateReply(text: string): "trivial" | "load_bearing" | undefined {
  const word = stripThink(text)
    .trim()
    .replace(/^[\s*_`"'“”‘’]+|[\s*_`"'“”‘’.!]+$/g, "")
    .toUpperCase();
  if (/^LOAD[\s_-]?BEARING$/.test(word)) return "load_bearing";
  return word === "TRIVIAL" ? "trivial" : undefined;
}

/**
 * ComplexityGate (ADR-0064 "Routing"): labels, then keyword heuristics, then one model call
 * answering TRIVIAL or LOAD-BEARING. Any doubt or error routes load-bearing.
 */
export async function complexityGate(issue: TrackedIssue, ask: () => Promise<string>): Promise<GateDecision> {
  const decided = gateByLabels(issue.labels) ?? gateByHeuristics(issue);
  if (decided) return decided;
  try {
    const route = parseGateReply(await ask());
    if (route) return { route, reason: `model answered ${route === "trivial" ? "TRIVIAL" : "LOAD-BEARING"}`, source: "model" };
    return { route: "load_bearing", reason: "model answer unclear; load-bearing by default", source: "fallback" };
  } catch (e) {
    if (isFatal(e)) throw e;
    return { route: "load_bearing", reason: `gate call failed (${messageOf(e).split("\n")[0]}); load-bearing by default`, source: "fallback" };
  }
}
