import { afterEach, describe, expect, it } from "vitest";
import { audit, byRole, world, type World } from "../support/e2e.js";

/**
 * `dissent run --audit --fail-on …` (issue 31 item 6; docs/run.md "Failing a CI job"; docs/errors.md
 * "Exit codes"): the gate as a CI check. The real CLI against a model server on 127.0.0.1; the
 * answer is printed whatever happens, and the exit code says which condition held.
 */
const PROMPT = "How tall is the Eiffel Tower?";
const DRAFT = "The Eiffel Tower is 330 m tall. It is made of cheese.";
/** A revision that only removes: no drift. */
const CLEAN = "The Eiffel Tower is 330 m tall.";
/** A revision that adds a name and a figure nothing given holds: drift. */
const GILDED = "The Eiffel Tower is 330 m tall and was built by Gustave Eiffel's company with 18,038 iron parts.";
const cheese = { category: "factual_risk", severity: "high", evidence: "It is made of cheese", concern: "The tower is iron." };

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const passes = () => byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } });
const needsWork = (revision: string) =>
  byRole({ executor: { content: DRAFT }, challenger: { content: audit("needs_work", [cheese]) }, revision: { content: revision } });
const challengerDown = () => byRole({ executor: { content: DRAFT }, challenger: { status: 500, raw: '{"error":{"message":"down"}}' } });
const stderrLines = (s: string) => s.split("\n").filter((l) => l !== "");

describe("dissent run --audit --fail-on", () => {
  it("exits 0 when no condition holds: a pass, with every condition asked for", async () => {
    w = await world(passes());
    const r = await w.run(["run", "--audit", "--fail-on", "needs_work,challenger_failed,drift", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
    expect(r.stderr).toBe("");
  });

  it("needs_work: exit 3, the revised answer still on stdout, one line on stderr saying why", async () => {
    w = await world(needsWork(CLEAN));
    const r = await w.run(["run", "--audit", "--fail-on", "needs_work", PROMPT]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(`${CLEAN}\n`);
    expect(stderrLines(r.stderr)).toEqual([
      "dissent: --fail-on needs_work: the challenger's verdict was needs_work (1 grounded concern; the answer printed is the revision)",
      "dissent: exiting 3 (--fail-on: needs_work 3; docs/errors.md#exit-codes)",
    ]);
  });

  it("without --fail-on the same run exits 0 (the default is unchanged)", async () => {
    w = await world(needsWork(CLEAN));
    const r = await w.run(["run", "--audit", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${CLEAN}\n`);
  });

  it("challenger_failed: exit 4 with the draft, unaudited; needs_work alone does not fail a run with no verdict", async () => {
    w = await world(challengerDown());
    const failed = await w.run(["run", "--audit", "--fail-on", "challenger_failed", PROMPT]);
    expect(failed.code).toBe(4);
    expect(failed.stdout).toBe(`${DRAFT}\n`);
    expect(failed.stderr).toMatch(/^dissent: --fail-on challenger_failed: the challenger failed and the draft is unaudited: /m);
    expect(failed.stderr).toContain("dissent: exiting 4 (--fail-on: challenger_failed 4;");
    const onlyNeedsWork = await w.run(["run", "--audit", "--fail-on", "needs_work", PROMPT]);
    expect(onlyNeedsWork.code).toBe(0);
  });

  it("drift: exit 5 when the revision adds facts, and only then; with needs_work too, the higher code (5) wins and both are said", async () => {
    w = await world(needsWork(GILDED));
    const drift = await w.run(["run", "--audit", "--json", "--fail-on", "drift", PROMPT]);
    expect(drift.code).toBe(5);
    const out = JSON.parse(drift.stdout) as { final_output: string; audit_meta: { revision_drift: { text: string }[] } };
    expect(out.final_output).toBe(GILDED);
    expect(out.audit_meta.revision_drift.map((d) => d.text)).toEqual(["18,038", "Gustave Eiffel's"]);
    expect(stderrLines(drift.stderr).filter((l) => l.startsWith("dissent: --fail-on"))).toEqual([
      "dissent: --fail-on drift: the revision added 2 facts found in nothing given (audit_meta.revision_drift)",
    ]);

    const both = await w.run(["run", "--audit", "--fail-on", "needs_work", "--fail-on", "drift", PROMPT]);
    expect(both.code).toBe(5);
    expect(both.stderr).toContain("dissent: exiting 5 (--fail-on: needs_work 3, drift 5;");
  });

  it("drift does not fire on a clean revision: exit 0", async () => {
    w = await world(needsWork(CLEAN));
    const r = await w.run(["run", "--audit", "--fail-on", "drift", PROMPT]);
    expect(r.code).toBe(0);
  });

  it("a bad condition, or --fail-on without --audit, is a usage error (exit 2) before any model call", async () => {
    w = await world(passes());
    const typo = await w.run(["run", "--audit", "--fail-on", "needs-work", PROMPT]);
    expect(typo.code).toBe(2);
    expect(stderrLines(typo.stderr)).toEqual([
      "dissent: error: --fail-on needs-work: not a condition (needs_work, challenger_failed, drift); did you mean 'needs_work'?",
    ]);
    const noAudit = await w.run(["run", "--fail-on", "needs_work", PROMPT]);
    expect(noAudit.code).toBe(2);
    expect(noAudit.stderr).toContain("--fail-on needs --audit");
    const empty = await w.run(["run", "--audit", "--fail-on", ",", PROMPT]);
    expect(empty.code).toBe(2);
    expect(w.server.requests).toHaveLength(0);
  });
});
