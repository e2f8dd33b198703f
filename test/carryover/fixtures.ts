import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fingerprint } from "../../src/adversarial/fingerprint.js";
import type { Concern } from "../../src/contracts/concern.js";

let seq = 0;

/** A pending concern as the pipeline would forward it, with a real fingerprint. */
export function concern(over: Partial<Concern> & Pick<Concern, "severity" | "concern">): Concern {
  const category = over.category ?? "general";
  seq++;
  return {
    id: over.id ?? `PLAN-RISK_SKEPTIC-${String(seq).padStart(3, "0")}`,
    phase: "plan",
    stage: "plan_council",
    raised_by: "plan.risk_skeptic",
    evidence: "",
    must_address_by: "implement",
    human_required: false,
    raised_at: "2025-03-01T10:00:00.000Z",
    ...over,
    category,
    fingerprint: over.fingerprint ?? fingerprint({ category, concern: over.concern }),
  };
}

/** A temp folder for one test, removed by `cleanup`. */
export function tempDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "dissent-carryover-unit-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
