import { afterEach, describe, expect, it, vi } from "vitest";
import { findings, holdWorld, ok, type HoldWorld } from "../support/hold.js";

/**
 * Model text printed by the real CLI is terminal-safe (docs/errors.md "Model text on a terminal",
 * issue 32): a model's ESC sequences, BEL, OSC 52 clipboard write, C1 CSI, DEL and bare carriage
 * return are shown as `\xHH`, never sent to the terminal; `--json` escapes them as JSON does and
 * gives the text back exactly.
 */

vi.setConfig({ testTimeout: 120_000 });

/** A hostile answer: clears the screen, retitles the window, writes the clipboard, a C1 CSI, DEL, a bare CR that overwrites, BEL. */
const HOSTILE =
  "The answer is 4. \u001b[2J\u001b]0;pwned\u0007Copy this \u001b]52;c;cm0gLXJmIC8=\u0007 now \u009b31mred\u007f\rhidden and a bell \u0007.\nline two\twith a tab";
const SHOWN =
  "The answer is 4. \\x1b[2J\\x1b]0;pwned\\x07Copy this \\x1b]52;c;cm0gLXJmIC8=\\x07 now \\x9b31mred\\x7f\\x0dhidden and a bell \\x07.\nline two\twith a tab";
/** A raw control character a terminal acts on: anything but newline and tab below space, DEL, C1. */
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const CONCERN = "Rings the bell \u0007 and sets the title \u001b]2;owned\u001b\\ here \u009b0m";

/** Every string in a JSON value. */
const strings = (v: unknown): string[] =>
  typeof v === "string" ? [v] : Array.isArray(v) ? v.flatMap(strings) : v && typeof v === "object" ? Object.values(v).flatMap(strings) : [];

let w: HoldWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

/** Asserts nothing in a run's output would act on a terminal. */
function expectNoRaw(out: { stdout: string; stderr: string }) {
  expect(out.stdout, JSON.stringify(out.stdout)).not.toMatch(RAW);
  expect(out.stderr, JSON.stringify(out.stderr)).not.toMatch(RAW);
}

describe("model text on a terminal", () => {
  it("dissent run prints a hostile answer with every control shown as \\xHH; --json escapes them and parses back to the model's text", async () => {
    w = await holdWorld({
      executor: HOSTILE,
      challenger: JSON.stringify({
        verdict: "pass",
        concerns: [{ severity: "low", category: "factual_risk", evidence: "The answer is 4.", concern: CONCERN }],
      }),
    });
    const human = ok(await w.run(["run", "--audit", "What is 2 + 2?"]), "run");
    expectNoRaw(human);
    expect(human.stdout).toBe(`${SHOWN}\n`);

    const asJson = ok(await w.run(["run", "--audit", "--json", "What is 2 + 2?"]), "run --json");
    expectNoRaw(asJson);
    expect(asJson.stdout).toContain("\\u009b31m"); // C1, which JSON.stringify leaves raw, escaped as JSON escapes it
    const out = JSON.parse(asJson.stdout) as { final_output: string; audit: { concerns: { concern: string }[] } };
    expect(out.final_output).toBe(HOSTILE);
    expect(out.audit.concerns.map((c) => c.concern)).toEqual([CONCERN]);
  });

  it("issue show, issue list and events show a hostile title, plan and concern as text", async () => {
    w = await holdWorld({
      planner: `# Plan\n\n${HOSTILE}\n`,
      "plan.tester": findings([{ severity: "MEDIUM", category: "test_strategy", concern: CONCERN }]),
    });
    const id = await w.newIssue("Retry \u001b]0;title\u0007 uploads \u009b2J", "Body \u001b[8mhidden\u001b[0m text.");
    ok(await w.run(["issue", "plan", id]), "issue plan");

    const shown = ok(await w.run(["issue", "show", id]), "issue show");
    expectNoRaw(shown);
    expect(shown.stdout).toContain("Retry \\x1b]0;title\\x07 uploads \\x9b2J");
    expect(shown.stdout).toContain("Body \\x1b[8mhidden\\x1b[0m text.");
    expect(shown.stdout).toContain(SHOWN.split("\n")[0]);
    expect(shown.stdout).toContain("Rings the bell \\x07 and sets the title \\x1b]2;owned\\x1b\\ here \\x9b0m");

    const plan = ok(await w.run(["issue", "show", id, "--artifact", "plan"]), "issue show --artifact plan");
    expectNoRaw(plan);
    expect(plan.stdout).toContain("\\x1b]52;c;cm0gLXJmIC8=\\x07");

    for (const args of [["issue", "list"], ["events"], ["events", "--issue", id]]) expectNoRaw(ok(await w.run(args), args.join(" ")));

    const asJson = ok(await w.run(["issue", "show", id, "--json"]), "issue show --json");
    expectNoRaw(asJson);
    const out = JSON.parse(asJson.stdout) as { title: string; plan: string };
    expect(out.title).toBe("Retry \u001b]0;title\u0007 uploads \u009b2J");
    expect(out.plan).toContain(HOSTILE);
    const events = ok(await w.run(["events", "--json"]), "events --json");
    expectNoRaw(events);
    // Every line is JSON still, and gives the concern back exactly (its C1 escaped as JSON escapes it, not as \xHH).
    const parsed = events.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as unknown);
    expect(parsed.flatMap(strings)).toContain(CONCERN);
  });
});
