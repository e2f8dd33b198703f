import type { IssueDetail } from "../read-models/types.js";

/**
 * `issue show --context` (docs/issue.md "The code the councils read"): for each stage of the current
 * cycle, the code blocks its requests carried — which roles read each, its size, and what it holds:
 * each map entry, excerpt and context-file section with its rank, the terms it matched and why.
 */
export function contextView(out: IssueDetail) {
  return {
    issue: out.id,
    cycle: out.cycle,
    stages: out.stages.map((s) => ({ stage: s.stage, phase: s.phase, code_context: s.code_context ?? [] })),
  };
}

const where = (i: { path: string; start_line?: number; end_line?: number }) =>
  i.start_line !== undefined ? `${i.path}:${i.start_line}-${i.end_line ?? i.start_line}` : i.path;

/** The text `issue show --context` prints. */
export function contextText(out: IssueDetail, safe: (s: string) => string): string {
  const view = contextView(out);
  const lines = [`#${out.id} · cycle ${out.cycle}: the code its councils read`];
  if (!view.stages.some((s) => s.code_context.length)) {
    lines.push(
      "",
      out.stages.length
        ? "No request of this cycle carried code: no repository (project.repo, implement.repo) and no project.context_files are configured, or the budget is 0 (docs/issue.md)."
        : "No stage of this cycle has run yet.",
    );
    return `${lines.join("\n")}\n`;
  }
  for (const s of view.stages) {
    lines.push("", `${s.phase} · ${s.stage}${s.code_context.length ? "" : ": no code"}`);
    for (const [k, block] of s.code_context.entries()) {
      lines.push(`  block ${k + 1} · ~${block.tokens} tokens · read by ${block.roles.join(", ")}`);
      for (const i of block.items) {
        const terms = i.terms.length ? ` [${i.terms.slice(0, 6).map(safe).join(", ")}]` : "";
        lines.push(`    ${String(i.rank).padStart(2)}. ${i.kind.padEnd(10)} ${safe(where(i))} (~${i.tokens}) — ${safe(i.why)}${terms}`);
      }
    }
  }
  return `${lines.join("\n")}\n`;
}
