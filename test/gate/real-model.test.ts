import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AuditConcern, ShownConcern } from "../../src/contracts/audit.js";
import { gateMetrics } from "../../src/eval/gate-metrics.js";
import { scoreGateItem } from "../../src/eval/score-gate.js";
import { loadGateSet } from "../../src/eval/sets.js";
import type { ChallengeResult } from "../../src/gate/challenge.js";
import { challenge, runAudit } from "../../src/index.js";
import { messageText, scriptedModel } from "../support/mock-model.js";

/**
 * The gate on what a capable frontier model really wrote (test/fixtures/real-model/README.md): every
 * challenger reply of `dissent eval gate` over the bundled set, and every revision, put through the
 * library as a user calls it — `challenge` and `runAudit` over models that answer with the recorded
 * reply — and what a user would see checked: the verdict that survives grounding, the concerns kept,
 * what the eval scores, and the facts a revision brought in (`audit_meta.revision_drift`).
 */

interface RecordedChallenge {
  file: string;
  id: string;
  input: { prompt: string; executor_output: string; constraints: string[]; policies: string[] };
  reply: string;
}
interface RecordedRevision {
  file: string;
  id: string;
  prompt: string;
  draft: string;
  constraints: string[];
  policies: string[];
  concerns: ShownConcern[];
  reply: string;
}
const REAL = JSON.parse(readFileSync(new URL("../fixtures/real-model/gate.json", import.meta.url), "utf8")) as {
  challenges: RecordedChallenge[];
  revisions: RecordedRevision[];
};
const SET = loadGateSet();
const itemOf = (id: string) => {
  const item = SET.items.find((i) => i.id === id);
  if (!item) throw new Error(`no bundled item ${id}`);
  return item;
};
const modelVerdict = (reply: string) => (JSON.parse(reply) as { verdict: string }).verdict;

/** The gate's challenger step on a recorded reply, exactly as the library runs it. */
const audited = (c: RecordedChallenge): Promise<ChallengeResult> =>
  challenge({ challenger: scriptedModel("frontier", [c.reply]), prompt: c.input.prompt, draft: c.input.executor_output, ...lists(c.input) });
const lists = (x: { constraints: string[]; policies: string[] }) => ({ constraints: x.constraints, policies: x.policies });

describe("the gate on the real model's 77 challenger replies", () => {
  it("the recording covers the bundled set: one challenger reply per item, 53 revisions", () => {
    expect(new Set(REAL.challenges.map((c) => c.id)).size).toBe(SET.items.length);
    expect(REAL.revisions).toHaveLength(53);
  });

  it.each(REAL.challenges.map((c) => [c.id, c] as const))(
    "%s: the verdict that survives grounding is the model's (it was right on every item)",
    async (id, c) => {
      expect(modelVerdict(c.reply)).toBe(itemOf(id).expected.verdict); // the recorded model was right here…
      const r = await audited(c);
      expect(r.status).toBe("ok");
      expect(r.verdict).toBe(modelVerdict(c.reply)); // …and grounding keeps its verdict
    },
  );

  it("code-003 stays needs_work: the two-word quote `import requests`, a whole line of the draft, grounds", async () => {
    const c = REAL.challenges.find((x) => x.id === "code-003");
    if (!c) throw new Error("no code-003");
    const r = await audited(c);
    expect(r.verdict).toBe("needs_work");
    expect(r.concerns.map((k) => k.evidence)).toEqual(["import requests"]);
    expect(r.ungrounded).toEqual([]);
  });

  it("no concern of the 79 the model raised is dropped as ungrounded (the recorded run lost 1: code-003's)", async () => {
    const results = await Promise.all(REAL.challenges.map(audited));
    const raised = results.reduce((n, r) => n + r.concerns.length + r.ungrounded.length, 0);
    expect(raised).toBe(79);
    expect(results.flatMap((r) => r.ungrounded.map((u: AuditConcern) => u.evidence))).toEqual([]);
  });

  it("scored by `dissent eval gate`: `anywhere` defects are found wherever the model pointed; verdict accuracy 1", async () => {
    const outcomes = await Promise.all(
      REAL.challenges.map(async (c) => scoreGateItem(itemOf(c.id), await audited(c), null, { calls: [], model_cost_usd: null, wall_ms: 0 })),
    );
    const m = gateMetrics(outcomes);
    expect(m.verdict_accuracy.value).toBe(1);
    const anywhere = outcomes.flatMap((o) => o.defects.filter((d) => d.anywhere).map((d) => [o.id, d.found]));
    // Each is a defect of the whole draft, and the model named it while quoting another passage than the set's.
    expect(anywhere).toEqual([
      ["cook-013", true], // six bullets where three were allowed
      ["code-003", true], // a third-party package where only the standard library may be used
      ["code-012", true], // an explanation where only the command was asked for
      ["health-006", true], // no "check with your cardiologist first"
      ["finance-007", true], // over 100 words against a limit of 50
    ]);
    expect(m.recall.value).toBe(1); // the recorded run, before `anywhere` and the short-quote rule: 0.95
    // What precision still counts against the model: second findings beside the planted one, each of another passage.
    const unplanted = outcomes.flatMap((o) => o.concerns.filter((c) => c.matches.length === 0).map(() => o.id));
    expect(unplanted).toEqual(["travel-002", "travel-011", "ops-005", "ops-011"]);
  });
});

