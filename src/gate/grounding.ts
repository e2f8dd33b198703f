import type { AuditConcern } from "../contracts/audit.js";

const collapse = (s: string) => s.replace(/\s+/g, " ").trim();
// A model quoting evidence often wraps it in quotes or trims it with an ellipsis; neither is part of the quote.
const unwrap = (s: string) => s.replace(/^(?:["'“”‘’`]|\.\.\.|…)+|(?:["'“”‘’`]|\.\.\.|…)+$/g, "").trim();

/**
 * Keeps the concerns whose evidence is a verbatim excerpt of the draft (compared after
 * collapsing whitespace). `missing_verification` may point at nothing: empty evidence is fine.
 */
export function groundConcerns(draft: string, concerns: readonly AuditConcern[]): { grounded: AuditConcern[]; ungrounded: AuditConcern[] } {
  const text = collapse(draft);
  const grounded: AuditConcern[] = [];
  const ungrounded: AuditConcern[] = [];
  for (const c of concerns) {
    const evidence = unwrap(collapse(c.evidence));
    const ok = evidence === "" ? c.category === "missing_verification" : text.includes(evidence);
    (ok ? grounded : ungrounded).push(c);
  }
  return { grounded, ungrounded };
}
