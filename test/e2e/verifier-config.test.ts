/**
 * The verifier (the second opinion on a lone HIGH) is a pipeline role like any other: its key is
 * checked before any request, and a verifier on the same model as a critic it checks is warned about.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pipelineWorld } from "../support/pipeline-e2e.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

describe("the verifier role, as configured", () => {
  it("a verifier routed to a provider whose key is unset: issue plan exits 2 naming the provider and the variable, before any request", async () => {
    const w = await pipelineWorld(() => undefined, { extra: "" });
    open.push(w);
    const config = readFileSync(join(w.dir, "dissent.config.yaml"), "utf8")
      .replace('  verifier: { primary: "local:verifier" }', '  verifier: { primary: "cloud:gpt-4.1" }')
      .replace("providers:\n", "providers:\n  cloud: { type: openai }\n");
    writeFileSync(join(w.dir, "dissent.config.yaml"), config);
    const id = await w.newIssue("Encrypt cookies", "", ["dissent-load-bearing"]);
    const r = await w.run(["issue", "plan", id]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      "dissent: error: dissent.config.yaml: provider 'cloud' (routes.verifier.primary, used by verifier) needs an API key: set OPENAI_API_KEY",
    );
    expect(w.server.requests).toEqual([]);
  });

  it("a verifier on the same model as a critic it checks: one warning line naming the critics; on another model, none", async () => {
    const w = await pipelineWorld(() => undefined);
    open.push(w);
    const path = join(w.dir, "dissent.config.yaml");
    const own = readFileSync(path, "utf8");
    writeFileSync(path, own.replace('  verifier: { primary: "local:verifier" }', '  verifier: { primary: "local:shape.tech_lead" }'));
    const id = await w.newIssue("Encrypt cookies", "", ["dissent-load-bearing"]);
    const same = await w.run(["issue", "plan", id]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr.split("\n").filter((l) => l.includes("the verifier uses the same model"))).toEqual([
      "dissent: warning: the verifier uses the same model as the critic it checks (shape.tech_lead: local:shape.tech_lead); a second opinion from the model that raised the finding is weak — route verifier to another model family",
    ]);
    writeFileSync(path, own);
    const other = await w.run(["issue", "plan", id, "--replan"]);
    expect(other.stderr).not.toContain("the verifier uses the same model");
  });
});
