import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicJson } from "../support/wire/anthropic.js";
import { startWireServer, type WireServer } from "../support/wire/server.js";

// The library never prints to stdout: the AI SDK's warnings about dissent's own calls go to the
// caller's onWarning (or a Node process warning on stderr), once each — unless the program set
// globalThis.AI_SDK_LOG_WARNINGS itself, which wins (docs/run.md "Warnings").

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
let server: WireServer;

beforeAll(async () => {
  server = await startWireServer((req) =>
    JSON.stringify(req.body?.messages ?? "").includes("executor_output")
      ? anthropicJson("claude-sonnet-4-5-20250929", '{"concerns": [], "verdict": "pass"}')
      : anthropicJson("claude-sonnet-4-5-20250929", "A draft."),
  );
});
afterAll(() => server.close());

/** Runs an ESM snippet from the package root (so `import "dissent"` is the built entry), without blocking the server. */
function node(source: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", source], { cwd: ROOT, env: { PATH: process.env.PATH ?? "" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const script = (setup: string, options = "") => `
  import { runAudit } from "dissent";
  import { createAnthropic } from "@ai-sdk/anthropic";
  ${setup}
  const claude = createAnthropic({ apiKey: "sk-ant-test-0123456789", baseURL: ${JSON.stringify(server.url)} })("claude-sonnet-4-5");
  const out = await runAudit({ executor: claude, challenger: claude, prompt: "Say something." ${options} });
  process.stdout.write(JSON.stringify({ final: out.final_output, seen: globalThis.seen ?? null }));
`;

describe("the AI SDK's warnings in the library", () => {
  it("by default: a Node process warning on stderr, once for both calls, and stdout untouched", async () => {
    const r = await node(script(""));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ final: "A draft.", seen: null });
    const lines = r.stderr.split("\n").filter((l) => l.includes("Warning:"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`provider 'anthropic.messages' (claude-sonnet-4-5) does not support "seed"`);
  });

  it("onWarning receives them, once each", async () => {
    const r = await node(script("globalThis.seen = [];", ", onWarning: (m) => globalThis.seen.push(m)"));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout) as { seen: string[] };
    expect(out.seen).toEqual([`provider 'anthropic.messages' (claude-sonnet-4-5) does not support "seed", so the AI SDK left it out`]);
  });

  it("the program's own AI_SDK_LOG_WARNINGS function wins: it gets the SDK's warning objects, nothing is printed", async () => {
    const r = await node(
      script(
        "globalThis.seen = []; globalThis.AI_SDK_LOG_WARNINGS = (o) => globalThis.seen.push({ model: o.model, features: o.warnings.map((w) => w.feature) });",
      ),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout) as { seen: unknown[] };
    expect(out.seen).toEqual([
      { model: "claude-sonnet-4-5", features: ["seed"] },
      { model: "claude-sonnet-4-5", features: ["seed"] },
    ]);
  });

  it("each runAudit's onWarning gets the warnings of its own calls, though the model is the same object (wrapped once per sink)", async () => {
    const r = await node(`
      import { runAudit } from "dissent";
      import { createAnthropic } from "@ai-sdk/anthropic";
      const claude = createAnthropic({ apiKey: "sk-ant-test-0123456789", baseURL: ${JSON.stringify(server.url)} })("claude-sonnet-4-5");
      const first = [];
      const second = [];
      await runAudit({ executor: claude, challenger: claude, prompt: "Say something.", onWarning: (m) => first.push(m) });
      await runAudit({ executor: claude, challenger: claude, prompt: "Say something else.", onWarning: (m) => second.push(m) });
      process.stdout.write(JSON.stringify({ first, second }));
    `);
    expect(r.code, r.stderr).toBe(0);
    const line = `provider 'anthropic.messages' (claude-sonnet-4-5) does not support "seed", so the AI SDK left it out`;
    expect(JSON.parse(r.stdout)).toEqual({ first: [line], second: [line] });
  });

  it("AI_SDK_LOG_WARNINGS = false silences them", async () => {
    const r = await node(script("globalThis.AI_SDK_LOG_WARNINGS = false;"));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({ final: "A draft.", seen: null });
  });
});

describe("runAudit's own warnings in a loop (issue 31 item 9)", () => {
  // Five runs whose revision adds a name and a figure, and whose second challenger fails: the kinds runAudit warns of.
  const loop = (options: string) => `
    import { runAudit } from "dissent";
    import { auditReply, scriptedModel } from "dissent/testing";
    const seen = [];
    const metas = [];
    for (let i = 0; i < 5; i++) {
      const executor = scriptedModel("exec", ["The tower is 330 m tall and made of cheese.", "The tower is 330 m tall, made of iron by Pompey in " + (1880 + i) + "."]);
      const challenger = scriptedModel("chal", [
        i === 1 ? "not an audit" : auditReply("needs_work", [{ category: "factual_risk", severity: "high", evidence: "made of cheese", concern: "It is iron." }]),
      ]);
      const out = await runAudit({ executor, challenger, prompt: "How tall is the tower?" ${options} });
      metas.push(out.audit_meta.revision_drift?.length ?? null);
    }
    process.stdout.write(JSON.stringify({ seen, metas }));
  `;

  it("by default: one process warning per kind for the whole process, though every run's audit_meta lists its drift", async () => {
    const r = await node(loop(""));
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { seen: string[]; metas: (number | null)[] };
    expect(out.metas).toEqual([2, null, 2, 2, 2]);
    const lines = r.stderr.split("\n").filter((l) => l.includes("Warning:"));
    expect(lines.map((l) => /\[(DISSENT_\w+)\]/.exec(l)?.[1])).toEqual(["DISSENT_REVISION_DRIFT", "DISSENT_CHALLENGER_FAILED"]);
    expect(lines[0]).toContain("check them before use: 1880, Pompey");
    expect(lines[0]).toContain("said once per process; pass onWarning to receive every one");
  });

  it("onWarning receives every one, each time, and nothing is printed", async () => {
    const r = await node(loop(", onWarning: (m) => seen.push(m)"));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout) as { seen: string[] };
    expect(out.seen.filter((m) => m.startsWith("the revision added facts"))).toHaveLength(4);
    expect(out.seen.filter((m) => m.startsWith("challenger failed"))).toHaveLength(1);
    expect(out.seen.join("\n")).not.toContain("said once per process");
  });
});
