import { z } from "zod";
import {
  AcceptanceCriteriaReply,
  FindingsReply,
  isSerious,
  readAddressed,
  readCriteriaReply,
  readFindingsReply,
  readVerifierReply,
  VerifierReply,
  type AddressedItem,
  type Concern,
  type ConcernResolution,
  type Finding,
} from "../contracts/concern.js";
import { isObject, type Read } from "../contracts/lenient.js";
import { ReplyFormatError } from "../errors.js";
import { parseStructured, repairJson, type Parsed } from "../models/json.js";
import type { ModelRequest, ReplySchema } from "../models/types.js";
import { dataBlock } from "../prompting/data-block.js";
import { layoutRequest } from "../prompting/layout.js";
import { promptFile } from "../prompts.js";
import type { TrackedIssue } from "../trackers/port.js";
import type { ArtifactName } from "./stages.js";

/** What a role is shown: the project, the issue and the earlier artifacts it needs. */
export interface RoleContext {
  issue: TrackedIssue;
  artifacts: Partial<Record<ArtifactName, string>>;
  /** The project the issue belongs to (docs/configuration.md `project`), as its data block's text. */
  project?: string;
  /** Gaps this issue shipped with in an earlier merge, as lines: the planner of a replan must not repeat them. */
  shippedGaps?: string;
  /** The plan of the issue's previous cycle, when concerns the replanning planner is given quote it (docs/issue.md "Replanning"). */
  previousPlan?: string;
  /** The code this request carries (the repository map and excerpts chosen for it, docs/issue.md "The code the councils read"). */
  code?: string;
}

/**
 * What the code block is, said right before it. It is evidence like the artifacts: a finding about the
 * code quotes it (docs/issue.md "Findings about the code"), so no role has to guess at a codebase.
 */
export const CODE_LEAD =
  "The repository's code chosen for this request (a map: `N: signature` is a definition at line N; excerpts under `### path:start-end`, verbatim). It is evidence: a finding about the code quotes it and names the file, and may be HIGH. What it does not show is not known.";

/** A role's context with the code a request carries (none: as it was). */
export const withCode = (ctx: RoleContext, sel: { text: string } | undefined): RoleContext => (sel ? { ...ctx, code: sel.text } : ctx);

/** The code block and the line that introduces it, or nothing. */
const codeBlocks = (ctx: RoleContext): string[] => (ctx.code ? [CODE_LEAD, dataBlock("code", ctx.code)] : []);

/** Renders acceptance criteria as a markdown list. */
export const renderCriteria = (criteria: readonly string[]) => criteria.map((c) => `- ${c}`).join("\n");

/** The issue as the text every role is given (and critics may quote): title and body. */
export const issueText = (issue: TrackedIssue) => `# ${issue.title}\n\n${issue.body.trim() || "(no description)"}`;

const ARTIFACT_TITLES: Record<ArtifactName, string> = {
  brief: "discovery brief",
  shape: "shape",
  plan: "plan",
  acceptance_criteria: "acceptance criteria",
  diff: "change (diff and test result)",
};

/**
 * The project, the issue, the code chosen for the stage, then each earlier artifact the role needs,
 * each as a data block (docs/issue.md). The order is the one prompt caching wants: what is shared by
 * most requests first. The code block is the same for every call of a stage — producer, critics,
 * second opinion — so it comes before anything that differs between them; `rules` (the rubric every
 * critic follows, the format every producer follows) go right after it: the same text at the same
 * place in every stage of an issue, new to the provider once an issue when there is no code, once
 * per code block when there is (docs/serve.md "Cost").
 */
function contextBlocks(ctx: RoleContext, names: readonly ArtifactName[], rules: readonly string[] = []): string[] {
  const blocks = [...projectBlock(ctx), dataBlock("issue", issueText(ctx.issue)), ...codeBlocks(ctx), ...rules];
  for (const name of names) {
    const text = ctx.artifacts[name];
    if (text) blocks.push(dataBlock("artifact", text, name));
  }
  return blocks;
}

/** The project block, first in every request after the system rules (docs/configuration.md `project`). */
const projectBlock = (ctx: RoleContext): string[] => (ctx.project ? [dataBlock("project", ctx.project)] : []);

/** The fields of a concern a model needs to answer it (no fingerprints or timestamps, so requests stay byte-identical on resume). */
export const concernBrief = (c: Concern) => ({
  id: c.id,
  severity: c.severity,
  raised_by: c.raised_by,
  category: c.category,
  concern: c.concern,
  ...(c.evidence ? { evidence: c.evidence } : {}),
  ...(c.evidence_stale ? { evidence_stale: true } : {}),
});

