import { afterEach, describe, expect, it } from "vitest";
import { byRole, parseJsonOut, requestsOf, world, type World } from "../support/e2e.js";
import { findings, pipelineWorld, stageOf, type PipelineWorld } from "../support/pipeline-e2e.js";
import { startDissent, until } from "../support/proc.js";

/**
 * Issue #9, reply defects 4, 5, 6, 9 and 10: how dissent reads what a model wrote. Each test
 * reproduces the defect through the CLI against a server on 127.0.0.1 (docs/configuration.md, §3, §4 r2).
 */

const PROMPT = "Name a prime number.";
const DRAFT = "Seven is a prime number.";
const REVISED = "Seven is a prime number: its only divisors are one and seven.";

let w: World | undefined;
let p: PipelineWorld | undefined;
afterEach(async () => {
  await w?.close();
  await p?.close();
  w = undefined;
  p = undefined;
});

/** The generous ceiling for a run that must not hang (the defect took 24 s to days). */
const PROMPTLY_MS = 10_000;

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  const value = await f();
  return { value, ms: Date.now() - t0 };
}

describe("#9.4 a hostile reply is read in linear time, and a signal is always answered", () => {
  it("a challenger reply of 100,000 `{`: run --audit fails open promptly with the draft, and so does the rerun from the cache", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: "{".repeat(100_000) } }));
    const first = await timed(() => w!.run(["run", "--audit", "--json", PROMPT]));
    const out = parseJsonOut(first.value);
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta.challenger_status).toBe("failed");
    expect(first.ms).toBeLessThan(PROMPTLY_MS);

    // The unparseable reply was cached as received: the rerun reads it again, and must not hang either.
    const again = await timed(() => w!.run(["run", "--audit", PROMPT]));
    expect(again.value.code).toBe(0);
    expect(again.value.stdout).toBe(`${DRAFT}\n`);
    expect(again.value.stderr).toMatch(/challenger/);
    expect(again.ms).toBeLessThan(PROMPTLY_MS);
    expect(requestsOf(w.server, "challenger")).toHaveLength(1);
  });

  it("a challenger reply of about 5 MB of unclosed objects: run --audit still fails open promptly with the draft", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: '{"a":['.repeat(850_000) } }));
    const { value, ms } = await timed(() => w!.run(["run", "--audit", PROMPT]));
    expect(value.code).toBe(0);
    expect(value.stdout).toBe(`${DRAFT}\n`);
    expect(value.stderr.split("\n").filter(Boolean)).toEqual([expect.stringMatching(/challenger/)]);
    expect(ms).toBeLessThan(PROMPTLY_MS);
  });

  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s sent while a 10 MB reply is being handled is answered: exit %i", async (signal, exit) => {
    // One discovery critic answers 10 MB of `{`; another never answers in time, so the run is
    // still going whatever the parse costs. Before the fix the parse blocked the process for days.
    p = await pipelineWorld((model) => {
      if (model === "discovery.problem_sharpener") return { content: "{".repeat(10_000_000) };
      if (model === "discovery.cheapest_test_advocate") return { content: findings(), delayMs: 60_000 };
      return undefined;
    });
    const id = await p.newIssue("Add retries to the HTTP client", "", ["dissent-load-bearing"]);
    const home = `${p.dir}/home`;
    const { child, done } = startDissent(["issue", "plan", id], { cwd: p.dir, env: { DISSENT_HOME: home } });
    await until(() => p!.requestsFor("discovery.problem_sharpener") > 0 && p!.requestsFor("discovery.cheapest_test_advocate") > 0);
    await new Promise((r) => setTimeout(r, 1_000)); // the huge reply has been sent and is being read
    const t0 = Date.now();
    child.kill(signal);
    const r = await Promise.race([done, new Promise<null>((r) => setTimeout(() => r(null), PROMPTLY_MS))]);
    if (r === null) child.kill("SIGKILL");
    expect(r, `the CLI ignored ${signal}`).not.toBeNull();
    expect(r?.code).toBe(exit);
    expect(Date.now() - t0).toBeLessThan(PROMPTLY_MS);
  });
});

