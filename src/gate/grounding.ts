import { ground, groundingText } from "../adversarial/grounding.js";
import type { AuditConcern } from "../contracts/audit.js";

/**
 * Keeps the concerns whose evidence is in the draft (docs/run.md, "Grounding": normalised, at least
 * 3 words or a whole line or inline code span of 12+ characters, `...` parts in order).
 * `missing_verification` may point at nothing: empty evidence is fine.
 */
export function groundConcerns(draft: string, concerns: readonly AuditConcern[]): { grounded: AuditConcern[]; ungrounded: AuditConcern[] } {
  const text = groundingText(draft);
  const grounded: AuditConcern[] = [];
  const ungrounded: AuditConcern[] = [];
  for (const c of concerns) {
    const g = ground(text, c.evidence);
    const ok = g.grounded || (g.reason === "empty" && c.category === "missing_verification");
    (ok ? grounded : ungrounded).push(c);
  }
  return { grounded, ungrounded };
}
