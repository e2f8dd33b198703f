import { rngFor } from "./prng.js";
import type { Defect, Stage } from "./types.js";
import { firstSentence } from "./text.js";

/** What a producer writes: the issue's words in a stage's template, with its stage's defect lines (or their fixes). */
export interface ArtifactInput {
  seed: number;
  stage: Stage;
  title: string;
  body: string;
  /** The defects of this stage, in scenario order. */
  own: readonly Defect[];
  /** Ids of defects whose fix replaces their line. */
  fixed: ReadonlySet<string>;
  /** Earlier-stage defects whose fix this producer writes in (it was given their concern). */
  carried: readonly Defect[];
}

const lineOf = (d: Defect, fixed: ReadonlySet<string>) => (fixed.has(d.id) ? d.fix : d.line);

/** The markdown artifact of a producer stage (discover, shape, plan). Same input, same bytes. */
export function renderArtifact(a: ArtifactInput): string {
  // The skeleton is chosen per issue and stage, not per request: a redraft changes only what it fixes.
  const rng = rngFor(a.seed, "skeleton", a.stage, a.title);
  const title = a.title || "the reported problem";
  const problem = firstSentence(a.body) || `The issue asks: ${title}.`;
  const defects = a.own.map((d) => `- ${lineOf(d, a.fixed)}`);
  const carried = a.carried.length ? ["", "## Constraints carried forward", ...a.carried.map((d) => `- ${d.fix}`)] : [];
  switch (a.stage) {
    case "discover":
      return [
        `# Brief: ${title}`,
        "",
        "## Problem",
        problem,
        "",
        "## Who is affected",
        `- ${rng.pick([
          "Everyone who uses the part of the product the issue names.",
          "The users who hit this in day-to-day work, and the on-call engineers who field their reports.",
          "Customers on every plan; the issue does not say it is limited to one.",
        ])}`,
        "",
        "## Assumptions",
        "- The behaviour the issue describes happens on the current release.",
        ...defects,
        ...carried,
        "",
        "## Success signal",
        `- ${rng.pick([`The reporter confirms that "${title}" is resolved.`, `A regression test for "${title}" passes in CI.`])}`,
      ].join("\n");
    case "shape":
      return [
        `# Shape: ${title}`,
        "",
        "## Approach",
        `- ${rng.pick(["Keep the change inside the module the issue names; no new services.", "Change the existing code path rather than adding a parallel one."])}`,
        ...defects,
        ...carried,
        "",
        "## Scope",
        `- In: ${title}.`,
        "- Out: redesigning neighbouring features.",
        "",
        "## Risks",
        `- ${rng.pick(["Existing users may rely on today's behaviour; the release notes say what changes.", "Callers that depend on the current behaviour need a note in the changelog."])}`,
      ].join("\n");
    case "plan":
      return [
        `# Plan: ${title}`,
        "",
        "## Context",
        problem,
        "",
        "## Steps",
        `- Write a failing test that reproduces the issue: ${title}.`,
        ...defects,
        "- Implement the smallest change that makes the test pass.",
        "- Update the documentation and the changelog.",
        ...carried,
        "",
        "## Tests",
        `- ${rng.pick(["Unit tests for the changed functions, and one end-to-end test of the user-visible behaviour.", "One regression test per reported symptom, run in CI on every pull request."])}`,
        "",
        "## Rollout",
        `- ${rng.pick(["Release in the next minor version and watch the error rate for a day.", "Ship in the next release; the change can be reverted on its own."])}`,
      ].join("\n");
    case "spec":
      return renderCriteria(a)
        .map((c) => `- ${c}`)
        .join("\n");
  }
}

/** The acceptance criteria of the spec stage. */
export function renderCriteria(a: ArtifactInput): string[] {
  const title = a.title || "the reported problem";
  return [
    `An automated test reproduces the scenario of the issue ("${title}") and passes.`,
    ...a.own.map((d) => lineOf(d, a.fixed)),
    ...a.carried.map((d) => d.fix),
    "Behaviour outside the change is unchanged: the existing test suite passes.",
  ];
}