describe("#9.5 a producer's artifact is its markdown, never a JSON sample inside it", () => {
  const SAMPLE = '```json\n{"artifact": "dist/app.zip"}\n```';
  const plans = {
    "in the middle": `# Plan: publish the build\n\n1. Run the build and zip the output.\n2. Write the manifest the deploy script reads, for example:\n\n${SAMPLE}\n\n3. Upload the zip to the release page.`,
    "at the very end": `# Plan: publish the build\n\n1. Run the build and zip the output.\n2. Upload the zip to the release page.\n3. Write the manifest the deploy script reads, for example:\n\n${SAMPLE}`,
  };

  it.each(Object.entries(plans))('a fenced {"artifact": "dist/app.zip"} example %s stays part of the plan', async (_where, plan) => {
    p = await pipelineWorld((model) => (model === "planner" ? { content: plan } : undefined));
    const id = await p.newIssue("Publish the build", "", ["dissent-trivial"]);
    const { out } = await p.plan(id);
    expect(out.plan).toBe(plan);
    const shown = await p.run(["issue", "show", id, "--artifact", "plan"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toBe(`${plan}\n`);
  });

  it('a trailing fenced {"addressed": [...]} block is cut off the artifact (and read)', async () => {
    const PLAN_1 = "# Plan\n\n1. Store the session token in a cookie readable by scripts.\n2. Ship it.";
    const PLAN_2 = "# Plan\n\n1. Store the session token in an HttpOnly cookie.\n2. Ship it.\n\n## Decisions\n\nThe cookie is HttpOnly.";
    let concernId = "";
    p = await pipelineWorld((model, n) => {
      if (model === "planner") {
        if (n === 0) return { content: PLAN_1 };
        const block = { addressed: [{ concern_id: concernId, resolution_kind: "addressed-in-code", note: "HttpOnly cookie" }] };
        return { content: `${PLAN_2}\n\n\`\`\`json\n${JSON.stringify(block, null, 2)}\n\`\`\`` };
      }
      if (model === "plan_reviewer" && n === 0) {
        return { content: findings({ severity: "HIGH", concern: "A script-readable token can be stolen by XSS.", evidence: "cookie readable by scripts" }) };
      }
      return undefined;
    });
    const id = await p.newIssue("Keep users signed in", "", ["dissent-trivial"]);
    const first = (await p.plan(id)).out;
    expect(first.status).toBe("needs_replan");
    concernId = first.pending_concerns.find((c) => c.severity === "HIGH")?.id ?? "";
    expect(concernId).not.toBe("");

    const { out } = await p.plan(id);
    expect(out.plan).toBe(PLAN_2);
    expect((await p.run(["issue", "show", id, "--artifact", "plan"])).stdout).toBe(`${PLAN_2}\n`);
    const events = (await p.run(["events", "--issue", id, "--json"])).stdout;
    expect(events).toContain('"ConcernAddressed"');
  });
});

describe("#9.6 a quote of the text under review is never the reply", () => {
  it('a challenger needs_work followed by a quoted {"verdict":"pass"} from the draft stays needs_work: revised, 3 requests', async () => {
    const draft = 'The audit API always answers within 5 ms. A clean draft gets {"verdict":"pass","concerns":[]} back.';
    const reply = `${JSON.stringify({
      concerns: [
        { category: "unverifiable_claim", severity: "medium", evidence: "always answers within 5 ms", concern: "No source backs the latency figure." },
      ],
      verdict: "needs_work",
    })}\n\nFor reference, the draft says a clean draft gets {"verdict":"pass","concerns":[]} back.`;
    w = await world(byRole({ executor: { content: draft }, challenger: { content: reply }, revision: { content: REVISED } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", "How does the audit API report a clean draft?"]));
    expect(out.audit_meta).toMatchObject({ audit_verdict: "needs_work", revised: true, concerns: 1 });
    expect(out.final_output).toBe(REVISED);
    expect(w.server.requests).toHaveLength(3);
  });

  it('a critic\'s CRITICAL followed by a quoted {"findings": []} from the plan counts: the plan stage does not converge in round 1', async () => {
    const PLAN_1 = '# Plan\n\n1. Delete the old user table before copying its rows.\n2. Run the linter; it prints {"findings": []} when the code is clean.';
    const PLAN_2 = "# Plan\n\n1. Copy the rows of the old user table, check the counts, then delete it.\n2. Run the linter.";
    p = await pipelineWorld((model, n) => {
      if (model === "planner") return { content: n === 0 ? PLAN_1 : PLAN_2 };
      if (model === "plan.risk_skeptic" && n === 0) {
        const critical = findings({
          severity: "CRITICAL",
          concern: "Deleting the table before copying it loses every row.",
          evidence: "Delete the old user table before copying its rows",
        });
        return { content: `${critical}\n\nThe plan itself notes that the linter prints {"findings": []} when the code is clean.` };
      }
      // An honest empty answer on the first plan would equal the quote; the other critics note a nit.
      if (["assumption_surfacer", "plan.builder", "plan.tester"].includes(model) && n === 0)
        return { content: findings({ severity: "LOW", concern: "Name the linter command." }) };
      return undefined;
    });
    const id = await p.newIssue("Migrate the user table", "", ["dissent-load-bearing"]);
    const { out } = await p.plan(id);
    const plan = stageOf(out, "plan");
    expect(plan.rounds).toBeGreaterThan(1);
    expect(p.requestsFor("planner")).toBe(2);
    expect(out.plan).toBe(PLAN_2);
  });
});

describe("#9.9 lenient enums: one bad item is dropped and counted, never the whole reply", () => {
  const PLAN_1 = "# Plan\n\n1. Delete the old user table before copying its rows.\n2. Ship it.";
  const PLAN_2 = "# Plan\n\n1. Copy the rows of the old user table, check the counts, then delete it.\n2. Ship it.";
  const CRITICAL = {
    severity: "CRITICAL",
    concern: "Deleting the table before copying it loses every row.",
    evidence: "Delete the old user table before copying its rows",
  };

  /** Runs a load-bearing issue whose plan.risk_skeptic answers `first` to the first plan. */
  async function planWithFirstRiskReply(first: string) {
    p = await pipelineWorld((model, n) => {
      if (model === "planner") return { content: n === 0 ? PLAN_1 : PLAN_2 };
      if (model === "plan.risk_skeptic" && n === 0) return { content: first };
      return undefined;
    });
    const id = await p.newIssue("Migrate the user table", "", ["dissent-load-bearing"]);
    return (await p.plan(id)).out;
  }

  it.each([
    ["severity INFO", { severity: "INFO", concern: "The plan is easy to follow." }],
    ["an empty concern", { severity: "HIGH", concern: "" }],
  ])("a critic's valid CRITICAL beside a finding with %s still counts; invalid_findings counts the dropped one", async (_what, bad) => {
    const out = await planWithFirstRiskReply(JSON.stringify({ findings: [bad, CRITICAL] }));
    const plan = stageOf(out, "plan");
    expect(plan.rounds).toBeGreaterThan(1);
    expect(plan.invalid_findings).toBe(1);
    expect(plan.critic_failures).toBe(0);
    expect(out.plan).toBe(PLAN_2);
  });

  it("a bare JSON array of findings is read as the findings", async () => {
    const out = await planWithFirstRiskReply(JSON.stringify([CRITICAL]));
    const plan = stageOf(out, "plan");
    expect(plan.rounds).toBeGreaterThan(1);
    expect(plan.critic_failures).toBe(0);
    expect(out.plan).toBe(PLAN_2);
  });

  it('a challenger verdict "Needs Work" is read as needs_work: revised, 3 requests', async () => {
    const reply = JSON.stringify({
      concerns: [{ category: "Factual Risk", severity: "High", evidence: "Seven is a prime number", concern: "State why seven is prime." }],
      verdict: "Needs Work",
    });
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: reply }, revision: { content: REVISED } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(out.audit_meta).toMatchObject({ challenger_status: "ok", audit_verdict: "needs_work", revised: true, concerns: 1 });
    expect(out.final_output).toBe(REVISED);
    expect(w.server.requests).toHaveLength(3);
  });
});

describe("#9.10 the trailing-comma repair leaves strings alone", () => {
  it("evidence quoting `{a,}` and `[b, ]` stays grounded beside a real trailing comma: needs_work, revised", async () => {
    const draft = "To allow trailing commas, use {a,} and [b, ] in the config file.";
    // A real trailing comma after the last concern and after the verdict: JSON.parse fails, repair is needed.
    const reply =
      '{"concerns": [{"category": "factual_risk", "severity": "high", "evidence": "use {a,} and [b, ] in the config", ' +
      '"concern": "JSON does not allow trailing commas."},], "verdict": "needs_work",}';
    w = await world(byRole({ executor: { content: draft }, challenger: { content: reply }, revision: { content: REVISED } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", "How do I allow trailing commas in the config?"]));
    expect(out.audit_meta).toMatchObject({ challenger_status: "ok", audit_verdict: "needs_work", revised: true, concerns: 1, ungrounded_concerns: 0 });
    expect(out.final_output).toBe(REVISED);
    expect(w.server.requests).toHaveLength(3);
  });
});
