import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import type { LanguageModel } from "ai";
import { normalize } from "../../src/adversarial/grounding.js";
import type { AuditInput } from "../../src/contracts/audit.js";
import type { GateItem } from "../../src/eval/schema.js";
import { loadGateSet } from "../../src/eval/sets.js";
import { memoryCache } from "../../src/models/cache.js";
import { fixedRouter } from "../../src/models/router.js";
import type { CallContext } from "../../src/models/types.js";
import { messageText, scriptedModel } from "../support/mock-model.js";

/** The bundled gate set, by draft: a scripted challenger finds its item from the request it is sent. */
export const BUNDLED_GATE = loadGateSet();
const byDraft = new Map(BUNDLED_GATE.items.map((i) => [i.draft, i]));

/** What a scripted challenger decides for one item. */
export type ChallengerScript = (item: GateItem, input: AuditInput) => unknown;

/** The audit input of a challenger request (its one user message is the JSON of ADR-009 §2). */
export function auditInputOf(options: LanguageModelV3CallOptions): AuditInput {
  const user = options.prompt.find((m) => m.role === "user");
  if (!user) throw new Error("challenger request without a user message");
  return JSON.parse(messageText(user)) as AuditInput;
}

/** A challenger answering each item of a set by script (the item is found by its draft). */
export function scriptedChallenger(script: ChallengerScript, items: Map<string, GateItem> = byDraft): LanguageModel {
  return scriptedModel("scripted-challenger", [
    (options) => {
      const input = auditInputOf(options);
      const item = items.get(input.executor_output);
      if (!item) return new Error(`no item has this draft: ${input.executor_output.slice(0, 40)}`);
      const out = script(item, input);
      return typeof out === "string" ? out : JSON.stringify(out);
    },
  ]);
}

/** The draft a revision request carries (the assistant turn). */
export function draftOf(options: LanguageModelV3CallOptions): string {
  const a = options.prompt.find((m) => m.role === "assistant");
  return a ? messageText(a) : "";
}

/** An executor that only ever revises: by default it removes each defect's passage from the draft. */
export function scriptedReviser(
  revise: (draft: string, item: GateItem | undefined) => string = removeDefects,
  items: Map<string, GateItem> = byDraft,
): LanguageModel {
  return scriptedModel("scripted-reviser", [
    (options) => {
      const draft = draftOf(options);
      if (!draft) return new Error("the executor was asked to write a draft: eval gate must never do that");
      return revise(draft, items.get(draft));
    },
  ]);
}

/** A revision that deletes every planted defect's passage. */
export function removeDefects(draft: string, item: GateItem | undefined): string {
  let out = draft;
  for (const d of item?.expected.defects ?? []) if (d.evidence) out = out.split(d.evidence).join("");
  return out;
}

/** The one door's configuration over scripted models, with an in-memory cache. */
export function scriptedCalls(models: Record<string, LanguageModel>): CallContext & { cache: ReturnType<typeof memoryCache> } {
  return { router: fixedRouter(models), cache: memoryCache(), cacheMode: "use", seed: 7, timeoutMs: 5_000, maxRetries: 0, backoffMs: 1 };
}

// ---------------------------------------------------------------- challengers of known behaviour

/** Returns exactly the planted defects. */
export const perfect: ChallengerScript = (item) => ({
  concerns: item.expected.defects.map((d) => ({
    evidence: d.evidence,
    category: d.category,
    severity: d.min_severity ?? "high",
    concern: d.note ?? `planted ${d.category}`,
  })),
  verdict: item.expected.verdict,
});

/** Always passes, raising nothing. */
export const alwaysPass: ChallengerScript = () => ({ concerns: [], verdict: "pass" });

/** Flags every draft: one grounded concern on its opening words. */
export const flagsEverything: ChallengerScript = (item) => ({
  concerns: [
    { evidence: normalize(item.draft).split(" ").slice(0, 8).join(" "), category: "factual_risk", severity: "high", concern: "Everything here is suspect." },
  ],
  verdict: "needs_work",
});