const json = (v: unknown) => JSON.stringify(v, null, 2);

/**
 * A role's voice: its name (so logs, proxies and test servers can tell the voices apart) and its
 * persona. It goes after the shared blocks, never in the system message, so that every role's
 * request starts with the same bytes (src/prompting/layout.ts).
 */
function persona(role: string): { text: string; file: { name: string; hash: string } } {
  const p = promptFile(`personas/${role}.md`);
  return { text: `Role: ${role}\n\n${p.text}`, file: { name: p.name, hash: p.hash } };
}

/** The rubric every findings critic follows: shared by the council. */
const criticRubric = () => promptFile("personas/_format-critic.md").text;
/** The format every markdown producer follows: shared by the producers of an issue. */
const producerFormat = () => promptFile("personas/_format-producer.md").text;

let schemas: { findings: ReplySchema; criteria: ReplySchema; verifier: ReplySchema } | undefined;
/** JSON Schemas sent as `response_format`, derived once from the zod schemas. */
function replySchemas() {
  schemas ??= {
    findings: { name: "findings", jsonSchema: z.toJSONSchema(FindingsReply, { io: "input", unrepresentable: "any" }) as Record<string, unknown> },
    verifier: { name: "second_opinion", jsonSchema: z.toJSONSchema(VerifierReply, { io: "input", unrepresentable: "any" }) as Record<string, unknown> },
    criteria: {
      name: "acceptance_criteria",
      jsonSchema: z.toJSONSchema(AcceptanceCriteriaReply, { io: "input", unrepresentable: "any" }) as Record<string, unknown>,
    },
  };
  return schemas;
}

/** What a producer must do this time, restated in one line at the end of the request. */
function producerTask(role: string, artifact: ArtifactName, hasConcerns: boolean): string {
  const what = ARTIFACT_TITLES[artifact];
  if (artifact === "acceptance_criteria")
    return `Task: write the acceptance criteria for the plan as {"acceptance_criteria": [...]}${hasConcerns ? ', with "addressed" for the concerns you answered' : ""}.`;
  return `Task: write the ${what} in markdown${hasConcerns ? ', ending with a `## Decisions` section and one fenced json block {"addressed": [...]}' : ""}. (${role})`;
}

/** A producer's request: context, pending concerns due at its phase, and on a retry its last draft and the blocking concerns after it. */
export function producerRequest(
  role: string,
  artifact: ArtifactName,
  ctx: RoleContext,
  inputs: readonly ArtifactName[],
  pending: readonly Concern[],
  retry?: { previous: string; blocking: readonly Concern[] },
): ModelRequest {
  const criteria = artifact === "acceptance_criteria";
  const voice = persona(role);
  const own = [voice.text];
  // A replan's own memory, after the persona (the shared prefix is unchanged): the plan its concerns quote.
  if (artifact === "plan" && ctx.previousPlan) {
    own.push(
      "This is a new planning cycle of the issue. Your plan of the previous cycle is below: the concerns you are given quote it. Write the new plan whole; do not refer to the previous one.",
      dataBlock("previous_plan", ctx.previousPlan, "plan"),
    );
  }
  if (artifact === "plan" && ctx.shippedGaps) {
    own.push(
      "This issue was planned and merged before, and shipped with the known gaps below. The new plan must not repeat them: close each one, or say in the plan why it stays.",
      dataBlock("shipped_gaps", ctx.shippedGaps),
    );
  }
  if (pending.length) {
    own.push(
      `Earlier stages could not resolve the concerns below. Answer each in your ${ARTIFACT_TITLES[artifact]} and report it in "addressed".`,
      dataBlock("pending_concerns", json(pending.map(concernBrief))),
    );
  }
  own.push(producerTask(role, artifact, pending.length > 0));
  const request = layoutRequest(
    // The format right after the issue: the same bytes for every markdown producer of the issue.
    { shared: contextBlocks(ctx, inputs, criteria ? [] : [producerFormat()]), own },
    { promptFile: voice.file, ...(criteria ? { schema: replySchemas().criteria } : {}) },
  );
  if (retry) {
    // The critique follows the conversation, so the request prefix (and a provider's prompt cache) is unchanged.
    request.messages.push(
      { role: "assistant", content: retry.previous },
      {
        role: "user",
        content: [
          criteria
            ? 'The judge blocked these criteria for the concerns below. Revise them to resolve each one, keep what already works, and report each you resolved in "addressed".'
            : "The council blocked this draft for the concerns below. Revise it to resolve each one, keep what already works, and answer each in the `## Decisions` section: what changed, or why not.",
          dataBlock("blocking_concerns", json(retry.blocking.map(concernBrief))),
          producerTask(role, artifact, true),
        ].join("\n\n"),
      },
    );
  }
  return request;
}

