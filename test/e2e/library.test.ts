import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Runs an ESM snippet with node, from the package root, so `import "dissent"` is the built package entry. */
function node(source: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", source], { cwd: ROOT, encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('import { runAudit } from "dissent" (docs/library.md)', () => {
  it("runs the gate over AI SDK mock models from the package entry", () => {
    const r = node(`
      import { runAudit, AuditReply, AuditMeta, MAX_AUDIT_PASSES, MAX_REVISION_PASSES, AuditLimitExceeded } from "dissent";
      import { MockLanguageModelV3 } from "ai/test";
      const result = (text) => ({
        content: [{ type: "text", text }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } },
        warnings: [],
      });
      const executor = new MockLanguageModelV3({ doGenerate: async () => result("A draft.") });
      const challenger = new MockLanguageModelV3({ doGenerate: async () => result('{"verdict":"pass","concerns":[]}') });
      const out = await runAudit({ executor, challenger, prompt: "Hi" });
      console.log(JSON.stringify({
        out,
        schemas: [typeof AuditReply.safeParse, AuditMeta.safeParse(out.audit_meta).success],
        limits: [MAX_AUDIT_PASSES, MAX_REVISION_PASSES, typeof AuditLimitExceeded.isInstance],
      }));
    `);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const parsed = JSON.parse(r.stdout) as {
      out: { final_output: string; audit_meta: { audit_verdict: string }; calls: unknown[] };
      schemas: unknown[];
      limits: unknown[];
    };
    expect(parsed.out.final_output).toBe("A draft.");
    expect(parsed.out.audit_meta.audit_verdict).toBe("pass");
    expect(parsed.out.calls).toHaveLength(2);
    expect(parsed.schemas).toEqual(["function", true]);
    expect(parsed.limits).toEqual([1, 1, "function"]);
  });
});
