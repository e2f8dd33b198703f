/**
 * Issue 20: the abort signal reaches node-llama-cpp's model loading. A SIGTERM while a model loads
 * stops the load and the run ends as interrupted (143), not as a configuration error about the file
 * — and not after reading the whole file.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../src/contracts/config.js";
import { createLlamaEngines, silentReporter } from "../../src/engines/llama-cpp/index.js";
import { Interrupted } from "../../src/errors.js";
import { scratch } from "../support/cli.js";
import { TINY_CHAT, writeTinyGguf } from "../support/tiny-gguf.js";

let s: ReturnType<typeof scratch>;
beforeAll(() => {
  s = scratch("dissent-engine-signal-");
  writeTinyGguf(join(s.dir, "tiny.gguf"), TINY_CHAT);
});
afterAll(() => s.cleanup());

describe("loading a model under a signal", () => {
  it("a signal aborted (SIGTERM) before the load: the load stops and the error is Interrupted(SIGTERM)", async () => {
    const stop = new AbortController();
    stop.abort(new Interrupted("terminated (SIGTERM)", { signal: "SIGTERM" }));
    const engines = createLlamaEngines({
      config: { source: "test.yaml", baseDir: s.dir, modelsDir: join(s.dir, "models"), offline: true, providers: {} },
      env: {},
      reporter: silentReporter,
      signal: stop.signal,
    });
    try {
      const p = { type: "llama-cpp", model: "./tiny.gguf", threads: 1, gpu: false } as ProviderConfig;
      const failure = await engines.create("tiny", p, "m").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(Interrupted.isInstance(failure) && failure.signal).toBe("SIGTERM");
    } finally {
      await engines.dispose();
    }
  });
});
