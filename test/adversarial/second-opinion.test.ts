import { describe, expect, it } from "vitest";
import { callBudget } from "../../src/adversarial/budget.js";
import { AdversarialRetryLoop, type Critic, type LoopContext, type StageSpec, type Verifier } from "../../src/adversarial/retry-loop.js";
import { MAX_SECOND_OPINIONS, settleOne, type VerifierAnswer } from "../../src/adversarial/second-opinion.js";
import { Concern, type Finding, type Severity } from "../../src/contracts/concern.js";
import type { NewEvent } from "../../src/contracts/events.js";
import { ProviderAuthError } from "../../src/errors.js";

const STAGE: StageSpec = { stage: "shape_council", phase: "shape", mustAddressBy: "plan" };
const NOW = "2026-11-26T12:00:00.000Z";
/** A shape with one line per defect a critic may quote. */
const DRAFT = [
  "# Shape",
  "Find the existing user by the profile's email and sign them in as that user.",
  "Show the time in UTC.",
  "Store the token in the config file.",
  "Retry every request five times.",
  "Rename the user_id column.",
].join("\n");
const FIXED = DRAFT.replace("Find the existing user by the profile's email and sign them in as that user.", "Link only when both emails are verified.");

const finding = (severity: Severity, concern: string, evidence: string, extra: Partial<Finding> = {}): Finding => ({
  severity,
  concern,
  evidence,
  category: "risk",
  ...extra,
});
const critic = (role: string, answer: (artifact: string, round: number) => Finding[], knownGaps?: string[]): Critic<string> => ({
  role,
  review: async (artifact, { round }) => ({ findings: answer(artifact, round), ...(knownGaps ? { knownGaps } : {}) }),
});

/** A verifier answering from a table of concern text → answer; it records what it was asked, in call order. */
function verifier(answers: Record<string, VerifierAnswer | Error>, gate?: Promise<void>) {
  const asked: { concern: string; round: number }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const v: Verifier<string> = {
    role: "verifier",
    async check(_artifact, concern, round) {
      asked.push({ concern: concern.concern, round });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await gate;
      inFlight--;
      const a = answers[concern.concern];
      if (a === undefined) throw new Error(`no answer scripted for ${concern.concern}`);
      if (a instanceof Error) throw a;
      return a;
    },
  };
  return {
    v,
    asked,
    get maxInFlight() {
      return maxInFlight;
    },
  };
}

function context(over: Partial<LoopContext<string>> = {}) {
  const events: NewEvent[] = [];
  const warnings: string[] = [];
  let seq = 0;
  const ctx: LoopContext<string> = {
    issueId: "7",
    cycle: 1,
    emit: (e) => events.push(e),
    warn: (m) => warnings.push(m),
    concernId: (_fp, phase, role) => `${phase.toUpperCase()}-${(role.split(".").pop() ?? role).toUpperCase()}-${String(++seq).padStart(3, "0")}`,
    now: () => NOW,
    ...over,
  };
  return { ctx, events, warnings };
}

const SECURITY = "The guard never checks that the existing user's email was verified: a pre-account-takeover.";
const NITPICK = "Showing times in UTC is a style choice some users may dislike.";
const confirm = (evidence: string, reason = "Real: an attacker who registered the address first gets the account."): VerifierAnswer => ({
  verdict: "confirm",
  reason,
  evidence,
});
const refute = (reason = "A display preference, not a defect that blocks."): VerifierAnswer => ({
  verdict: "refute",
  reason,
  evidence: "Show the time in UTC.",
});

