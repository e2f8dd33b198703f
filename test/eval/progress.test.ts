import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { evalGate, progressLine } from "../../src/cli/eval.js";
import type { Io } from "../../src/cli/io.js";
import { scratch } from "../support/cli.js";
import { byRole, configYaml } from "../support/e2e.js";
import { startOpenAIServer } from "../support/openai-server.js";
import { BUNDLED_GATE, challengerReply, perfect } from "./support.js";

describe("the progress bar", () => {
  it("fits the terminal's width", () => {
    for (const columns of [40, 80, 200]) {
      const line = progressLine("eval gate", { done: 23, total: 77, id: "cook-008" }, columns);
      expect(line.length).toBeLessThanOrEqual(columns - 1);
      expect(line).toMatch(/^eval gate {2}\[█+░+\] {2}23\/77( {2}cook-008)?$/);
    }
    expect(progressLine("eval gate", { done: 23, total: 77, id: "cook-008" }, 80)).toContain("cook-008");
    expect(progressLine("eval gate", { done: 77, total: 77, id: "x" }, 80)).not.toContain("░");
  });

  it("is drawn on a TTY's stderr and cleared before the table is printed", async () => {
    const server = await startOpenAIServer(byRole({ challenger: (req) => ({ content: challengerReply(perfect, req.body) }) }));
    const s = scratch();
    try {
      s.write("dissent.config.yaml", configYaml({ url: server.url }));
      s.write("set.yaml", stringify(BUNDLED_GATE.items.filter((i) => !i.revision).slice(0, 4)));
      let out = "";
      let err = "";
      const io: Io = {
        stdout: (t) => void (out += t),
        stderr: (t) => void (err += t),
        readStdin: async () => undefined,
        stderrIsTTY: true,
        columns: 60,
        env: { DISSENT_HOME: join(s.dir, "home") },
        cwd: s.dir,
        signal: new AbortController().signal,
        redact: (t) => t,
      };
      expect(await evalGate({ set: "set.yaml" }, io)).toBe(0);
      const frames = err.split("\r\x1b[2K").filter(Boolean);
      expect(frames.length).toBeGreaterThanOrEqual(4);
      for (const f of frames) expect(f.length).toBeLessThanOrEqual(59);
      expect(frames.at(-1)).toMatch(/4\/4/);
      expect(err.endsWith("\r\x1b[2K")).toBe(true); // cleared before stdout
      expect(out).toMatch(/^dissent eval gate · /);
    } finally {
      await server.close();
      s.cleanup();
    }
  });
});
