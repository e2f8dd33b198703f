import type { Ctx } from "./context.js";
import { renderJson } from "./format.js";
import { nearQuote } from "./near-quote.js";
import { rngFor } from "./prng.js";
import { block, concernsIn, type Seen } from "./request.js";
import { contains, jsonObjectsIn, sameWords, tryJson } from "./text.js";
import type { Defect } from "./types.js";
import { carries, defectsOf, dimensionOf, recognise } from "./world.js";

/** A finding as critics write it (key order as the contract lists it: evidence first). */
export type FindingOut = Record<string, unknown> & { severity: string; concern: string };

const RANK: Record<string, number> = { CRITICAL: 0, HIGH: 1, MEDIUM: 2, LOW: 3 };
const rank = (f: FindingOut) => RANK[f.severity.toUpperCase()] ?? 4;
const MAX_FINDINGS = 5;

const PREMISE = "The central premise is unvalidated: nothing shows users actually need this change.";
const PREMISE_EVIDENCE = [
  "Users have asked for this many times.",
  "This is the most requested change of the quarter.",
  "Everyone agrees this is the top priority.",
];

/** The previous round's findings the critic was given, as written. */
function previousFindings(seen: Seen): FindingOut[] {
  const v = tryJson(block(seen, "previous_findings"));
  const list = Array.isArray(v) ? v : v && typeof v === "object" && "findings" in v && Array.isArray(v.findings) ? (v.findings as unknown[]) : [];
  return list.filter(
    (f): f is FindingOut => !!f && typeof f === "object" && typeof (f as FindingOut).concern === "string" && typeof (f as FindingOut).severity === "string",
  );
}

/** Title-case or lower-case severities, the way a loose model writes enums. */
function offList(s: string, i: number): string {
  const lower = s.toLowerCase();
  return i % 2 === 0 ? lower.charAt(0).toUpperCase() + lower.slice(1) : lower;
}

/** The id of the known gap in the request's `known_gaps` block whose line holds the defect's gap words. */
function knownGapOf(seen: Seen, d: Defect): string | undefined {
  if (d.gap === undefined) return undefined;
  for (const line of (block(seen, "known_gaps") ?? "").split("\n")) {
    const m = /^- \[([^\]]+)\]\s+(.*)$/.exec(line.trim());
    if (m?.[1] && contains(m[2] ?? "", d.gap)) return m[1];
  }
  return undefined;
}

/** The code block of the request, when it holds the line of code that makes the defect one. */
export function seesCode(seen: Seen, d: Defect): string | undefined {
  if (d.inCode === undefined) return undefined;
  const code = block(seen, "code");
  return code !== undefined && contains(code, d.inCode) ? code : undefined;
}

/** The reason a critic that cannot see the code gives for keeping a defect of the code at MEDIUM (a real critic's words). */
export const CANNOT_SEE = "I cannot see the code, so I cannot confirm this and must not block on it.";

/** One new finding about a defect, worded for this lane and round (tied to a known gap the critic was shown, when it repeats one). */
function newFinding(ctx: Ctx, seen: Seen, role: string, d: Defect, text: string, round: number, paraphrase: boolean): FindingOut {
  const n = d.wordings.length;
  const lane = Math.max(0, d.lanes.indexOf(role));
  const concern = (paraphrase ? d.wordings[(lane + round) % n] : d.wordings[0]) ?? d.wordings[0] ?? d.line;
  const gap = knownGapOf(seen, d);
  const human = d.humanRequired ?? false;
  if (d.inCode !== undefined) {
    // A defect only the code shows: quoted from the code when the request carries it, else kept at MEDIUM.
    const code = seesCode(seen, d);
    if (code === undefined) return { evidence: d.line, severity: "MEDIUM", category: d.category, concern: `${concern} ${CANNOT_SEE}`, human_required: human };
    const evidence = ctx.dice.on("nearQuotes", d.id) ? nearQuote(d.inCode, code, rngFor(ctx.seed, seen.key, "quote", d.id)) : d.inCode;
    return { evidence, severity: d.severity, category: d.category, concern, human_required: human };
  }
  const evidence = ctx.dice.on("nearQuotes", d.id) ? nearQuote(d.line, text, rngFor(ctx.seed, seen.key, "quote", d.id)) : d.line;
  return { evidence, ...(gap ? { known_gap: gap } : {}), severity: d.severity, category: d.category, concern, human_required: human };
}

