import type { Concern } from "./concern.js";

/** What the severity text reads of a concern. */
export type SeverityFacts = Pick<Concern, "severity" | "raised_severity" | "severity_change" | "second_opinion" | "known_gap">;

/**
 * A concern's severity as every view shows it — `issue plan`, `issue show`, `events` and the
 * dashboard (docs/issue.md): the severity, and why it differs from what its critic wrote —
 * `MEDIUM (raised HIGH, refuted: <reason>)`, `MEDIUM (raised HIGH, not corroborated)`,
 * `MEDIUM (raised CRITICAL, ungrounded: its quote is not in the artifact)` — or what made a HIGH
 * block: `HIGH (confirmed by verifier)`, `HIGH (repeats known gap <id>)`. Pure, with no imports at
 * run time, so the dashboard's bundle uses the same function.
 */
export function severityText(c: SeverityFacts): string {
  const s = c.severity;
  if (!c.raised_severity || c.raised_severity === s) {
    if (c.second_opinion?.verdict === "confirm") return `${s} (confirmed by ${c.second_opinion.by})`;
    if (c.known_gap) return `${s} (repeats known gap ${c.known_gap})`;
    return s;
  }
  const raised = `raised ${c.raised_severity}`;
  // Concerns recorded before the reason was kept: a CRITICAL can only have been discounted as ungrounded.
  const change =
    c.severity_change ?? (c.second_opinion?.verdict === "refute" ? "refuted" : c.raised_severity === "CRITICAL" ? "ungrounded" : "not_corroborated");
  switch (change) {
    case "refuted":
      return `${s} (${raised}, refuted: ${oneLine(c.second_opinion?.reason ?? "") || "no reason given"})`;
    case "ungrounded":
      return `${s} (${raised}, ungrounded: its quote is not in the artifact)`;
    case "not_corroborated":
      return `${s} (${raised}, not corroborated)`;
  }
}

const oneLine = (t: string) => t.replace(/\s+/g, " ").trim();
