import type { Defect, Scenario, Stage } from "./types.js";
import type { Seen } from "./request.js";
import { contains, norm, sameWords } from "./text.js";

/** The defects of the request's issue (none for an unknown issue). */
export function defectsOf(scenario: Scenario, seen: Seen): readonly Defect[] {
  const title = seen.issue?.title;
  return title === undefined ? [] : (scenario.issues?.[title] ?? []);
}

/**
 * The defect a concern is about: its text is one of the defect's wordings (or a word-for-word
 * repetition of one), or else its evidence quotes the defect's line.
 */
export function recognise(defects: readonly Defect[], c: { concern?: unknown; evidence?: unknown }): Defect | undefined {
  const concern = typeof c.concern === "string" ? c.concern : "";
  const byWords = defects.find((d) => d.wordings.some((w) => sameWords(w, concern)));
  if (byWords) return byWords;
  const evidence = typeof c.evidence === "string" ? c.evidence : "";
  if (norm(evidence).length < 12) return undefined;
  return defects.find((d) => contains(d.line, evidence) || (d.inCode !== undefined && contains(d.inCode, evidence)));
}

/** Whether a text still carries the defect (its line is there and its fix is not). */
export function carries(text: string, d: Defect): boolean {
  return contains(text, d.line) && !contains(text, d.fix);
}

export const STAGE_OF: Readonly<Record<string, Stage>> = {
  "discover.brief": "discover",
  "shape.writer": "shape",
  planner: "plan",
  "spec.ac_generator": "spec",
};

const DIMENSIONS = ["correctness", "edge_cases", "test_strategy", "scope_creep", "convention", "security", "reproduction"];

/** The plan reviewer's dimension for a defect. */
export function dimensionOf(d: { category?: string; dimension?: string }): string {
  if (d.dimension) return d.dimension;
  const c = (d.category ?? "").toLowerCase();
  const direct = DIMENSIONS.find((x) => c.includes(x));
  if (direct) return direct;
  if (/test/.test(c)) return "test_strategy";
  if (/secur|auth|privacy/.test(c)) return "security";
  if (/scope/.test(c)) return "scope_creep";
  if (/edge|limit|scal/.test(c)) return "edge_cases";
  return "correctness";
}