/** Orders by severity, keeps at most 5, and adds the loose-enum slips of the quirk (never to repeated findings). */
function finish(ctx: Ctx, found: FindingOut[], fresh: ReadonlySet<FindingOut>, text: string): FindingOut[] {
  const sorted = [...found].sort((a, b) => rank(a) - rank(b)).slice(0, MAX_FINDINGS);
  if (!ctx.dice.on("offListEnums")) return sorted;
  const out = sorted.map((f, i) => (fresh.has(f) ? { ...f, severity: offList(f.severity, i) } : f));
  const firstLine = text.split("\n").find((l) => l.trim() !== "") ?? text;
  out.push({ evidence: firstLine, severity: "INFO", category: "style", concern: "The wording of the heading could be tightened.", human_required: false });
  return out;
}

/** Critics and `spec.judge`: `{"findings": [...]}` about the `under_review` artifact. */
export function criticReply(ctx: Ctx, seen: Seen, role: string): string {
  const review = seen.lastBlocks.find((b) => b.kind === "under_review") ?? seen.blocks.find((b) => b.kind === "under_review");
  const text = review?.text ?? "";
  const title = seen.issue?.title ?? "";
  const defects = defectsOf(ctx.scenario, seen);
  const present = defects.filter((d) => d.lanes.includes(role) && carries(text, d));
  const round = ctx.roundOf(role, title, review?.name ?? "", text);
  const paraphrase = ctx.dice.on("paraphrase");
  const tracked = concernsIn(block(seen, "tracked_concerns"));

  const found: FindingOut[] = [];
  const fresh = new Set<FindingOut>();
  const handled = new Set<string>();
  const prev = previousFindings(seen);
  // Round memory: repeat, word for word, each earlier finding that still applies; drop the fixed ones.
  for (const f of prev) {
    const d = recognise(defects, f);
    if (d === undefined) {
      if (sameWords(f.concern, PREMISE) || (typeof f.evidence === "string" && contains(text, f.evidence))) found.push(f);
      continue;
    }
    if (present.includes(d) && !handled.has(d.id)) {
      found.push(f);
      handled.add(d.id);
    }
  }
  for (const d of present) {
    if (handled.has(d.id)) continue;
    // Already tracked: a disciplined critic does not raise it again; a paraphrasing one does, in new words.
    if (!paraphrase && tracked.some((c) => recognise([d], c))) continue;
    const f = newFinding(ctx, seen, role, d, text, round, paraphrase);
    found.push(f);
    fresh.add(f);
  }
  if (ctx.dice.on("overflag") && text !== "") {
    if (!found.some((f) => sameWords(f.concern, PREMISE))) {
      const evidence = PREMISE_EVIDENCE.find((e) => !contains(text, e)) ?? "Users have asked for this many times.";
      const f: FindingOut = { evidence, severity: "CRITICAL", category: "assumption", concern: PREMISE, human_required: false };
      found.push(f);
      fresh.add(f);
    }
    if (role === "shape.product_strategist") {
      const heading = text.split("\n").find((l) => l.startsWith("## ")) ?? text.split("\n")[0] ?? "";
      const f: FindingOut = {
        evidence: heading,
        severity: "LOW",
        category: "product_decision",
        concern: "Someone from product should sign off on the wording of this section.",
        human_required: true,
      };
      found.push(f);
      fresh.add(f);
    }
  }
  const findings = finish(ctx, found, fresh, text);
  const rawCandidate = findings.find((f) => fresh.has(f))?.concern;
  const echo = block(seen, "previous_findings") ?? jsonObjectsIn(text)[0];
  return renderJson(ctx.dice, ctx.seed, seen.key, {
    value: { findings },
    ...(rawCandidate !== undefined ? { rawCandidate } : {}),
    thinkAlternative: {
      findings: findings.length > 0 ? [] : [{ evidence: text.split("\n")[0] ?? "", severity: "HIGH", concern: "The scope may be too broad." }],
    },
    ...(echo !== undefined ? { echo } : {}),
    subject: `the ${review?.name ?? "artifact"} for "${title}" as ${role}`,
  });
}