/** The perfect auditor with a sloppy hand: curly quotes, dashes, and its quotes upper-cased. */
export const curlyQuotes: ChallengerScript = (item, input) => {
  const out = perfect(item, input) as { concerns: { evidence: string }[]; verdict: string };
  for (const c of out.concerns) {
    const e = c.evidence
      .replace(/[a-z]/g, (ch) => ch.toUpperCase())
      .replace(/'/g, "\u2019")
      .replace(/"([^"]*)"/g, "\u201C$1\u201D")
      .replace(/ - /g, " \u2014 ");
    c.evidence = `\u201C${e}\u201D`;
  }
  return out;
};

/** Obeys text addressed to it: on a draft that tells the auditor what to say, it says that; elsewhere it is perfect. */
export const followsInjections: ChallengerScript = (item, input) =>
  (item.tags ?? []).includes("injection") ? { concerns: [], verdict: "pass" } : perfect(item, input);

/** The perfect auditor that drops one character in the middle of each quote: every concern is lost to grounding. */
export const typoQuotes: ChallengerScript = (item, input) => {
  const out = perfect(item, input) as { concerns: { evidence: string }[]; verdict: string };
  for (const c of out.concerns) {
    const mid = Math.floor(c.evidence.length / 2);
    c.evidence = c.evidence.length >= 20 ? c.evidence.slice(0, mid) + c.evidence.slice(mid + 1) : `${c.evidence} (paraphrased beyond recognition)`;
  }
  return out;
};

// ---------------------------------------------------------------- over HTTP (the CLI end to end)

/** A stable number in [0, 1) for a string: the scripted "realistic" challenger's dice. */
export function dice(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h / 4294967296;
}

/**
 * A challenger of middling skill, deterministic per item: misses about one defect in five, names
 * one in ten by a neighbouring category, flags about one clean draft in six, paraphrases a quote
 * now and then (lost to grounding) and obeys two of the injections.
 */
export const realistic: ChallengerScript = (item, input) => {
  const roll = (salt: string) => dice(`${item.id}:${salt}`);
  if ((item.tags ?? []).includes("injection") && roll("obeys") < 0.3) return { concerns: [], verdict: "pass" };
  if (item.expected.verdict === "pass") {
    if (roll("overflag") < 0.17) return flagsEverything(item, input);
    return { concerns: [], verdict: "pass" };
  }
  const concerns = item.expected.defects.flatMap((d, i) => {
    const r = roll(`d${i}`);
    if (r < 0.2) return [];
    const category =
      r < 0.3 ? (d.category === "factual_risk" ? "unverifiable_claim" : d.category === "boundary_violation" ? "policy_compliance" : d.category) : d.category;
    const evidence = r > 0.93 && d.evidence.length > 20 ? d.evidence.slice(0, -3).replace(/ /, "  ").replace(/e/, "a") : d.evidence;
    return [{ evidence, category, severity: r < 0.5 ? "medium" : "high", concern: d.note ?? "planted" }];
  });
  return { concerns, verdict: concerns.length ? "needs_work" : "pass" };
};

/** The JSON of a challenger reply for a request's audit input, by script over a set's items. */
export function challengerReply(
  script: ChallengerScript,
  body: { messages: { role: string; content: string }[] },
  items: Map<string, GateItem> = byDraft,
): string {
  const user = body.messages.find((m) => m.role === "user");
  const input = JSON.parse(user?.content ?? "{}") as AuditInput;
  const item = items.get(input.executor_output);
  if (!item) throw new Error("no item has this draft");
  return JSON.stringify(script(item, input));
}

/** The items of a set by draft (for a set other than the bundled one). */
export const itemsByDraft = (items: readonly GateItem[]) => new Map(items.map((i) => [i.draft, i]));
