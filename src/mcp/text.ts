/** The short text rendering of each tool's result, for clients that show text only (docs/mcp.md). */

interface ShownConcern {
  severity: string;
  concern: string;
  evidence: string;
  category?: string;
  id?: string;
}
const line = (c: ShownConcern) =>
  `- ${c.severity.toUpperCase()}${c.id ? ` ${c.id}` : ""}${c.category ? ` [${c.category}]` : ""}: ${c.concern} (evidence: "${c.evidence}")`;
const list = (cs: readonly ShownConcern[], none: string) => (cs.length ? cs.map(line).join("\n") : none);

/** `challenge`. */
export function challengeText(r: { verdict: string | null; concerns: ShownConcern[]; ungrounded: ShownConcern[]; challenger_error?: string }): string {
  if (r.verdict === null) return `challenger failed, the draft is unaudited: ${r.challenger_error ?? "no reply"}`;
  const dropped = r.ungrounded.length ? `\n(${r.ungrounded.length} ungrounded concern${r.ungrounded.length === 1 ? "" : "s"} dropped)` : "";
  return `verdict: ${r.verdict}\n${list(r.concerns, "no grounded concerns")}${dropped}`;
}

/** `audit`. */
export function auditText(r: { final_output: string; audit_meta: Record<string, unknown> }): string {
  const m = r.audit_meta;
  return `${r.final_output}\n\n(audit: ${String(m.audit_verdict ?? m.challenger_status)}${m.revised ? ", revised" : ""})`;
}

/** `plan_issue`. */
export function planText(r: { issue: string; status: string; route: string; plan: string; pending_concerns: ShownConcern[]; calls: number }): string {
  return [
    `issue ${r.issue}: ${r.status} (${r.route}, ${r.calls} network call${r.calls === 1 ? "" : "s"})`,
    "",
    r.plan.trim(),
    "",
    `pending concerns (${r.pending_concerns.length}):`,
    list(r.pending_concerns, "none"),
  ].join("\n");
}

/** `issue_status`. */
export function statusText(r: {
  issue: string;
  title: string;
  status: string;
  labels: string[];
  pending_concerns: ShownConcern[];
  artifacts: string[];
}): string {
  return [
    `issue ${r.issue}: ${r.title}`,
    `status: ${r.status}  labels: ${r.labels.join(", ") || "none"}`,
    `artifacts: ${r.artifacts.join(", ") || "none"}`,
    `pending concerns (${r.pending_concerns.length}):`,
    list(r.pending_concerns, "none"),
  ].join("\n");
}

/** `known_gaps`. */
export function gapsText(r: { gaps: { id: string; severity: string; title: string; prs: number[] }[] }): string {
  if (!r.gaps.length) return "no known gaps are relevant";
  return r.gaps.map((g) => `- [${g.id}] ${g.severity} ${g.title}${g.prs.length ? ` (shipped in ${g.prs.map((p) => `PR #${p}`).join(", ")})` : ""}`).join("\n");
}

/** `resolve_concern`. */
export function resolveText(r: { concern_id: string; resolution_kind: string }): string {
  return `concern ${r.concern_id} resolved: ${r.resolution_kind}`;
}