describe("settleOne: what a second opinion makes of a lone HIGH (docs/issue.md)", () => {
  const lone: Concern = {
    id: "SHAPE-TECH_LEAD-001",
    phase: "shape",
    stage: "shape_council",
    raised_by: "shape.tech_lead",
    severity: "HIGH",
    category: "risk",
    concern: SECURITY,
    evidence: "sign them in as that user",
    must_address_by: "plan",
    human_required: false,
    fingerprint: "fp",
    raised_at: NOW,
  };

  it("a grounded confirm blocks, as HIGH, recorded as corroborated by the verifier", () => {
    const r = settleOne(lone, { kind: "answered", answer: confirm("sign them in as that user"), grounded: true, by: "verifier" });
    expect(r.blocks).toBe(true);
    expect(r.concern).toEqual({ ...lone, second_opinion: { verdict: "confirm", reason: confirm("").reason, by: "verifier" } });
    expect(Concern.parse(r.concern)).toEqual(r.concern);
  });

  it("a refute makes it MEDIUM, raised HIGH, with the verifier's reason", () => {
    const r = settleOne(lone, { kind: "answered", answer: refute(), grounded: false, by: "verifier" });
    expect(r.blocks).toBe(false);
    expect(r.concern).toMatchObject({
      severity: "MEDIUM",
      raised_severity: "HIGH",
      severity_change: "refuted",
      second_opinion: { verdict: "refute", reason: refute().reason, by: "verifier" },
    });
  });

  it("a confirm whose quote is not in the artifact does not confirm: MEDIUM, not corroborated, no second opinion recorded", () => {
    const r = settleOne(lone, { kind: "answered", answer: confirm("words nobody wrote"), grounded: false, by: "verifier" });
    expect(r.blocks).toBe(false);
    expect(r.concern).toMatchObject({ severity: "MEDIUM", raised_severity: "HIGH", severity_change: "not_corroborated" });
    expect(r.concern.second_opinion).toBeUndefined();
  });

  it.each([
    { kind: "failed", error: "timed out" },
    { kind: "skipped", why: "cap" },
    { kind: "skipped", why: "budget" },
  ] as const)("no opinion ($kind) keeps it MEDIUM, not corroborated", (opinion) => {
    const r = settleOne(lone, opinion);
    expect(r.blocks).toBe(false);
    expect(r.concern).toMatchObject({ severity: "MEDIUM", raised_severity: "HIGH", severity_change: "not_corroborated" });
  });
});

