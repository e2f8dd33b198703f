import { describe, expect, it } from "vitest";
import { severityText } from "../../src/contracts/severity-text.js";

/** One formatter for every view (issue plan, issue show, events, the dashboard): what a user reads about a severity. */
describe("severityText", () => {
  it("a severity as written is shown as is", () => {
    expect(severityText({ severity: "MEDIUM" })).toBe("MEDIUM");
    expect(severityText({ severity: "CRITICAL" })).toBe("CRITICAL");
  });

  it("a refuted HIGH: MEDIUM (raised HIGH, refuted: <reason>), the reason on one line", () => {
    expect(
      severityText({
        severity: "MEDIUM",
        raised_severity: "HIGH",
        severity_change: "refuted",
        second_opinion: { verdict: "refute", reason: "A display preference,\n  not a defect.", by: "verifier" },
      }),
    ).toBe("MEDIUM (raised HIGH, refuted: A display preference, not a defect.)");
  });

  it("a lone HIGH nobody backed: MEDIUM (raised HIGH, not corroborated)", () => {
    expect(severityText({ severity: "MEDIUM", raised_severity: "HIGH", severity_change: "not_corroborated" })).toBe("MEDIUM (raised HIGH, not corroborated)");
  });

  it("an ungrounded finding: MEDIUM (raised CRITICAL, ungrounded: its quote is not in the artifact)", () => {
    expect(severityText({ severity: "MEDIUM", raised_severity: "CRITICAL", severity_change: "ungrounded" })).toBe(
      "MEDIUM (raised CRITICAL, ungrounded: its quote is not in the artifact)",
    );
  });

  it("what made a HIGH block: the verifier's confirm, or a known gap", () => {
    expect(severityText({ severity: "HIGH", second_opinion: { verdict: "confirm", reason: "real", by: "verifier" } })).toBe("HIGH (confirmed by verifier)");
    expect(severityText({ severity: "HIGH", known_gap: "link-by-email-3f2a" })).toBe("HIGH (repeats known gap link-by-email-3f2a)");
  });

  it("concerns recorded before the reason was kept still read right: a CRITICAL can only have been ungrounded", () => {
    expect(severityText({ severity: "MEDIUM", raised_severity: "CRITICAL" })).toBe("MEDIUM (raised CRITICAL, ungrounded: its quote is not in the artifact)");
    expect(severityText({ severity: "MEDIUM", raised_severity: "HIGH" })).toBe("MEDIUM (raised HIGH, not corroborated)");
  });
});
