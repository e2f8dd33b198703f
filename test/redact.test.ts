import { describe, expect, it } from "vitest";
import { countSecrets, redact, redactor } from "../src/redact.js";

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

describe("redact: a known secret written another way (issue 32)", () => {
  const key = "hunter2-provider-secret-7c1f9e";
  const b64 = (s: string) => Buffer.from(s).toString("base64");

  it("with spaces between its characters", () => {
    const spaced = key.split("").join(" ");
    expect(redact(`the key is ${spaced} (spaced out)`, [key])).toBe("the key is [redacted] (spaced out)");
    expect(redact(`tabs: ${key.split("").join("\t")}`, [key])).not.toContain("h\tu\tn");
  });

  it("percent-encoded, wholly or in part, in either case of hex", () => {
    const whole = [...Buffer.from(key)].map((b) => `%${b.toString(16).toUpperCase()}`).join("");
    expect(redact(`?token=${whole}&x=1`, [key])).toBe("?token=[redacted]&x=1");
    expect(redact(`?token=${encodeURIComponent(key).replace("-", "%2d")}`, [key])).toBe("?token=[redacted]");
  });

  it("in base64 at any alignment inside a longer encoded text, in the standard and the URL alphabet", () => {
    for (const prefix of ["", "u:", "us:"]) {
      const encoded = b64(`${prefix}${key}`);
      const out = redact(`Authorization: Basic ${encoded}`, [key]);
      expect(out, prefix).toContain("[redacted]");
      expect(Buffer.from(out.split(" ").at(-1) ?? "", "base64").toString()).not.toContain(key);
    }
    const url = Buffer.from(`\u00ff\u00fe${key}`).toString("base64url");
    expect(redact(url, [key])).toContain("[redacted]");
  });

  it("counts every occurrence in every form; a short secret is found only as it is, never in its other forms", () => {
    const text = `${key} ${key.split("").join(" ")} ${b64(key)}`;
    expect(countSecrets(text, [key])).toBe(3);
    expect(countSecrets("nothing here", [key])).toBe(0);
    expect(redact("a b c d and YWJjZA==", ["abcd"])).toBe("a b c d and YWJjZA==");
    expect(redact("abcd", ["abcd"])).toBe("[redacted]");
  });

  it("a redactor learns a secret later and finds its other forms from then on", () => {
    const r = redactor([]);
    expect(r(key.split("").join(" "))).toContain("h u n");
    r.add(key);
    expect(r(key.split("").join(" "))).toBe("[redacted]");
  });
});
