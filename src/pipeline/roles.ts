import { z } from "zod";
import {
  AcceptanceCriteriaReply,
  FindingsReply,
  ProducerReply,
  type AddressedItem,
  type Concern,
  type Finding,
} from "../contracts/concern.js";
import { ReplyFormatError } from "../errors.js";
import { parseStructured, stripThink } from "../models/json.js";
import type { ChatMessage, ModelRequest, ReplySchema } from "../models/types.js";
import { promptFile } from "../prompts.js";
import type { TrackedIssue } from "../trackers/port.js";
import type { ArtifactName } from "./stages.js";

const TITLES: Record<ArtifactName, string> = {
  brief: "Discovery brief",
  shape: "Shape",
  plan: "Plan",
  acceptance_criteria: "Acceptance criteria",
};

/** What a role is shown: the issue and the earlier artifacts it needs. */
export interface RoleContext {
  issue: TrackedIssue;
  artifacts: Partial<Record<ArtifactName, string>>;
}

/** Renders acceptance criteria as a markdown list. */
export const renderCriteria = (criteria: readonly string[]) => criteria.map((c) => `- ${c}`).join("\n");

function contextDoc(ctx: RoleContext, names: readonly ArtifactName[]): string {
  const parts = [`# Issue ${ctx.issue.id}: ${ctx.issue.title}`, ctx.issue.body.trim() || "(no description)"];
  for (const name of names) {
    const text = ctx.artifacts[name];
    if (text) parts.push(`## ${TITLES[name]}\n\n${text}`);
  }
  return parts.join("\n\n");
}

/** The fields of a concern a model needs to answer it (no fingerprints or timestamps). */
export const concernBrief = (c: Concern) => ({
  id: c.id,
  severity: c.severity,
  raised_by: c.raised_by,
  category: c.category,
  concern: c.concern,
  ...(c.evidence ? { evidence: c.evidence } : {}),
});

function persona(role: string, format?: string): { system: string; file: { name: string; hash: string } } {
  const p = promptFile(`personas/${role}.md`);
  // The role's name leads, so logs, proxies and test servers can tell the voices apart.
  const text = `Role: ${role}\n\n${p.text}`;
  const system = format ? `${text}\n\n${promptFile(`personas/${format}.md`).text}` : text;
  return { system, file: { name: p.name, hash: p.hash } };
}

let schemas: { findings: ReplySchema; criteria: ReplySchema } | undefined;
/** JSON Schemas sent as `response_format`, derived once from the zod schemas. */
function replySchemas() {
  schemas ??= {
    findings: { name: "findings", jsonSchema: z.toJSONSchema(FindingsReply, { io: "input", unrepresentable: "any" }) as Record<string, unknown> },
    criteria: { name: "acceptance_criteria", jsonSchema: z.toJSONSchema(AcceptanceCriteriaReply, { io: "input", unrepresentable: "any" }) as Record<string, unknown> },
  };
  return schemas;
}

/** A producer's request: context, pending concerns due at its phase, and on a retry its last draft and the blocking concerns after it. */
export function producerRequest(
  role: string,
  ctx: RoleContext,
  inputs: readonly ArtifactName[],
  pending: readonly Concern[],
  retry?: { previous: string; blocking: readonly Concern[] },
  criteria = false,
): ModelRequest {
  const { system, file } = persona(role, criteria ? undefined : "_format-producer");
  let first = contextDoc(ctx, inputs);
  if (pending.length) {
    first += `\n\n## Pending concerns you must address\n\nEarlier stages could not resolve these. Answer them in your artifact and report each one you answered in "addressed".\n\n${JSON.stringify(pending.map(concernBrief), null, 2)}`;
  }
  const messages: ChatMessage[] = [{ role: "user", content: first }];
  if (retry) {
    // The critique follows the conversation, so the request prefix (and a provider's prompt cache) is unchanged.
    messages.push(
      { role: "assistant", content: retry.previous },
      {
        role: "user",
        content: `The council blocked this draft. Revise it to resolve every concern below, keep what already works, and reply in the same format.\n\n${JSON.stringify(retry.blocking.map(concernBrief), null, 2)}`,
      },
    );
  }
  return { system, messages, promptFile: file, ...(criteria ? { schema: replySchemas().criteria } : {}) };
}

