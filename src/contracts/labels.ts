import { UsageError } from "../errors.js";

/** The issue's place in the state machine (ADR-0002: labels are the state). */
export type StateLabel = "dissent-find" | "dissent-plan" | "dissent-ready" | "dissent-implementing" | "dissent-review" | "dissent-hitl" | "dissent-fixed";
/** Set while an adversarial phase runs, removed on every exit (ADR-0064). */
export type TransientLabel = "dissent-adv-discover-running" | "dissent-adv-shape-running" | "dissent-adv-plan-running";
/** Labels a person sets to steer the ComplexityGate. */
export type RoutingLabel = "dissent-load-bearing" | "dissent-trivial" | "dissent-typo" | "dissent-docs-only";

/** Every label dissent uses, with what GitHub shows for it. */
export const LABELS: Record<StateLabel | TransientLabel | RoutingLabel, { color: string; description: string }> = {
  "dissent-find": { color: "c5def5", description: "dissent: new, not yet planned" },
  "dissent-plan": { color: "1d76db", description: "dissent: being planned, or needs a re-plan" },
  "dissent-ready": { color: "0e8a16", description: "dissent: plan reviewed and ready to implement" },
  "dissent-implementing": { color: "fef2c0", description: "dissent: a coding agent is implementing the plan" },
  "dissent-review": { color: "bfd4f2", description: "dissent: implemented and reviewed; pull request open" },
  "dissent-hitl": { color: "d93f0b", description: "dissent: needs a human decision" },
  "dissent-fixed": { color: "5319e7", description: "dissent: merged" },
  "dissent-adv-discover-running": { color: "fbca04", description: "dissent: discovery council running" },
  "dissent-adv-shape-running": { color: "fbca04", description: "dissent: shape council running" },
  "dissent-adv-plan-running": { color: "fbca04", description: "dissent: plan council or spec judge running" },
  "dissent-load-bearing": { color: "b60205", description: "dissent: route through every adversarial stage" },
  "dissent-trivial": { color: "ededed", description: "dissent: trivial, skip the adversarial stages" },
  "dissent-typo": { color: "ededed", description: "dissent: typo fix, skip the adversarial stages" },
  "dissent-docs-only": { color: "ededed", description: "dissent: docs only, skip the adversarial stages" },
};

export const STATE_LABELS: readonly StateLabel[] = [
  "dissent-find",
  "dissent-plan",
  "dissent-ready",
  "dissent-implementing",
  "dissent-review",
  "dissent-hitl",
  "dissent-fixed",
];
export const TRANSIENT_LABELS: readonly TransientLabel[] = ["dissent-adv-discover-running", "dissent-adv-shape-running", "dissent-adv-plan-running"];

/** Legal moves of the state machine; `none` is an issue dissent has not seen yet. One table, read by every tracker. */
export const TRANSITIONS: Record<StateLabel | "none", readonly StateLabel[]> = {
  none: ["dissent-find", "dissent-plan", "dissent-fixed"],
  "dissent-find": ["dissent-plan", "dissent-fixed"],
  "dissent-plan": ["dissent-plan", "dissent-ready", "dissent-hitl", "dissent-fixed"],
  "dissent-ready": ["dissent-plan", "dissent-implementing", "dissent-fixed"],
  // docs/implement.md: an attempt resumes where it was; the review's outcome opens a PR, or needs a person.
  "dissent-implementing": ["dissent-implementing", "dissent-review", "dissent-hitl", "dissent-ready", "dissent-fixed"],
  "dissent-review": ["dissent-implementing", "dissent-plan", "dissent-fixed"],
  "dissent-hitl": ["dissent-plan", "dissent-implementing", "dissent-fixed"],
  "dissent-fixed": ["dissent-fixed"],
};

/** The state label an issue carries now (`none` if it has none). */
export function stateOf(labels: readonly string[]): StateLabel | "none" {
  return STATE_LABELS.find((l) => labels.includes(l)) ?? "none";
}

/** The label change that moves an issue to `to`; throws on an illegal move. */
export function transition(labels: readonly string[], to: StateLabel, issueId: string): { add: string[]; remove: string[] } {
  const from = stateOf(labels);
  if (!TRANSITIONS[from].includes(to)) {
    throw new UsageError(
      `issue ${issueId} is ${from}; it cannot move to ${to}${from === "dissent-fixed" ? " (remove the dissent-fixed label to plan it again)" : ""}`,
    );
  }
  return { add: labels.includes(to) ? [] : [to], remove: STATE_LABELS.filter((l) => l !== to && labels.includes(l)) };
}