describe("the loop with a verifier: a lone HIGH gets a second opinion", () => {
  it("two personas each raising a different grounded lone HIGH: both go to the verifier; the confirmed one blocks and the producer revises, the refuted one is MEDIUM with the reason", async () => {
    const inputs: { round: number; blocking: string[] }[] = [];
    const producer = async (i: { round: number; blocking: readonly Concern[] }) => {
      inputs.push({ round: i.round, blocking: i.blocking.map((c) => c.concern) });
      return { artifact: i.blocking.some((c) => c.concern === SECURITY) ? FIXED : DRAFT };
    };
    const tech = critic("shape.tech_lead", (a) => (a.includes("sign them in as that user") ? [finding("HIGH", SECURITY, "sign them in as that user")] : []));
    const user = critic("shape.user_advocate", () => [finding("HIGH", NITPICK, "Show the time in UTC.", { category: "user_impact" })]);
    const ver = verifier({ [SECURITY]: confirm("Find the existing user by the profile's email"), [NITPICK]: refute() });
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(producer, [tech, user, critic("shape.challenger", () => [])], ver.v).run(STAGE, ctx);

    expect(ver.asked).toEqual([
      { concern: SECURITY, round: 1 },
      { concern: NITPICK, round: 1 },
      { concern: NITPICK, round: 2 },
    ]);
    expect(inputs).toEqual([
      { round: 1, blocking: [] },
      { round: 2, blocking: [SECURITY] },
    ]);
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 2, second_opinions: 3, second_opinions_skipped: 0 });
    const blocked = events.flatMap((e) => (e.type === "ConcernBlocked" ? [e.concern] : []));
    expect(blocked).toEqual([
      expect.objectContaining({ concern: SECURITY, severity: "HIGH", second_opinion: expect.objectContaining({ verdict: "confirm", by: "verifier" }) }),
    ]);
    expect(r.forwarded).toEqual([
      expect.objectContaining({
        concern: NITPICK,
        severity: "MEDIUM",
        raised_severity: "HIGH",
        severity_change: "refuted",
        second_opinion: { verdict: "refute", reason: refute().reason, by: "verifier" },
      }),
    ]);
    expect(r.resolved).toEqual([blocked[0]?.id]);
  });

  it("a verifier that fails: the HIGH stays MEDIUM, one warning line names it, and the call is counted", async () => {
    const tech = critic("shape.tech_lead", () => [finding("HIGH", SECURITY, "sign them in as that user")]);
    const ver = verifier({ [SECURITY]: new Error("provider 'local' (verifier) timed out after 3 attempts") });
    const { ctx, warnings } = context();
    const r = await new AdversarialRetryLoop(async () => ({ artifact: DRAFT }), [tech, critic("shape.challenger", () => [])], ver.v).run(STAGE, ctx);
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 1, second_opinions: 1 });
    expect(r.forwarded).toEqual([expect.objectContaining({ severity: "MEDIUM", raised_severity: "HIGH", severity_change: "not_corroborated" })]);
    expect(warnings).toEqual([
      expect.stringMatching(/^verifier failed on SHAPE-TECH_LEAD-001 in shape_council round 1, so the HIGH stays MEDIUM: .*timed out/),
    ]);
  });

  it("a verifier that confirms without quoting the artifact does not confirm, and says so in one warning line", async () => {
    const tech = critic("shape.tech_lead", () => [finding("HIGH", SECURITY, "sign them in as that user")]);
    const ver = verifier({ [SECURITY]: confirm("the login handler trusts every provider") });
    const { ctx, warnings } = context();
    const r = await new AdversarialRetryLoop(async () => ({ artifact: DRAFT }), [tech, critic("shape.challenger", () => [])], ver.v).run(STAGE, ctx);
    expect(r.stageRun.outcome).toBe("converged");
    expect(r.forwarded[0]).toMatchObject({ severity: "MEDIUM", severity_change: "not_corroborated" });
    expect(warnings).toEqual([expect.stringContaining("confirmed SHAPE-TECH_LEAD-001 in shape_council round 1 without quoting the artifact")]);
  });

  it("an auth error from the verifier ends the run, like a critic's", async () => {
    const tech = critic("shape.tech_lead", () => [finding("HIGH", SECURITY, "sign them in as that user")]);
    const ver = verifier({ [SECURITY]: new ProviderAuthError("provider 'cloud' refused the request (401)") });
    await expect(new AdversarialRetryLoop(async () => ({ artifact: DRAFT }), [tech, critic("b", () => [])], ver.v).run(STAGE, context().ctx)).rejects.toThrow(
      /refused the request/,
    );
  });

  it("4 lone HIGHs in a round: 3 second opinions, asked in parallel, the 4th kept MEDIUM and counted as skipped", async () => {
    const lines = DRAFT.split("\n").slice(2, 6);
    const texts = ["UTC times confuse users.", "The token leaks through the config file.", "Five retries hammer the upstream.", "The rename has no migration."];
    const many = critic("shape.tech_lead", () => lines.map((l, i) => finding("HIGH", texts[i] as string, l)));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const answers = Object.fromEntries(texts.map((t) => [t, refute()]));
    const ver = verifier(answers, gate);
    const { ctx } = context({ onProgress: (p) => (p.step === "verifying" ? setTimeout(release, 20) : undefined) });
    const r = await new AdversarialRetryLoop(async () => ({ artifact: DRAFT }), [many, critic("b", () => [])], ver.v).run(STAGE, ctx);

    expect(MAX_SECOND_OPINIONS).toBe(3);
    expect(ver.asked.map((a) => a.concern)).toEqual(texts.slice(0, 3));
    expect(ver.maxInFlight).toBe(3);
    expect(r.stageRun).toMatchObject({ second_opinions: 3, second_opinions_skipped: 1 });
    expect(r.forwarded.map((c) => [c.concern, c.severity, c.severity_change])).toEqual([
      [texts[0], "MEDIUM", "refuted"],
      [texts[1], "MEDIUM", "refuted"],
      [texts[2], "MEDIUM", "refuted"],
      [texts[3], "MEDIUM", "not_corroborated"],
    ]);
  });

  it("second opinions never spend the calls reserved for later stages: with room for one, one is asked, the rest kept MEDIUM, counted and warned", async () => {
    // 10 calls, 1 spent before: the round (producer + 2 critics) spends 3 and 5 are reserved for later stages, so 1 is left.
    const budget = callBudget(10, 1);
    const spend = () => budget.take()(true);
    const two = critic("shape.tech_lead", () => [finding("HIGH", SECURITY, "sign them in as that user"), finding("HIGH", NITPICK, "Show the time in UTC.")]);
    const spending = (c: Critic<string>): Critic<string> => ({ role: c.role, review: async (a, r) => (spend(), c.review(a, r)) });
    const ver = verifier({ [SECURITY]: refute(), [NITPICK]: refute() });
    const counted: Verifier<string> = { role: "verifier", check: async (a, c, r) => (spend(), ver.v.check(a, c, r)) };
    const { ctx, warnings } = context({ budget, reserve: 5 });
    const producer = async () => (spend(), { artifact: DRAFT });
    const r = await new AdversarialRetryLoop(producer, [spending(two), spending(critic("b", () => []))], counted).run(STAGE, ctx);
    expect(ver.asked.map((a) => a.concern)).toEqual([SECURITY]);
    expect(budget.used()).toBe(5);
    expect(budget.remaining()).toBe(5);
    expect(r.stageRun).toMatchObject({ second_opinions: 1, second_opinions_skipped: 1 });
    expect(warnings).toEqual([expect.stringMatching(/^no budget left for a second opinion on 1 lone HIGH in shape_council round 1: kept as MEDIUM/)]);
  });

  it("a second opinion answered from the cache costs nothing: it is asked even with no call to spare", async () => {
    const budget = callBudget(8, 5); // 3 left, all reserved
    const tech = critic("shape.tech_lead", (a) => (a === DRAFT ? [finding("HIGH", SECURITY, "sign them in as that user")] : []));
    const ver = verifier({ [SECURITY]: confirm("sign them in as that user") });
    const cached: Verifier<string> = { ...ver.v, calls: async () => 0 };
    const free = { produce: async (i: { round: number }) => ({ artifact: i.round === 1 ? DRAFT : FIXED }), calls: async () => 0 };
    const freeCritic = (c: Critic<string>): Critic<string> => ({ ...c, calls: async () => 0 });
    const r = await new AdversarialRetryLoop(free, [freeCritic(tech), freeCritic(critic("b", () => []))], cached).run(
      STAGE,
      context({ budget, reserve: 3 }).ctx,
    );
    expect(ver.asked).toHaveLength(1);
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 2, second_opinions: 1, second_opinions_skipped: 0 });
  });

  it("CRITICAL, corroboration and the one-critic stage are unchanged: no second opinion is asked", async () => {
    const ver = verifier({});
    const critical = critic("shape.tech_lead", (a) => (a === DRAFT ? [finding("CRITICAL", "The token leaks.", "Store the token in the config file.")] : []));
    const r1 = await new AdversarialRetryLoop(
      async (i: { round: number }) => ({ artifact: i.round === 1 ? DRAFT : FIXED }),
      [critical, critic("b", () => [])],
      ver.v,
    ).run(STAGE, context().ctx);
    expect(r1.stageRun).toMatchObject({ outcome: "converged", rounds: 2, second_opinions: 0 });

    const a = critic("shape.tech_lead", (x) => (x === DRAFT ? [finding("HIGH", SECURITY, "sign them in as that user")] : []));
    const b = critic("shape.challenger", (x) =>
      x === DRAFT ? [finding("HIGH", "Linking by email is unsafe.", "by the profile's email and sign them in")] : [],
    );
    const r2 = await new AdversarialRetryLoop(async (i: { round: number }) => ({ artifact: i.round === 1 ? DRAFT : FIXED }), [a, b], ver.v).run(
      STAGE,
      context().ctx,
    );
    expect(r2.stageRun).toMatchObject({ outcome: "converged", rounds: 2, second_opinions: 0 });

    const judge = critic("spec.judge", (x) => (x === DRAFT ? [finding("HIGH", "AC 3 contradicts AC 1", "Show the time in UTC.")] : []));
    const r3 = await new AdversarialRetryLoop(async (i: { round: number }) => ({ artifact: i.round === 1 ? DRAFT : FIXED }), [judge], ver.v).run(
      { stage: "spec_judge", phase: "spec", mustAddressBy: "review" },
      context().ctx,
    );
    expect(r3.stageRun).toMatchObject({ outcome: "converged", rounds: 2, second_opinions: 0 });
    expect(ver.asked).toEqual([]);
  });
});

