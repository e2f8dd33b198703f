import { describe, expect, it } from "vitest";
import { JUDGE_ROUTES } from "../../src/config/defaults.js";
import { configFromObject, parseConfigText } from "../../src/config/load.js";
import { KNOWN_ROLES, nearestRouteName, ROUTE_NAMES } from "../../src/config/roles.js";
import { JUDGE_ROLE } from "../../src/eval/judge.js";
import { PIPELINE_ROLES, STAGES } from "../../src/pipeline/stages.js";

describe("the roles a route may name (docs/configuration.md)", () => {
  it("are built from the tables: every stage's producer and critics, the gate, the reviewer, eval's judge", () => {
    for (const s of STAGES) for (const r of [s.producer, ...s.critics]) expect(KNOWN_ROLES.has(r)).toBe(true);
    for (const r of [...PIPELINE_ROLES, "executor", "challenger", JUDGE_ROLE]) expect(KNOWN_ROLES.has(r)).toBe(true);
  });

  it("a route may name a role, a dotted prefix of one, or default; the built-in defaults' routes are all valid", () => {
    for (const r of ["default", "plan", "discovery", "shape", "eval", "plan.builder", ...JUDGE_ROUTES]) expect(ROUTE_NAMES.has(r)).toBe(true);
    for (const r of ["challanger", "plan.risk_skeptik", "revision", "reviewer", "plan.builder.extra"]) expect(ROUTE_NAMES.has(r)).toBe(false);
  });

  it.each([
    ["challanger", "challenger"],
    ["plan.risk_skeptik", "plan.risk_skeptic"],
    ["Executor", "executor"],
    ["plan_reviewr", "plan_reviewer"],
    ["discovery.problem_sharpner", "discovery.problem_sharpener"],
  ])("%s → did you mean %s", (typo, nearest) => {
    expect(nearestRouteName(typo)).toBe(nearest);
  });

  it("a misspelt route in a file is a configuration error naming the file, the key's line and the nearest role", () => {
    const text = [
      "providers:",
      '  local: { type: openai-compatible, base_url: "http://127.0.0.1:1/v1" }',
      "routes:",
      '  default: { primary: "local:m" }',
      "  plan.risk_skeptik:",
      '    primary: "local:m"',
      "",
    ].join("\n");
    expect(() => parseConfigText(text, "dissent.config.yaml")).toThrow(
      "dissent.config.yaml:5: routes.plan.risk_skeptik names no role: did you mean 'plan.risk_skeptic'? (the roles are listed in docs/configuration.md)",
    );
  });

  it("and in a config given as an object (createDissent), without a line", () => {
    expect(() =>
      configFromObject(
        { providers: { l: { type: "openai-compatible", base_url: "http://127.0.0.1:1/v1" } }, routes: { challanger: { primary: "l:m" } } },
        { env: {}, cwd: "/" },
      ),
    ).toThrow("config: routes.challanger names no role: did you mean 'challenger'?");
  });
});
