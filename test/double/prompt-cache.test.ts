import { expect, test } from "vitest";
import { promptCache, promptText } from "../support/double/prompt-cache.js";

const msgs = (system: string, user: string) => [
  { role: "system", text: system },
  { role: "user", text: user },
];

test("the bench's prompt cache: the longest prefix shared with an earlier request, in 128-token blocks, none under 1,024 tokens", () => {
  const cache = promptCache();
  const shared = "s".repeat(6000);
  const first = cache.read(msgs("rules", `${shared}A`));
  expect(first).toEqual({ promptTokens: Math.ceil(promptText(msgs("rules", `${shared}A`)).length / 4), cachedTokens: 0 });
  // 6,000 shared characters after the same 24-character opening: 11 whole blocks of 512 characters.
  expect(cache.read(msgs("rules", `${shared}B`)).cachedTokens).toBe(11 * 128);
  // A different system message shares nothing: the prefix starts there.
  expect(cache.read(msgs("other rules", `${shared}C`)).cachedTokens).toBe(0);
  // 3,000 shared characters are 5 blocks, 640 tokens: under 1,024, nothing is cached.
  const small = promptCache();
  small.read(msgs("rules", `${"t".repeat(3000)}A`));
  expect(small.read(msgs("rules", `${"t".repeat(3000)}B`)).cachedTokens).toBe(0);
});