describe("the gate on the real model's 53 revisions: revision drift", () => {
  /** The whole gate (`runAudit`) on a recorded item: the draft, the recorded challenger reply, the recorded revision. */
  async function gateOn(rev: RecordedRevision) {
    const c = REAL.challenges.find((x) => x.input.executor_output === rev.draft);
    if (!c) throw new Error(`no challenger reply for ${rev.id}`);
    const executor = scriptedModel("frontier", [rev.draft, rev.reply]);
    const warnings: string[] = [];
    const result = await runAudit({
      executor,
      challenger: scriptedModel("frontier-2", [c.reply]),
      prompt: rev.prompt,
      ...lists(rev),
      onWarning: (m) => void warnings.push(m),
    });
    const ask = messageText(executor.doGenerateCalls[1]?.prompt.at(-1) ?? { role: "user", content: [] });
    return { result, warnings, ask };
  }

  it.each(REAL.revisions.map((r) => [r.id, r] as const))(
    "%s: revised, with the recorded concerns; drift listed and warned about together",
    async (_id, rev) => {
      const { result, warnings, ask } = await gateOn(rev);
      for (const k of rev.concerns) expect(ask).toContain(JSON.stringify(k.concern)); // the same grounded concerns reached the revision
      expect(result.audit_meta.revised).toBe(true);
      expect(result.final_output).toBe(rev.reply);
      const drift = result.audit_meta.revision_drift;
      expect(drift).toBeDefined();
      expect(warnings).toHaveLength(drift?.length ? 1 : 0);
      for (const d of drift ?? []) expect(warnings[0]).toContain(d.text);
    },
  );

  it("11 of 53 revisions brought in facts the executor was never given (the recorded run's drift check said 17: six false alarms gone)", async () => {
    // ADR-036: the recorded run flagged 17 with the check of its day. Gone since: derived values
    // (cook-006's 70% from 350 g to 500 g, finance-001's $11,025, finance-005's $7,500 to $15,000),
    // conversions a policy demanded (cook-013: 60 ml, 220 °C), code keywords (None, False: code-002,
    // code-005, code-014) and step references (ops-008). Added: a number word and a replaced dose
    // whose digits the draft held elsewhere (travel-005's six nights, health-001's 4 g).
    const drifted = [];
    for (const rev of REAL.revisions) if ((await gateOn(rev)).result.audit_meta.revision_drift?.length) drifted.push(rev.id);
    expect(drifted).toEqual([
      "cook-003",
      "cook-008",
      "cook-009",
      "travel-002",
      "travel-005",
      "travel-006",
      "travel-010",
      "health-001",
      "health-010",
      "health-012",
      "ops-011",
    ]);
  });

  it.each([
    ["cook-003", "145 °F (63 °C) corrected to 165 °F (74 °C)", ["165", "74"]],
    ["cook-008", "350 °C corrected to 180 °C", ["180"]],
  ])("%s: a corrected number (%s) is in revision_drift and in the warning line", async (id, _what, numbers) => {
    const rev = REAL.revisions.find((r) => r.id === id);
    if (!rev) throw new Error(`no revision of ${id}`);
    const { result, warnings } = await gateOn(rev);
    const drifted = (result.audit_meta.revision_drift ?? []).filter((d) => d.kind === "number").map((d) => d.text);
    expect(drifted).toEqual(expect.arrayContaining(numbers));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).not.toContain("\n");
    for (const n of numbers) expect(warnings[0]).toContain(n);
  });
});
