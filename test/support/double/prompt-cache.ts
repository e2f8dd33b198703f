import { createHash } from "node:crypto";

/**
 * A provider's automatic prompt cache as OpenAI documents it: a request's cached tokens are the
 * longest prefix it shares with an earlier request, counted in blocks of 128 tokens, and none under
 * 1,024. Tokens are counted by a fixed rule, 4 characters a token (so a block is 512 characters).
 * The prompt is the request's messages in order, each opened by its role, as a chat template lays them.
 */
export interface PromptCache {
  /** The prompt's tokens, and those an earlier request's prefix covers; registers this prompt's prefixes. */
  read(messages: readonly { role: string; text: string }[]): { promptTokens: number; cachedTokens: number };
}

const CHARS_PER_TOKEN = 4;
const BLOCK_TOKENS = 128;
const MIN_TOKENS = 1024;
const BLOCK_CHARS = BLOCK_TOKENS * CHARS_PER_TOKEN;

/** The text a prompt cache sees: each message opened by its role. */
export const promptText = (messages: readonly { role: string; text: string }[]) => messages.map((m) => `<|${m.role}|>\n${m.text}`).join("\n");

export function promptCache(): PromptCache {
  const seen = new Set<string>();
  return {
    read(messages) {
      const text = promptText(messages);
      const promptTokens = Math.ceil(text.length / CHARS_PER_TOKEN);
      const hash = createHash("sha256");
      let cachedBlocks = 0;
      let matching = true;
      // Each whole block's prefix, hashed incrementally: a prefix matches when an earlier prompt had it.
      for (let k = 1; k * BLOCK_CHARS <= text.length; k++) {
        hash.update(text.slice((k - 1) * BLOCK_CHARS, k * BLOCK_CHARS));
        const key = hash.copy().digest("hex");
        if (matching && seen.has(key)) cachedBlocks = k;
        else matching = false;
        seen.add(key);
      }
      const cached = cachedBlocks * BLOCK_TOKENS;
      return { promptTokens, cachedTokens: cached >= MIN_TOKENS ? cached : 0 };
    },
  };
}
