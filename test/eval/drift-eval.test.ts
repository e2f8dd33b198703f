import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadDriftSet, parseDriftSet, runDriftEval, sameFact, scoreDriftItem } from "../../src/eval/drift-eval.js";
import { scratch } from "../support/cli.js";

/**
 * `dissent eval drift` on the bundled set (evals/drift.json; docs/adr/ADR-036): the 20 revisions a
 * frontier model wrote for the gate set (test material in /work/shared/real-model,
 * gate-revisions-2026-12), labelled with the facts each added, and 7 constructed from them. Issue 31
 * item 12's goals: precision ≥ 0.8, and every addition the old check missed caught, none of its
 * false alarms raised again.
 */
const SET = loadDriftSet();
const report = runDriftEval(SET);
const outcome = (id: string) => {
  const o = report.items.find((x) => x.id === id);
  if (!o) throw new Error(`no item ${id}`);
  return o;
};
const flagged = (id: string) => outcome(id).flagged.map((t) => t.text);

describe("the bundled drift set", () => {
  it("holds the 20 real revisions of gate-revisions-2026-12 and 7 constructed from them, every case of issue 31 item 12 among them", () => {
    expect(SET.items).toHaveLength(27);
    const real = SET.items.filter((i) => i.source?.startsWith("real-model/gate-revisions-2026-12/"));
    expect(real).toHaveLength(20);
    const cases = new Set(SET.items.flatMap((i) => i.cases ?? []));
    for (const c of ["derived", "conversion", "code_name", "code_digit", "code_keyword", "number_word", "replacement"]) expect(cases).toContain(c);
  });

  it("meets the goals: precision ≥ 0.8, every labelled drift flagged, no listed non-drift flagged", () => {
    expect(report.metrics.precision.value).toBeGreaterThanOrEqual(0.8);
    expect(report.items.filter((o) => o.missed.length > 0).map((o) => [o.id, o.missed])).toEqual([]);
    expect(report.metrics.recall.value).toBe(1);
    expect(report.metrics.listed_false_alarm_rate.num).toBe(0);
  });

  it("the old check's false alarms are gone: derived values, a demanded conversion, a digit in a code string, a code keyword", () => {
    expect(flagged("finance-001")).toEqual([]); // $10,500 × 1.05 = $11,025
    expect(flagged("finance-005")).toEqual([]); // 3 to 6 months of $2,500: $7,500 to $15,000
    expect(flagged("cook-013")).toEqual([]); // ¼ cup → 60 ml, 425 °F → 220 °C, as the metric-only policy asks
    expect(flagged("code-003")).not.toContain("8"); // "utf-8"
    expect(flagged("code-005")).toEqual([]); // `None`
  });

  it("the additions it missed are caught: a number word, a replaced value whose digits the draft holds elsewhere, new names in code", () => {
    expect(flagged("travel-005")).toEqual(["six nights"]);
    expect(flagged("cook-009")).toEqual(["4–5 days"]);
    const code = flagged("code-003");
    for (const name of ["urllib.request.urlopen", "get_content_charset", "read", "decode", "HTTPError"])
      expect(
        code.some((t) => sameFact(t, name)),
        name,
      ).toBe(true);
  });

  it("what the allowances allow is only what they name: wrong arithmetic, a wrong conversion, a copied value and a new count are drift", () => {
    expect(flagged("finance-001-miscomputed")).toEqual(["11,050"]);
    expect(flagged("finance-005-unsupported")).toEqual(["8,000", "16,000"]);
    expect(flagged("cook-013-misconverted")).toEqual(["250"]);
    expect(flagged("cook-009-copied-value")).toEqual(["10 hours"]);
    expect(flagged("travel-005-number-word")).toEqual(["five nights"]);
    expect(flagged("code-003-stdlib-kept")).toEqual([]);
    expect(flagged("code-005-keywords")).toEqual([]);
  });

  it("is deterministic: the same set gives the same report, intervals included", () => {
    expect(runDriftEval(SET)).toEqual(report);
  });
});

describe("drift set files", () => {
  const item = SET.items[0];
  it("a label matches a flagged token by whole words, not by letters", () => {
    expect(sameFact("resp.headers.get_content_charset", "get_content_charset")).toBe(true);
    expect(sameFact("urllib.error.HTTPError", "HTTPError")).toBe(true);
    expect(sameFact("already", "read")).toBe(false);
    expect(sameFact("4–5 days", "4–5 days")).toBe(true);
  });

  it("a bad item is one line naming the file and the item; a misspelt key suggests the right one", () => {
    const bad = [{ ...item, id: "mine", expected: { drift: [], not_drfit: ["x"] } }];
    expect(() => parseDriftSet(JSON.stringify(bad), "mine.json")).toThrow(
      /^mine\.json: item 'mine' \(#1\): unknown key 'expected\.not_drfit': did you mean 'expected\.not_drift'\?$/,
    );
    expect(() => parseDriftSet("[]", "e.json")).toThrow("e.json: the set has no items");
    expect(() => parseDriftSet(JSON.stringify([item, item]), "d.json")).toThrow(/duplicate id/);
  });

  it("scores an item of the user's own", () => {
    const o = scoreDriftItem({
      id: "own",
      prompt: "How long is the flight?",
      draft: "It takes about 2 hours.",
      revision: "It takes about 3 hours, on Aer Lingus.",
      expected: { drift: ["3 hours", "Aer Lingus"] },
    });
    expect(o).toMatchObject({ caught: ["3 hours", "Aer Lingus"], missed: [], false_alarms: [] });
  });
});

describe("dissent eval drift (the CLI)", () => {
  const BIN = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));
  const cli = (args: string[], cwd: string) => spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });

  it("needs no config and no model: the table on stdout, the goals met; --json is the report", () => {
    const s = scratch("dissent-drift-eval-");
    try {
      const r = cli(["eval", "drift"], s.dir);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^dissent eval drift · the deterministic check, no model calls · 27 revisions \(bundled:drift\.json\)\n/);
      expect(r.stdout).toContain("goals (ADR-036): precision ≥ 0.8 — met; every labelled drift flagged — met");
      const j = cli(["eval", "drift", "--json"], s.dir);
      expect(j.status, j.stderr).toBe(0);
      const parsed = JSON.parse(j.stdout) as typeof report;
      expect(parsed.kind).toBe("dissent.eval.drift");
      expect(parsed.metrics.precision).toEqual(report.metrics.precision);
      writeFileSync(join(s.dir, "broken.json"), "[{");
      const broken = cli(["eval", "drift", "--set", "broken.json"], s.dir);
      expect(broken.status).toBe(2);
      expect(broken.stderr).toMatch(/^dissent: error: broken\.json: not valid JSON: .*\n$/);
    } finally {
      s.cleanup();
    }
  });
});
