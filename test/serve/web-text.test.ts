/**
 * The page's text helpers (src/web/text.ts, src/web/format.ts): where a critic's quote sits in a draft
 * (as models quote: curly quotes, markdown marks, `...` between parts), what changed between two
 * drafts, a name shortened for a chart's axis, dollars with estimates.
 */
import { describe, expect, it } from "vitest";
import { shortLabel, usageUsd } from "../../src/web/format.js";
import { draftDiff, highlight } from "../../src/web/text.js";

const marked = (text: string, quotes: string[]) =>
  highlight(text, quotes)
    .filter((p) => p.mark !== undefined)
    .map((p) => [p.mark, p.text]);

describe("highlight: a quote found in the draft as a model quotes it", () => {
  const draft = "## Approach\n- Find the existing user by the **profile's** email and sign them in.\n- Keep a “grace period” of 30 days.";

  it("ignores case, markdown marks, straight-for-curly quotes and line breaks; keeps the text whole", () => {
    expect(marked(draft, ["find the existing user by the profile's email", 'keep a "grace period"'])).toEqual([
      [0, "Find the existing user by the **profile's** email"],
      [1, "Keep a “grace period”"],
    ]);
    expect(
      highlight(draft, ["sign them in"])
        .map((p) => p.text)
        .join(""),
    ).toBe(draft);
  });

  it("marks each part of a quote cut with '...', in order; a quote that is not there marks nothing", () => {
    expect(marked(draft, ["Find the existing user ... sign them in"])).toEqual([
      [0, "Find the existing user"],
      [0, "sign them in"],
    ]);
    expect(marked(draft, ["Delete the user's account"])).toEqual([]);
    expect(marked(draft, ['"Keep a “grace period” of 30 days."'])).toEqual([[0, "Keep a “grace period” of 30 days."]]);
  });
});

describe("draftDiff: what changed from one round's draft to the next", () => {
  const before = ["# Plan", "", "1. Store chunks.", "2. Sign in by email.", "3. Log it.", "4. Ship.", "5. Tell support.", "6. Done."].join("\n");
  const after = ["# Plan", "", "1. Store chunks.", "2. Link only verified emails.", "3. Log it.", "4. Ship.", "5. Tell support.", "6. Done.", ""].join("\n");

  it("the replaced line out and in, its changed words marked; far unchanged lines folded; a final newline is no change", () => {
    const rows = draftDiff(before, after, 1);
    expect(
      rows.map((r) => (r.kind === "skipped" ? `… ${r.lines}` : `${r.kind}: ${r.parts.map((p) => (p.changed ? `[${p.text}]` : p.text)).join("")}`)),
    ).toEqual(["… 2", "same: 1. Store chunks.", "removed: 2. [Sign in by email].", "added: 2. [Link only verified emails].", "same: 3. Log it.", "… 3"]);
  });

  it("two equal drafts: nothing but unchanged lines", () => {
    expect(draftDiff(before, before).every((r) => r.kind === "same" || r.kind === "skipped")).toBe(true);
  });
});

describe("names and dollars as the page shows them", () => {
  it("a long role or model name keeps its own last part whole on a chart's axis", () => {
    expect(shortLabel("discovery.cheapest_test_advocate")).toBe("discov….cheapest_test_advocate");
    expect(shortLabel("local:discovery.problem_sharpener")).toBe("local:disco….problem_sharpener");
    expect(shortLabel("spec.judge")).toBe("spec.judge");
    expect(shortLabel("x".repeat(40))).toHaveLength(30);
  });

  it("an unknown price is an estimate named as one, or 'unpriced' — never $0", () => {
    const u = { known_usd: 0, unpriced_calls: 2, estimated_calls: 2, estimated_usd: 0.0031, estimate_from: ["openai:gpt-4o-mini: …"] };
    expect(usageUsd(u)).toBe("≈$0.0031 est.");
    expect(usageUsd({ ...u, known_usd: 0.5, estimated_calls: 1 })).toBe("$0.50 + ≈$0.0031 est. + 1 unpriced");
    expect(usageUsd({ ...u, estimated_calls: 0, estimated_usd: 0 })).toBe("2 unpriced");
    expect(usageUsd({ known_usd: 0.25, unpriced_calls: 0 })).toBe("$0.25");
  });
});
