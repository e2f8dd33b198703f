import type { LanguageModelV3, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { generateText } from "ai";
import { describe, expect, it, vi } from "vitest";
import { QuietModel } from "../../src/models/sdk-warnings.js";

// The call door's model wrapper (docs/run.md "Warnings"): the SDK's warnings about a call go to
// dissent's sink, none reach the SDK's own console logger, and everything else is the model's own.

const usage = { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } };

/** A v3 model answering "ok", with the given warnings on every reply. */
function model(warnings: LanguageModelV3GenerateResult["warnings"]): LanguageModelV3 {
  return {
    specificationVersion: "v3",
    provider: "acme.chat",
    modelId: "acme-1",
    supportedUrls: { "image/*": [/^https:\/\/img\.example\//] },
    doGenerate: async () => ({ content: [{ type: "text", text: "ok" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings }),
    doStream: async () => {
      throw new Error("not streamed");
    },
  };
}

describe("QuietModel", () => {
  it("hands a call's warnings to the sink as dissent's lines and leaves the SDK none to log", async () => {
    const lines: string[] = [];
    // Unset, the SDK logs a result's warnings itself with console.info/console.warn (stdout, for info).
    const info = vi.spyOn(console, "info").mockImplementation(() => undefined);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      const quiet = new QuietModel(model([{ type: "unsupported", feature: "seed" }]), { provider: "acme", model: "acme-1" }, (m) => lines.push(m));
      const result = await generateText({ model: quiet, prompt: "hi", seed: 7, maxRetries: 0 });
      expect(result.text).toBe("ok");
      expect(result.warnings).toEqual([]);
      expect(lines).toEqual([`provider 'acme' (acme-1) does not support "seed", so the AI SDK left it out`]);
      expect(info).not.toHaveBeenCalled();
      expect(warn).not.toHaveBeenCalled();
      // The same model unwrapped: the SDK does log (so the assertions above can fail).
      await generateText({ model: model([{ type: "unsupported", feature: "seed" }]), prompt: "hi", seed: 7, maxRetries: 0 });
      expect(warn).toHaveBeenCalled();
    } finally {
      info.mockRestore();
      warn.mockRestore();
    }
  });

  it("is the model it wraps in every other respect: provider, model id, supported URLs, the reply itself", async () => {
    const inner = model([]);
    const quiet = new QuietModel(inner, { provider: "acme", model: "acme-1" }, () => {
      throw new Error("no warning expected");
    });
    expect(quiet.specificationVersion).toBe("v3");
    expect(quiet.provider).toBe("acme.chat");
    expect(quiet.modelId).toBe("acme-1");
    expect(quiet.supportedUrls).toBe(inner.supportedUrls);
    const direct = await inner.doGenerate({ prompt: [] });
    const through = await quiet.doGenerate({ prompt: [] });
    expect(through).toEqual(direct);
    await expect(quiet.doStream({ prompt: [] })).rejects.toThrow("not streamed");
  });
});