/** A producer's reply: plain markdown, or `{"artifact", "addressed"}`. */
export function parseProducer(role: string, text: string): { artifact: string; addressed: AddressedItem[] } {
  const parsed = parseStructured(text, ProducerReply);
  if (parsed.ok) return { artifact: parsed.value.artifact, addressed: parsed.value.addressed ?? [] };
  const artifact = stripThink(text).trim();
  if (!artifact) throw new ReplyFormatError(`${role} returned an empty reply`);
  return { artifact, addressed: [] };
}

/** The acceptance-criteria producer's reply: JSON, or failing that a markdown list. */
export function parseCriteria(role: string, text: string): { criteria: string[]; addressed: AddressedItem[] } {
  const parsed = parseStructured(text, AcceptanceCriteriaReply);
  if (parsed.ok) return { criteria: parsed.value.acceptance_criteria, addressed: parsed.value.addressed ?? [] };
  // Not JSON: a markdown list, or failing that one criterion per line of prose.
  const lines = stripThink(text)
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^#/.test(l) && !/^```/.test(l));
  const bullets = lines.map((l) => /^(?:[-*+]|\d+[.)])\s+(.+)$/.exec(l)?.[1]?.trim()).filter((l): l is string => Boolean(l));
  const criteria = bullets.length ? bullets : lines;
  if (criteria.length === 0) throw new ReplyFormatError(`${role} returned no acceptance criteria (${parsed.error})`);
  return { criteria, addressed: [] };
}

/** A critic's request: the issue, the context it needs, the artifact under review and, for the surfacer, known gaps. */
export function criticRequest(
  role: string,
  ctx: RoleContext,
  criticInputs: readonly ArtifactName[],
  artifact: { name: ArtifactName; text: string },
  knownGaps?: string,
): ModelRequest {
  const { system, file } = persona(role, "_format-critic");
  let content = `${contextDoc(ctx, criticInputs)}\n\n## ${TITLES[artifact.name]} under review\n\n${artifact.text}`;
  if (knownGaps) content += `\n\n## Known gaps shipped in earlier work\n\n${knownGaps}`;
  return { system, messages: [{ role: "user", content }], schema: replySchemas().findings, promptFile: file };
}

/** A critic's, judge's or reviewer's reply; throws ReplyFormatError when it is not one. */
export function parseFindings(role: string, text: string): { findings: Finding[]; addressed: AddressedItem[] } {
  const parsed = parseStructured(text, FindingsReply);
  if (!parsed.ok) throw new ReplyFormatError(`${role} reply is ${parsed.reason === "unparseable" ? "not JSON" : "not a findings object"}: ${parsed.error}`);
  return { findings: parsed.value.findings, addressed: parsed.value.addressed ?? [] };
}

/** The plan reviewer's request: plan, criteria, and every pending concern as a must-address constraint. */
export function reviewerRequest(ctx: RoleContext, pending: readonly Concern[]): ModelRequest {
  const { system, file } = persona("plan_reviewer");
  let content = contextDoc(ctx, ["plan", "acceptance_criteria"]);
  content += pending.length
    ? `\n\n## Pending concerns (must address)\n\n${JSON.stringify(pending.map(concernBrief), null, 2)}`
    : "\n\n## Pending concerns (must address)\n\nNone.";
  return { system, messages: [{ role: "user", content }], schema: replySchemas().findings, promptFile: file };
}

/** The ComplexityGate's request: title and body, answered with one word. */
export function gateRequest(issue: TrackedIssue): ModelRequest {
  const p = promptFile("personas/complexity_gate.md");
  return {
    system: `Role: complexity_gate\n\n${p.text}`,
    messages: [{ role: "user", content: `# ${issue.title}\n\n${issue.body.trim() || "(no description)"}` }],
    promptFile: { name: p.name, hash: p.hash },
  };
}