/** A fenced block at the very end of a reply: its body and where it starts. */
function trailingFence(text: string): { body: string; start: number } | undefined {
  const end = text.lastIndexOf("```");
  if (end === -1 || text.slice(end + 3).trim() !== "") return undefined;
  const open = text.lastIndexOf("```", end - 1);
  if (open === -1) return undefined;
  const header = text.slice(open + 3, text.indexOf("\n", open) === -1 ? end : text.indexOf("\n", open));
  if (!/^\s*(json)?\s*$/i.test(header)) return undefined;
  const bodyStart = text.indexOf("\n", open);
  if (bodyStart === -1 || bodyStart > end) return undefined;
  return { body: text.slice(bodyStart + 1, end), start: open };
}

/**
 * A fenced block opened at the end of a reply and never closed (a model that stopped inside its last
 * block): its body and where its opening fence starts. Fences are paired from the top, so a closed
 * block's closing fence is never taken for an opening one.
 */
function unclosedTrailingFence(text: string): { body: string; start: number } | undefined {
  let open: { start: number; bodyStart: number; ticks: number; info: string } | undefined;
  const fence = /^ {0,3}(`{3,})([^\n]*)$/gm;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    const ticks = (m[1] ?? "").length;
    const info = (m[2] ?? "").trim();
    if (!open) open = { start: m.index, bodyStart: m.index + m[0].length + 1, ticks, info };
    else if (ticks >= open.ticks && info === "") open = undefined;
  }
  if (!open || !/^(json)?$/i.test(open.info)) return undefined;
  return { body: text.slice(open.bodyStart), start: open.start };
}

/** Parses a whole reply as one JSON object, repairing raw control characters; undefined when it is not one. */
function wholeObject(text: string): Record<string, unknown> | undefined {
  let t = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*)\n```$/i.exec(t);
  if (fenced) t = (fenced[1] ?? "").trim();
  if (!t.startsWith("{") || !t.endsWith("}")) return undefined;
  try {
    const v: unknown = JSON.parse(repairJson(t));
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A producer's reply (docs/issue.md): markdown, ending with one fenced json `{"addressed": [...]}`
 * block that is cut off the artifact; or the whole-object form `{"artifact", "addressed"}`. A JSON
 * sample inside the markdown is part of the artifact, never the artifact.
 */
export function parseProducer(role: string, answer: string): { artifact: string; addressed: AddressedItem[]; unclosedFence?: true } {
  const whole = wholeObject(answer);
  if (whole) {
    if (typeof whole.artifact === "string" && whole.artifact.trim()) return { artifact: whole.artifact.trim(), addressed: readAddressed(whole.addressed) };
    throw new ReplyFormatError(`${role} replied with a JSON document, not a markdown artifact`);
  }
  let artifact = answer.trim();
  let addressed: AddressedItem[] = [];
  const fence = trailingFence(artifact);
  if (fence) {
    const block = wholeObject(fence.body);
    if (block && "addressed" in block) {
      addressed = readAddressed(block.addressed);
      artifact = artifact.slice(0, fence.start).trim();
    }
  }
  // The block a model never closed is still its claims, and never plan text; the loop warns of it (producer-faults.ts).
  const unclosed = fence ? undefined : unclosedTrailingFence(artifact);
  const body = unclosed?.body.trim() ?? "";
  // Cut off mid-way, the object is closed by the repair (jsonrepair) before it is read.
  const claims = body.startsWith("{") ? wholeObject(repairJson(body)) : undefined;
  if (unclosed && claims && "addressed" in claims) {
    artifact = artifact.slice(0, unclosed.start).trim();
    if (!artifact) throw new ReplyFormatError(`${role} returned an empty artifact`);
    return { artifact, addressed: readAddressed(claims.addressed), unclosedFence: true };
  }
  if (!artifact) throw new ReplyFormatError(`${role} returned an empty artifact`);
  return { artifact, addressed };
}

/** The acceptance-criteria producer's reply: JSON, or failing that a markdown list. */
export function parseCriteria(role: string, answer: string, quotedFrom: readonly string[] = []): { criteria: string[]; addressed: AddressedItem[] } {
  const parsed = parseStructured(answer, readCriteriaReply, { quotedFrom });
  if (parsed.ok) return { criteria: parsed.value.acceptance_criteria, addressed: parsed.value.addressed ?? [] };
  // Not JSON: a markdown list, or failing that one criterion per line of prose.
  const lines = answer
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^#/.test(l) && !/^```/.test(l));
  const bullets = lines.map((l) => /^(?:[-*+]|\d+[.)])\s+(.+)$/.exec(l)?.[1]?.trim()).filter((l): l is string => Boolean(l));
  const criteria = bullets.length ? bullets : lines;
  if (criteria.length === 0) throw new ReplyFormatError(`${role} returned no acceptance criteria (${parsed.error})`);
  return { criteria, addressed: [] };
}

/** What a critic is shown besides the artifact under review. */
export interface CriticExtras {
  knownGaps?: string;
  /** Its own findings of the previous round (docs/issue.md round memory). */
  previous?: readonly Finding[];
  /** Pending concerns due at this phase: already tracked, not to be raised again in new words. */
  tracked?: readonly Concern[];
  /** The categories this stage's critics use. */
  categories?: readonly string[];
  /** A reply other than findings (review.acceptance's verdicts, docs/implement.md): its schema and the task line; the persona says the format. */
  reply?: { schema: ReplySchema; task: string };
  /**
   * Every critic of the council follows the findings rubric (the pipeline's councils): the rubric
   * goes right after the issue, the same bytes in every stage of an issue, and the tracked concerns
   * before the draft, so a new round's only new shared text is its draft. Without it (a council with
   * a critic of its own reply, as the implement review has) both follow the draft, so the whole
   * council shares the draft (docs/serve.md "Cost").
   */
  rubricFirst?: boolean;
}

/** A critic's request: the issue, the context it needs, the artifact under review, and its memory. */
export function criticRequest(
  role: string,
  ctx: RoleContext,
  criticInputs: readonly ArtifactName[],
  artifact: { name: ArtifactName; text: string },
  extras: CriticExtras = {},
): ModelRequest {
  const voice = persona(role);
  // A critic with a reply of its own (review.acceptance's verdicts) is not given the findings rubric.
  const rubric = extras.reply ? [] : [criticRubric()];
  // The concerns tracked for the phase are the same for every critic of the council: shared.
  const tracked = extras.tracked?.length
    ? ["Concerns already tracked for this phase — do not raise them again in new words:", dataBlock("tracked_concerns", json(extras.tracked.map(concernBrief)))]
    : [];
  const draft = [`The ${ARTIFACT_TITLES[artifact.name]} under review:`, dataBlock("under_review", artifact.text, artifact.name)];
  const shared = extras.rubricFirst
    ? [...contextBlocks(ctx, criticInputs, rubric), ...tracked, ...draft]
    : [...contextBlocks(ctx, criticInputs), ...draft, ...rubric, ...tracked];
  const own = [voice.text];
  if (extras.knownGaps)
    own.push(
      'Known gaps that shipped unresolved in earlier work, each as "[id] SEVERITY title": if this artifact repeats one, set "known_gap" to its id.',
      dataBlock("known_gaps", extras.knownGaps),
    );
  if (extras.previous) {
    own.push(
      "Your findings on the previous draft are below. Repeat, word for word, each one that still applies to the draft under review; drop those the new draft fixed. Add a new finding only for a new problem.",
      dataBlock("previous_findings", json({ findings: extras.previous })),
    );
  }
  const vocabulary = extras.categories?.length ? ` Use a category from: ${extras.categories.join(", ")}.` : "";
  own.push(
    extras.reply?.task ??
      `Task: review the ${ARTIFACT_TITLES[artifact.name]} under review in your lane and reply with {"findings": [...]} — at most 5, most important first; CRITICAL or HIGH only with evidence quoted from it${ctx.code ? " or from the code" : ""}.${vocabulary}`,
  );
  return layoutRequest({ shared, own }, { schema: extras.reply?.schema ?? replySchemas().findings, promptFile: voice.file });
}

/** A critic's, judge's or reviewer's reply, read leniently: one bad finding is dropped and counted, a bare list is the findings. */
export function parseFindings(answer: string, quotedFrom: readonly string[]): Parsed<{ findings: Finding[]; addressed?: AddressedItem[] }> {
  return parseStructured(answer, readFindingsReply as (v: unknown) => Read<{ findings: Finding[]; addressed?: AddressedItem[] }>, { quotedFrom, arrays: true });
}

/** The reviewer sees at most this many MEDIUM or LOW pending concerns (docs/issue.md); the rest are counted. */
export const REVIEWER_MINOR_LIMIT = 8;

/** The plan reviewer's request: plan, criteria, every CRITICAL/HIGH pending concern and up to 8 others, and the producers' claims. */
export function reviewerRequest(ctx: RoleContext, pending: readonly Concern[], claims: readonly ConcernResolution[]): ModelRequest {
  const voice = persona("plan_reviewer");
  const serious = pending.filter((c) => isSerious(c.severity));
  const minor = pending.filter((c) => !isSerious(c.severity));
  const shown = [...serious, ...minor.slice(0, REVIEWER_MINOR_LIMIT)];
  const shared = [
    ...projectBlock(ctx),
    dataBlock("issue", issueText(ctx.issue)),
    ...codeBlocks(ctx),
    "The plan under review:",
    dataBlock("under_review", ctx.artifacts.plan ?? "", "plan"),
  ];
  if (ctx.artifacts.acceptance_criteria) shared.push(dataBlock("artifact", ctx.artifacts.acceptance_criteria, "acceptance_criteria"));
  const own = [
    voice.text,
    shown.length ? "Pending concerns (each CRITICAL or HIGH one is a must-address constraint):" : "Pending concerns: none.",
    ...(shown.length ? [dataBlock("pending_concerns", json(shown.map(concernBrief)))] : []),
  ];
  if (minor.length > REVIEWER_MINOR_LIMIT) own.push(`(${minor.length - REVIEWER_MINOR_LIMIT} more MEDIUM or LOW concerns are not shown.)`);
  if (shown.some((c) => c.evidence_stale))
    own.push(
      'A concern marked "evidence_stale" quotes an earlier plan: its quote is not in the plan under review. Judge it by what it says against this plan; if this plan still has the problem, quote this plan.',
    );
  if (claims.length) {
    own.push(
      'Producers\' claims on pending concerns: that the plan answers a CRITICAL or HIGH one — confirm it by listing the concern in "addressed" only if the plan really answers it — or, as "deferred", that they left one for later: it stays pending unless this plan answers it.',
      dataBlock("claims", json(claims.map((c) => ({ concern_id: c.concern_id, resolution_kind: c.resolution_kind, note: c.note, by: c.resolved_by })))),
    );
  }
  own.push(
    'Task: review the plan on the seven dimensions; raise findings only for real defects and for CRITICAL or HIGH pending concerns the plan leaves unanswered; list in "addressed" the pending concerns the plan answers.',
  );
  return layoutRequest({ shared, own }, { schema: replySchemas().findings, promptFile: voice.file });
}

/** The ComplexityGate's request: the project, title and body, answered with one word. */
export function gateRequest(issue: TrackedIssue, project?: string): ModelRequest {
  const voice = persona("complexity_gate");
  const shared = [...projectBlock({ issue, artifacts: {}, ...(project ? { project } : {}) }), dataBlock("issue", issueText(issue))];
  return layoutRequest({ shared, own: [voice.text, "Task: answer with one word, TRIVIAL or LOAD-BEARING."] }, { promptFile: voice.file });
}

/**
 * The verifier's request (docs/issue.md): the context the critic had, the artifact under review, and
 * the one finding to confirm or refute, as data. It quotes, reasons, then decides.
 */
export function verifierRequest(
  role: string,
  ctx: RoleContext,
  criticInputs: readonly ArtifactName[],
  artifact: { name: ArtifactName; text: string },
  concern: Concern,
): ModelRequest {
  const voice = persona(role);
  const finding = { severity: concern.severity, category: concern.category, concern: concern.concern, evidence: concern.evidence };
  const shared = [
    ...contextBlocks(ctx, criticInputs),
    `The ${ARTIFACT_TITLES[artifact.name]} under review:`,
    dataBlock("under_review", artifact.text, artifact.name),
  ];
  const own = [
    voice.text,
    `One critic (${concern.raised_by}) raised this finding as ${concern.severity}; no other critic of its council raised it:`,
    dataBlock("finding", json(finding)),
    `Task: decide whether the finding is a real defect of the ${ARTIFACT_TITLES[artifact.name]} under review, as serious as stated: quote the line it is about as "evidence"${ctx.code ? " (from the artifact, or from the code when the finding is about what the code does)" : ""}, give your "reason", then "verdict": "confirm" or "refute".`,
  ];
  return layoutRequest({ shared, own }, { schema: replySchemas().verifier, promptFile: voice.file });
}

/** The verifier's reply, read leniently; a quote of the artifact or the finding is never the reply. */
export function parseVerdict(answer: string, quotedFrom: readonly string[]): Parsed<VerifierReply> {
  return parseStructured(answer, readVerifierReply, { quotedFrom });
}
