/** A concern id, `{PHASE}-{ROLE}-{NNN}` (ADR-0064): `plan.risk_skeptic` in plan, 7th → `PLAN-RISK_SKEPTIC-007`. */
export function concernIdOf(phase: string, role: string, n: number): string {
  const r = (role.split(".").pop() ?? role).toUpperCase().replace(/[^A-Z0-9]+/g, "_");
  return `${phase.toUpperCase()}-${r}-${String(n).padStart(3, "0")}`;
}
