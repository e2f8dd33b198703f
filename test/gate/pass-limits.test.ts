import { describe, expect, it } from "vitest";
import { AuditLimitExceeded, DissentError } from "../../src/errors.js";
import { MAX_AUDIT_PASSES, MAX_REVISION_PASSES, PassLimits } from "../../src/gate/audit-gate.js";

describe("PassLimits (ADR-009 §1)", () => {
  it("freezes both limits at 1", () => {
    expect(MAX_AUDIT_PASSES).toBe(1);
    expect(MAX_REVISION_PASSES).toBe(1);
  });

  it("allows one audit pass and throws AuditLimitExceeded on the second", () => {
    const limits = new PassLimits();
    limits.audit();
    expect(limits.audits).toBe(1);
    let thrown: unknown;
    try {
      limits.audit();
    } catch (e) {
      thrown = e;
    }
    expect(AuditLimitExceeded.isInstance(thrown)).toBe(true);
    expect(thrown).toBeInstanceOf(DissentError);
    expect((thrown as Error).name).toBe("AuditLimitExceeded");
    expect((thrown as Error).message).toContain("MAX_AUDIT_PASSES");
    expect(limits.audits).toBe(1);
  });

  it("allows one revision pass and throws AuditLimitExceeded on the second", () => {
    const limits = new PassLimits();
    limits.revision();
    expect(() => limits.revision()).toThrow(/MAX_REVISION_PASSES/);
    expect(limits.revisions).toBe(1);
  });

  it("counts audits and revisions independently", () => {
    const limits = new PassLimits();
    limits.revision();
    expect(() => limits.audit()).not.toThrow();
    expect(() => limits.audit()).toThrow(AuditLimitExceeded);
  });

  it("AuditLimitExceeded is recognisable and exits 1", async () => {
    const e = new AuditLimitExceeded("x");
    const { exitCodeOf } = await import("../../src/cli/exit-codes.js");
    expect(AuditLimitExceeded.isInstance(e)).toBe(true);
    expect(exitCodeOf(e)).toBe(1);
    expect(AuditLimitExceeded.isInstance(new Error("x"))).toBe(false);
  });
});
