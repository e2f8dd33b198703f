import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../src/hash.js";

// Request hashes, reply hashes, prompt-file hashes and data-block tags are SHA-256 of the text as
// UTF-8: cache keys and event fields written by one version must be found by the next.

describe("sha256", () => {
  it("is the hex SHA-256 of the text's UTF-8 bytes, whatever the characters", () => {
    expect(sha256("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    for (const text of ["plain ASCII", "an em dash — and “quotes”", "日本語のテキスト", "emoji 🙂 and a lone surrogate \ud800", "x".repeat(100_000)]) {
      expect(sha256(text)).toBe(createHash("sha256").update(text).digest("hex"));
    }
  });
});
