import { describe, expect, it } from "vitest";
import { redact } from "../src/redact.js";

describe("redact", () => {
  it("removes every occurrence of a known secret", () => {
    const s = "hunter2-correct-horse";
    expect(redact(`key ${s} and again ${s}.`, [s])).toBe("key [redacted] and again [redacted].");
  });

  it("removes provider-shaped keys even when not known, including masked echoes", () => {
    const out = redact("Incorrect API key provided: sk-proj-abc123DEF456 or sk-ab***cdef12", []);
    expect(out).not.toMatch(/sk-proj-abc123DEF456|sk-ab\*\*\*cdef12/);
    expect(out).toContain("Incorrect API key provided:");
  });

  it("leaves ordinary text alone", () => {
    expect(redact("could not reach provider 'local' at http://127.0.0.1:1/v1", ["x"])).toBe("could not reach provider 'local' at http://127.0.0.1:1/v1");
  });
});
