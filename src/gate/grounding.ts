import { ground, groundingText } from "../adversarial/grounding.js";
import type { AuditConcern } from "../contracts/audit.js";

/**
 * Keeps the concerns whose evidence is in the draft (CONTRACT §3 r2: normalised, at least 3
 * words, `...` parts in order). `missing_verification` may point at nothing: empty evidence is fine.
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