describe("known gaps block (docs/issue.md)", () => {
  const REPEAT = "Repeats the shipped gap: links accounts without checking the existing email.";
  it("a HIGH tied to a known gap the critic was shown blocks at once, with no second opinion, and records the gap", async () => {
    const ver = verifier({});
    const surfacer = critic(
      "assumption_surfacer",
      (a) => (a === DRAFT ? [finding("HIGH", REPEAT, "sign them in as that user", { known_gap: "link-by-email-3f2a1b0c" })] : []),
      ["link-by-email-3f2a1b0c"],
    );
    const { ctx, events } = context();
    const r = await new AdversarialRetryLoop(
      async (i: { round: number }) => ({ artifact: i.round === 1 ? DRAFT : FIXED }),
      [surfacer, critic("b", () => [])],
      ver.v,
    ).run(STAGE, ctx);
    expect(ver.asked).toEqual([]);
    expect(r.stageRun).toMatchObject({ outcome: "converged", rounds: 2, second_opinions: 0 });
    const blocked = events.flatMap((e) => (e.type === "ConcernBlocked" ? [e.concern] : []));
    expect(blocked).toEqual([expect.objectContaining({ severity: "HIGH", known_gap: "link-by-email-3f2a1b0c" })]);
  });

  it("a known_gap naming an entry the critic was not shown counts for nothing: the HIGH is lone and goes to the verifier", async () => {
    const ver = verifier({ [REPEAT]: refute() });
    const surfacer = critic("assumption_surfacer", () => [finding("HIGH", REPEAT, "sign them in as that user", { known_gap: "made-up-entry" })], [
      "another-entry",
    ]);
    const r = await new AdversarialRetryLoop(async () => ({ artifact: DRAFT }), [surfacer, critic("b", () => [])], ver.v).run(STAGE, context().ctx);
    expect(ver.asked).toHaveLength(1);
    expect(r.forwarded[0]).toMatchObject({ severity: "MEDIUM", severity_change: "refuted" });
    expect(r.forwarded[0]?.known_gap).toBeUndefined();
  });
});