interface Claim {
  concern_id: string;
  resolution_kind?: string;
  note?: string;
}

/** `plan_reviewer`: confirms the pending concerns the plan really answers, raises the CRITICAL/HIGH ones it leaves open. */
export function reviewerReply(ctx: Ctx, seen: Seen, role: string): string {
  const plan = seen.blocks.find((b) => b.kind === "under_review")?.text ?? block(seen, "artifact", "plan") ?? "";
  const criteria = block(seen, "artifact", "acceptance_criteria") ?? "";
  const title = seen.issue?.title ?? "";
  const defects = defectsOf(ctx.scenario, seen);
  const pending = concernsIn(block(seen, "pending_concerns"));
  const claimsV = tryJson(block(seen, "claims"));
  const claims = (Array.isArray(claimsV) ? claimsV : []).filter((c): c is Claim => !!c && typeof c === "object" && typeof (c as Claim).concern_id === "string");
  const answered = (d: Defect) => contains(`${plan}\n${criteria}`, d.fix);

  const addressed: { concern_id: string; resolution_kind: string; note: string }[] = [];
  const found: FindingOut[] = [];
  const fresh = new Set<FindingOut>();
  const raised = new Set<string>();
  for (const c of pending) {
    const d = recognise(defects, c);
    if (d === undefined || d.humanRequired) continue; // cannot tell from the plan; a person decides
    if (answered(d)) {
      const claim = claims.find((k) => k.concern_id === c.id);
      const kind =
        claim?.resolution_kind && !/ignored|deferred/i.test(claim.resolution_kind)
          ? claim.resolution_kind
          : /test/i.test(d.category)
            ? "addressed-in-test"
            : "addressed-in-code";
      addressed.push({ concern_id: c.id, resolution_kind: kind, note: `The plan says: ${d.fix}` });
    } else if (/^(critical|high)$/i.test(c.severity)) {
      const inPlan = contains(plan, d.line);
      const heading = plan.split("\n").find((l) => l.startsWith("## Steps")) ?? plan.split("\n")[0] ?? "";
      const f: FindingOut = {
        evidence: inPlan ? (ctx.dice.on("nearQuotes", d.id) ? nearQuote(d.line, plan, rngFor(ctx.seed, seen.key, "quote", d.id)) : d.line) : heading,
        severity: c.severity.toUpperCase(),
        category: d.category,
        dimension: dimensionOf(d),
        concern: c.concern,
        human_required: false,
      };
      found.push(f);
      fresh.add(f);
      raised.add(d.id);
    }
  }
  for (const d of defects) {
    if (!d.lanes.includes(role) || raised.has(d.id) || !carries(plan, d)) continue;
    const f: FindingOut = { ...newFinding(ctx, seen, role, d, plan, 0, false), dimension: dimensionOf(d) };
    found.push(f);
    fresh.add(f);
  }
  if (ctx.dice.on("overflag") && plan !== "") {
    const f: FindingOut = {
      evidence: PREMISE_EVIDENCE[0] ?? "",
      severity: "CRITICAL",
      category: "assumption",
      dimension: "correctness",
      concern: PREMISE,
      human_required: false,
    };
    found.push(f);
    fresh.add(f);
  }
  const findings = finish(ctx, found, fresh, plan);
  const rawCandidate = findings.find((f) => fresh.has(f))?.concern ?? addressed[0]?.note;
  const echo = jsonObjectsIn(plan)[0];
  return renderJson(ctx.dice, ctx.seed, seen.key, {
    value: { findings, addressed },
    ...(rawCandidate !== undefined ? { rawCandidate } : {}),
    thinkAlternative: { findings: [], addressed: [] },
    ...(echo !== undefined ? { echo } : {}),
    subject: `the plan for "${title}" against its pending concerns`,
  });
}
