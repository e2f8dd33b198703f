import type { Ctx } from "./context.js";
import { renderJson, thinkBlock } from "./format.js";
import { nearQuote } from "./near-quote.js";
import { rngFor } from "./prng.js";
import { block, type Seen } from "./request.js";
import { contains, firstSentence, jsonObjectsIn, norm, tryJson } from "./text.js";
import type { DraftScenario } from "./types.js";

/** The scenario draft for a prompt: the prompt is the user message, or is contained in it. */
function draftFor(ctx: Ctx, prompt: string): DraftScenario | undefined {
  const drafts = ctx.scenario.drafts ?? {};
  const exact = drafts[prompt] ?? drafts[prompt.trim()];
  if (exact) return exact;
  const keys = Object.keys(drafts).sort((a, b) => b.length - a.length);
  const key = keys.find((k) => prompt.includes(k));
  return key === undefined ? undefined : drafts[key];
}

/** A sound, generic answer to a prompt the scenario does not know. */
function genericAnswer(prompt: string): string {
  const topic = firstSentence(prompt).replace(/[.!?]$/, "") || "your question";
  return [
    `Short answer: it depends on details the question leaves open, so here is what holds in general about "${topic}".`,
    "Start from the official documentation for the tool or product involved, and check which version you run.",
    "If the stakes are high, confirm with someone who can see your exact setup before acting.",
  ].join(" ");
}

/** The executor (`exec-model`, no assistant turn): the scenario's draft, or a generic sound answer. */
export function executorReply(ctx: Ctx, seen: Seen): string {
  const prompt = seen.lastUser;
  const draft = draftFor(ctx, prompt)?.draft ?? genericAnswer(prompt);
  const think = ctx.dice.on("think") ? thinkBlock(ctx.dice, ctx.seed, seen.key, `the question "${firstSentence(prompt)}"`) : "";
  return think + draft;
}

interface Payload {
  prompt: string;
  executor_output: string;
}

/** The challenger's input: the last user message as JSON (or the first JSON object in it, or data blocks). */
function payloadOf(seen: Seen): Payload {
  const candidates = [seen.lastUser, ...jsonObjectsIn(seen.lastUser)];
  for (const c of candidates) {
    const v = tryJson(c);
    if (v && typeof v === "object" && "executor_output" in v && typeof v.executor_output === "string") {
      return { prompt: "prompt" in v && typeof v.prompt === "string" ? v.prompt : "", executor_output: v.executor_output };
    }
  }
  return { prompt: block(seen, "prompt") ?? "", executor_output: block(seen, "executor_output") ?? block(seen, "draft") ?? seen.lastUser };
}

const OFF_CATEGORY: Record<string, string> = {
  factual_risk: "Factual Risk",
  policy_compliance: "Policy Compliance",
  unverifiable_claim: "unverifiable-claim",
  boundary_violation: "Boundary Violation",
  internal_contradiction: "internal contradiction",
  missing_verification: "Missing_Verification",
};

/** The challenger (`chal-model`): flags each scenario defect whose sentence is still in the draft. */
export function challengerReply(ctx: Ctx, seen: Seen): string {
  const { prompt, executor_output: output } = payloadOf(seen);
  const scenario = draftFor(ctx, prompt);
  const loose = ctx.dice.on("offListEnums");
  const concerns: Record<string, unknown>[] = [];
  for (const [i, d] of (scenario?.defects ?? []).entries()) {
    if (!contains(output, d.sentence)) continue;
    const evidence = ctx.dice.on("nearQuotes", i) ? nearQuote(d.sentence, output, rngFor(ctx.seed, seen.key, "quote", i)) : d.sentence;
    concerns.push({
      evidence,
      category: loose ? (OFF_CATEGORY[d.category] ?? d.category) : d.category,
      severity: loose ? d.severity.charAt(0).toUpperCase() + d.severity.slice(1) : d.severity,
      concern: d.concern,
    });
  }
  if (ctx.dice.on("overflag") && output !== "") {
    concerns.push({
      evidence: "Studies consistently show the opposite.",
      category: "unverifiable_claim",
      severity: "high",
      concern: "The answer does not cite a source for its central claim.",
    });
  }
  if (loose) concerns.push({ evidence: firstSentence(output), category: "style", severity: "info", concern: "The tone could be friendlier." });
  const verdict = concerns.length > 0 ? (loose ? "Needs Work" : "needs_work") : "pass";
  const value = { concerns, verdict };
  const firstConcern = concerns[0]?.concern;
  const echo = jsonObjectsIn(output)[0];
  return renderJson(ctx.dice, ctx.seed, seen.key, {
    value,
    ...(typeof firstConcern === "string" ? { rawCandidate: firstConcern } : {}),
    thinkAlternative:
      concerns.length > 0
        ? { concerns: [], verdict: "pass" }
        : {
            concerns: [{ evidence: firstSentence(output), category: "factual_risk", severity: "medium", concern: "This might be wrong." }],
            verdict: "needs_work",
          },
    ...(echo !== undefined ? { echo } : {}),
    subject: "the draft against the policies",
  });
}

interface AuditConcern {
  evidence?: unknown;
}

/** The revision (`exec-model` with the draft as an assistant turn): the draft with every flagged sentence removed. */
export function revisionReply(ctx: Ctx, seen: Seen): string {
  const draft = seen.assistant ?? "";
  const v = tryJson(block(seen, "audit_concerns"));
  const evidence = (Array.isArray(v) ? (v as AuditConcern[]) : [])
    .map((c) => (c && typeof c.evidence === "string" ? c.evidence : ""))
    .filter((e) => norm(e) !== "");
  const scenario = draftFor(ctx, seen.messages.find((m) => m.role === "user")?.text ?? "");
  let revised = draft;
  // Scenario sentences first (exact), then any sentence the evidence quotes.
  for (const d of scenario?.defects ?? []) {
    if (evidence.some((e) => contains(d.sentence, e) || contains(e, d.sentence))) revised = revised.replace(d.sentence, "");
  }
  const sentences = revised.split(/(?<=[.!?])(\s+)/);
  revised = sentences.filter((s) => !(/\S/.test(s) && evidence.some((e) => contains(s, e)))).join("");
  revised = revised
    .replace(/[ \t]{2,}/g, " ")
    .replace(/ +\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  const preamble = ctx.dice.on("revisionPreamble") ? "Here is the revised answer:\n\n" : "";
  const think = ctx.dice.on("think") ? thinkBlock(ctx.dice, ctx.seed, seen.key, "the auditor's concerns about my draft") : "";
  return think + preamble + revised;
}
