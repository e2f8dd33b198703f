import { renderArtifact, renderCriteria, type ArtifactInput } from "./artifacts.js";
import type { Ctx } from "./context.js";
import { renderJson, thinkBlock, writeJson } from "./format.js";
import { block, concernsIn, type GivenConcern, type Seen } from "./request.js";
import { contains } from "./text.js";
import type { Defect, Stage } from "./types.js";
import { defectsOf, recognise, STAGE_OF } from "./world.js";

const ORDER: readonly Stage[] = ["discover", "shape", "plan", "spec"];

interface Addressed {
  concern_id: string;
  resolution_kind: "trivial" | "deferred" | "addressed-in-code" | "addressed-in-test" | "ignored";
  note: string;
}

interface Draft {
  input: ArtifactInput;
  addressed: Addressed[];
  decisions: string[];
  /** The producer was given concerns and answers them. */
  answers: boolean;
}

/** Every concern the producer was given: the retry's blocking ones first, then the pending ones. */
function givenConcerns(seen: Seen): GivenConcern[] {
  const all = [
    ...seen.lastBlocks.filter((b) => b.kind === "blocking_concerns").flatMap((b) => concernsIn(b.text)),
    ...seen.blocks.filter((b) => b.kind === "pending_concerns").flatMap((b) => concernsIn(b.text)),
  ];
  const seenIds = new Set<string>();
  return all.filter((c) => !seenIds.has(c.id) && seenIds.add(c.id));
}

/** Works out what a producer writes: which defects it fixes, carries forward or leaves, and what it reports. */
function draft(ctx: Ctx, seen: Seen, role: string): Draft {
  const stage = STAGE_OF[role] ?? "plan";
  const defects = defectsOf(ctx.scenario, seen);
  const own = defects.filter((d) => d.stage === stage && !d.code); // a code defect is the agent's to write
  const earlier = (d: Defect) => ORDER.indexOf(d.stage) < ORDER.indexOf(stage);
  const prev = seen.assistant ?? "";
  const fixed = new Set(own.filter((d) => prev !== "" && contains(prev, d.fix)).map((d) => d.id));
  const carried: Defect[] = defects.filter((d) => earlier(d) && prev !== "" && contains(prev, d.fix));
  const concerns = givenConcerns(seen);
  const ignoring = concerns.length > 0 && ctx.dice.on("producerIgnores");
  const claimsIgnored = ctx.dice.on("producerClaimsIgnored");
  const addressed: Addressed[] = [];
  const decisions: string[] = [];
  if (!ignoring) {
    for (const c of concerns) {
      const d = recognise(defects, c);
      if (!d || !(d.stage === stage || earlier(d))) {
        const note = "Not changed: nothing in the issue supports a change here; left for the reviewer.";
        addressed.push({ concern_id: c.id, resolution_kind: "deferred", note });
        decisions.push(`- ${c.id}: ${note}`);
        continue;
      }
      if (claimsIgnored && c.severity.toUpperCase() === "CRITICAL") {
        const note = "Kept as written: the risk is acceptable for a first version.";
        addressed.push({ concern_id: c.id, resolution_kind: "ignored", note });
        decisions.push(`- ${c.id}: ${note}`);
        continue;
      }
      if (d.stage === stage) fixed.add(d.id);
      else if (!carried.includes(d)) carried.push(d);
      const kind = /test/i.test(d.category) ? "addressed-in-test" : "addressed-in-code";
      addressed.push({ concern_id: c.id, resolution_kind: kind, note: `Now: ${d.fix}` });
      decisions.push(`- ${c.id}: ${d.stage === stage ? "changed to" : "added"} "${d.fix}"`);
    }
  }
  const input: ArtifactInput = {
    seed: ctx.seed,
    stage,
    title: seen.issue?.title ?? "",
    body: seen.issue?.body ?? "",
    own,
    fixed,
    carried,
  };
  return { input, addressed, decisions, answers: concerns.length > 0 && !ignoring };
}

/** `discover.brief`, `shape.writer`, `planner`: a markdown artifact, then Decisions and one fenced `addressed` block when given concerns. */
export function producerReply(ctx: Ctx, seen: Seen, role: string): string {
  const d = draft(ctx, seen, role);
  let text = renderArtifact(d.input);
  if (d.answers) {
    const json = writeJson(
      { addressed: d.addressed },
      {
        indent: 2,
        trailingCommas: ctx.dice.on("trailingCommas"),
        ...(ctx.dice.on("rawNewlines") && d.addressed[0] ? { rawNewlineIn: d.addressed[0].note } : {}),
      },
    );
    // A model that stops inside its last block leaves the fence open (issue 30).
    const close = ctx.dice.on("unclosedFence") ? "" : "\n```";
    text += `\n\n## Decisions\n${d.decisions.join("\n")}\n\n\`\`\`json\n${json}${close}`;
  }
  const think = ctx.dice.on("think") ? thinkBlock(ctx.dice, ctx.seed, seen.key, `the ${d.input.stage} artifact for "${d.input.title}"`) : "";
  return think + text;
}

/** `spec.ac_generator`: `{"acceptance_criteria": [...], "addressed"?: [...]}`. */
export function criteriaReply(ctx: Ctx, seen: Seen, role: string): string {
  const d = draft(ctx, seen, role);
  const criteria = renderCriteria(d.input);
  const value = { acceptance_criteria: criteria, ...(d.answers ? { addressed: d.addressed } : {}) };
  return renderJson(ctx.dice, ctx.seed, seen.key, {
    value,
    ...(criteria[0] !== undefined ? { rawCandidate: criteria[0] } : {}),
    thinkAlternative: { acceptance_criteria: criteria.slice(0, 1) },
    subject: `the plan for "${d.input.title}"`,
  });
}

const TRIVIAL_WORDS = /\b(typo|typos|spelling|readme|docs?|documentation|comment|wording)\b/i;

/** `complexity_gate`: TRIVIAL or LOAD-BEARING. */
export function gateReply(ctx: Ctx, seen: Seen): string {
  const title = seen.issue?.title ?? block(seen, "issue") ?? seen.lastUser;
  const listed = ctx.scenario.trivial?.includes(title) ?? false;
  const known = listed || ctx.scenario.issues?.[title] !== undefined;
  const trivial = listed || (!known && TRIVIAL_WORDS.test(title));
  const word = trivial ? "TRIVIAL" : "LOAD-BEARING";
  const think = ctx.dice.on("think") ? thinkBlock(ctx.dice, ctx.seed, seen.key, `how risky "${title}" is`) : "";
  return think + word;
}
