import { afterEach, describe, expect, it } from "vitest";
import { dissent, scratch } from "../support/cli.js";
import { errorLine } from "../support/e2e.js";

// A misspelt route stops the user with the right name (docs/configuration.md "Roles"), and doctor
// groups routes whose check found the same thing.

let s: ReturnType<typeof scratch> | undefined;
afterEach(() => s?.cleanup());

const cli = (args: string[]) => dissent(args, { cwd: s?.dir ?? "", env: { DISSENT_HOME: `${s?.dir}/home` } });

describe("unknown role names in routes", () => {
  const config = (route: string) =>
    [
      "providers:",
      '  local: { type: openai-compatible, base_url: "http://127.0.0.1:9/v1" }',
      "routes:",
      '  default: { primary: "local:qwen3:8b" }',
      `  ${route}: { primary: "local:llama3.1:8b" }`,
      "",
    ].join("\n");

  it.each([
    ["challanger", "challenger"],
    ["plan.risk_skeptik", "plan.risk_skeptic"],
  ])("routes.%s: run and doctor stop with exit 2, naming the file, the line and '%s'", async (typo, nearest) => {
    s = scratch("dissent-roles-");
    s.write("dissent.config.yaml", config(typo));
    const want = `dissent: error: dissent.config.yaml:5: routes.${typo} names no role: did you mean '${nearest}'? (the roles are listed in docs/configuration.md)`;
    for (const args of [["run", "hi"], ["doctor"], ["doctor", "--json"]]) {
      const r = await cli(args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(errorLine(r)).toBe(want);
    }
  });
});

describe("doctor groups near-identical rows", () => {
  it("routes on one model that is not downloaded yet: one row in the table, every route in --json", async () => {
    s = scratch("dissent-roles-");
    s.write(
      "dissent.config.yaml",
      [
        "providers:",
        "  later: { type: llama-cpp, model: hf:acme/later-GGUF:Q4_K_M }",
        "  judge: { type: llama-cpp, model: hf:acme/judge-GGUF:Q4_K_M }",
        "models_dir: models",
        "routes:",
        '  default: { primary: "later:drafter" }',
        '  challenger: { primary: "judge:j" }',
        '  plan: { primary: "judge:j" }',
        '  discovery: { primary: "judge:j" }',
        '  spec.judge: { primary: "judge:j" }',
        '  plan_reviewer: { primary: "judge:j" }',
        "",
      ].join("\n"),
    );
    const r = await cli(["doctor"]);
    expect(r.code).toBe(1);
    const rows = r.stdout.trimEnd().split("\n").slice(2);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^default\s+later:drafter\s+FAIL\s+hf:acme\/later-GGUF:Q4_K_M not downloaded yet/);
    expect(rows[1]).toMatch(/^challenger and 4 more\s+judge:j\s+FAIL\s+hf:acme\/judge-GGUF:Q4_K_M not downloaded yet/);
    const json = JSON.parse((await cli(["doctor", "--json"])).stdout) as { routes: { route: string }[] };
    expect(json.routes.map((x) => x.route)).toEqual(["default", "challenger", "plan", "discovery", "spec.judge", "plan_reviewer"]);
  });
});
