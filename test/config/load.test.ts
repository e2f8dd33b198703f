import { exitCodeOf } from "../../src/cli/exit-codes.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultsFor } from "../../src/config/defaults.js";
import { configFromObject, findConfig, loadConfig, parseConfigText } from "../../src/config/load.js";
import { ConfigError } from "../../src/errors.js";
import { configRouter, roleChain } from "../../src/models/router.js";
import { scratch } from "../support/cli.js";

const minimal = (model: string, extra = "") =>
  `providers:\n  local: { type: openai-compatible, base_url: "http://127.0.0.1:9/v1" }\nroutes:\n  default: { primary: "local:${model}" }\n${extra}`;

function configError(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    expect(ConfigError.isInstance(e)).toBe(true);
    expect(exitCodeOf(e)).toBe(2);
    return e as Error;
  }
  throw new Error("expected a ConfigError");
}

let s: ReturnType<typeof scratch>;
beforeEach(() => {
  s = scratch();
});
afterEach(() => s.cleanup());

describe("config discovery order (docs/configuration.md)", () => {
  beforeEach(() => {
    s.write("dissent.config.yaml", minimal("from-cwd"));
    s.write("from-env.yaml", minimal("from-env"));
    s.write("from-flag.yaml", minimal("from-flag"));
  });
  const model = (c: { routes: Record<string, { primary: string }> }) => c.routes.default?.primary;

  it("--config wins over DISSENT_CONFIG and ./dissent.config.yaml", () => {
    const c = loadConfig({ flag: "from-flag.yaml", env: { DISSENT_CONFIG: "from-env.yaml" }, cwd: s.dir });
    expect(model(c)).toBe("local:from-flag");
    expect(c.source).toBe("from-flag.yaml");
  });

  it("DISSENT_CONFIG wins over ./dissent.config.yaml", () => {
    const c = loadConfig({ env: { DISSENT_CONFIG: join(s.dir, "from-env.yaml") }, cwd: s.dir });
    expect(model(c)).toBe("local:from-env");
  });

  it("./dissent.config.yaml is used when nothing is named", () => {
    expect(model(loadConfig({ env: {}, cwd: s.dir }))).toBe("local:from-cwd");
  });

  it("with no config file, the built-in defaults apply", () => {
    const empty = scratch();
    try {
      // No Ollama (a port nothing listens on) and no key: the embedded engine's pair (docs/local-engine.md).
      const c = loadConfig({ env: { DISSENT_OLLAMA_URL: "http://127.0.0.1:9" }, cwd: empty.dir });
      expect(c.source).toBe("defaults");
      expect(c.routes).toEqual(defaultsFor({ kind: "embedded" }).routes);
      expect(c.seed).toBe(7);
      expect(c.callTimeoutMs).toBe(120_000);
      expect(c.home).toBe(join(empty.dir, ".dissent"));
      expect(findConfig({ env: {}, cwd: empty.dir })).toBeUndefined();
    } finally {
      empty.cleanup();
    }
  });

  it("a named config that does not exist is a ConfigError naming it (flag and env)", () => {
    expect(configError(() => loadConfig({ flag: "nope.yaml", env: {}, cwd: s.dir })).message).toMatch(/nope\.yaml.*--config/);
    expect(configError(() => loadConfig({ env: { DISSENT_CONFIG: "gone.yaml" }, cwd: s.dir })).message).toMatch(/gone\.yaml.*DISSENT_CONFIG/);
  });
});

describe("home and relative paths", () => {
  it("home: is relative to the config file's folder, not the cwd", () => {
    mkdirSync(join(s.dir, "conf"));
    s.write("conf/dissent.yaml", minimal("m", "home: state\n"));
    mkdirSync(join(s.dir, "elsewhere"));
    const c = loadConfig({ flag: join(s.dir, "conf/dissent.yaml"), env: {}, cwd: join(s.dir, "elsewhere") });
    expect(c.home).toBe(join(s.dir, "conf", "state"));
  });

  it("with no home:, the store is .dissent beside the config file --config names, not in the cwd", () => {
    mkdirSync(join(s.dir, "proj"));
    s.write("proj/dissent.config.yaml", minimal("m"));
    mkdirSync(join(s.dir, "elsewhere"));
    const c = loadConfig({ flag: join(s.dir, "proj/dissent.config.yaml"), env: {}, cwd: join(s.dir, "elsewhere") });
    expect(c.home).toBe(join(s.dir, "proj", ".dissent"));
    const viaEnv = loadConfig({ env: { DISSENT_CONFIG: "../proj/dissent.config.yaml" }, cwd: join(s.dir, "elsewhere") });
    expect(viaEnv.home).toBe(join(s.dir, "proj", ".dissent"));
  });

  it("DISSENT_HOME wins over home:", () => {
    s.write("dissent.config.yaml", minimal("m", "home: state\n"));
    const c = loadConfig({ env: { DISSENT_HOME: "env-home" }, cwd: s.dir });
    expect(c.home).toBe(join(s.dir, "env-home"));
  });

  it("policies and constraints naming files are read relative to the config's folder; other entries are text", () => {
    mkdirSync(join(s.dir, "conf"));
    s.write("conf/policy.md", "No medical dosing advice.\n");
    s.write("conf/limits.txt", "Answer in under 200 words.\n");
    s.write("policy.md", "WRONG: relative to the cwd");
    s.write("conf/dissent.yaml", minimal("m", 'policies: ["policy.md", "Be kind."]\nconstraints: ["limits.txt"]\n'));
    const c = loadConfig({ flag: "conf/dissent.yaml", env: {}, cwd: s.dir });
    expect(c.policies).toEqual(["No medical dosing advice.", "Be kind."]);
    expect(c.constraints).toEqual(["Answer in under 200 words."]);
  });
});

describe("the review on a pull request (review:, serve.public_url)", () => {
  it("defaults: MEDIUM and above inline, COMMENT, no dashboard link", () => {
    s.write("dissent.config.yaml", minimal("m"));
    const c = loadConfig({ env: {}, cwd: s.dir });
    expect(c.review).toEqual({ inlineMinSeverity: "MEDIUM", event: "COMMENT" });
    expect(c.serve.publicUrl).toBeNull();
  });

  it("set: the threshold, REQUEST_CHANGES, and the dashboard's address without its trailing slash", () => {
    s.write(
      "dissent.config.yaml",
      minimal("m", "review: { inline_min_severity: HIGH, event: REQUEST_CHANGES }\nserve: { public_url: https://dissent.example.com/ }\n"),
    );
    const c = loadConfig({ env: {}, cwd: s.dir });
    expect(c.review).toEqual({ inlineMinSeverity: "HIGH", event: "REQUEST_CHANGES" });
    expect(c.serve.publicUrl).toBe("https://dissent.example.com");
  });

  it("APPROVE is no event dissent sends, and a public_url must be http(s): errors naming the key", () => {
    s.write("dissent.config.yaml", minimal("m", "review: { event: APPROVE }\n"));
    expect(configError(() => loadConfig({ env: {}, cwd: s.dir })).message).toMatch(/review\.event/);
    s.write("dissent.config.yaml", minimal("m", "serve: { public_url: ftp://x.example.com }\n"));
    expect(configError(() => loadConfig({ env: {}, cwd: s.dir })).message).toMatch(/serve\.public_url/);
  });
});

describe("config errors name the file and the line", () => {
  it("bad YAML: file and line of the error", () => {
    const text = "seed: 7\nproviders:\n  local: { type: openai-compatible\nroutes: {}\n";
    const e = configError(() => parseConfigText(text, "conf/dissent.yaml"));
    expect(e.message).toMatch(/conf\/dissent\.yaml:4\b/);
  });

  it("bad YAML read through loadConfig names the file and line", () => {
    s.write("dissent.config.yaml", "providers:\n  local:\n    type: openai-compatible\n  base_url: [unclosed\nroutes: {}\n");
    const e = configError(() => loadConfig({ env: {}, cwd: s.dir }));
    expect(e.message).toMatch(/^dissent\.config\.yaml:\d+/);
  });

  it("an unknown key names the key and its line", () => {
    const e = configError(() => parseConfigText("seed: 7\n\nfrobnicate: true\n", "c.yaml"));
    expect(e.message).toMatch(/^c\.yaml:3: .*frobnicate/);
  });

  it("an unknown key inside a provider names its dotted path and line", () => {
    const e = configError(() => parseConfigText(minimal("m").replace("base_url", "colour: red, base_url"), "c.yaml"));
    expect(e.message).toMatch(/^c\.yaml:2: .*providers\.local\.colour/);
  });

  it("a misspelt key suggests the key meant, at any depth, in a file and in a config object (issue 31 item 10)", () => {
    expect(configError(() => parseConfigText("budgets:\n  max_calls_per_issue: 60\n", "c.yaml")).message).toBe(
      "c.yaml:2: unknown key 'budgets': did you mean 'budget'?",
    );
    expect(configError(() => parseConfigText(minimal("m").replace("base_url", "max_concurency: 2, base_url"), "c.yaml")).message).toMatch(
      /^c\.yaml:2: unknown key 'providers\.local\.max_concurency': did you mean 'providers\.local\.max_concurrency'\?$/,
    );
    expect(configError(() => parseConfigText("tracker:\n  type: local\n  tokn_env: X\n", "c.yaml")).message).toBe(
      "c.yaml:3: unknown key 'tracker.tokn_env': did you mean 'tracker.token_env'?",
    );
    expect(configError(() => configFromObject({ budgets: {} }, { env: {}, cwd: s.dir })).message).toBe("config: unknown key 'budgets': did you mean 'budget'?");
    // Nothing near: no guess.
    expect(configError(() => parseConfigText("frobnicate: true\n", "c.yaml")).message).toBe("c.yaml:1: unknown key 'frobnicate'");
  });

  it("a value of the wrong type names the key and line", () => {
    const e = configError(() => parseConfigText("call_timeout_ms: 5000\nseed: seven\n", "c.yaml"));
    expect(e.message).toMatch(/^c\.yaml:2: seed/);
  });

  it("an openai-compatible provider without base_url is refused", () => {
    const e = configError(() => parseConfigText("providers:\n  local: { type: openai-compatible }\n", "c.yaml"));
    expect(e.message).toContain("base_url");
  });

  it("a route naming an unknown provider is refused up front, naming the route and provider", () => {
    s.write("dissent.config.yaml", minimal("m", '  challenger: { primary: "nosuch:model" }\n'));
    const e = configError(() => loadConfig({ env: {}, cwd: s.dir }));
    expect(e.message).toContain("dissent.config.yaml");
    expect(e.message).toContain("routes.challenger.primary");
    expect(e.message).toContain("'nosuch'");
  });

  it("an unknown provider in a secondary is refused too", () => {
    s.write("dissent.config.yaml", minimal("m", '  executor: { primary: "local:a", secondary: "ghost:b" }\n'));
    expect(configError(() => loadConfig({ env: {}, cwd: s.dir })).message).toContain("'ghost'");
  });

  it("a route target that is not provider:model is refused", () => {
    const e = configError(() => parseConfigText('routes:\n  default: { primary: "justamodel" }\n', "c.yaml"));
    expect(e.message).toMatch(/^c\.yaml:2: routes\.default\.primary/);
  });
});

describe("roleChain and routing (docs/configuration.md: most specific first)", () => {
  it("resolves plan.builder → plan → default", () => {
    expect(roleChain("plan.builder")).toEqual(["plan.builder", "plan", "default"]);
    expect(roleChain("a.b.c")).toEqual(["a.b.c", "a.b", "a", "default"]);
    expect(roleChain("executor")).toEqual(["executor", "default"]);
    expect(roleChain("default")).toEqual(["default"]);
  });

  it("the router picks the most specific configured route, and keeps ':' in model names", () => {
    s.write(
      "dissent.config.yaml",
      [
        "providers:",
        '  local: { type: openai-compatible, base_url: "http://127.0.0.1:9/v1" }',
        "routes:",
        '  default: { primary: "local:qwen3:8b" }',
        '  plan: { primary: "local:plan-model" }',
        '  plan.builder: { primary: "local:builder-model", secondary: "local:mistral" }',
        "",
      ].join("\n"),
    );
    const router = configRouter(loadConfig({ env: {}, cwd: s.dir }), {});
    expect(router("plan.builder").primary.model).toBe("builder-model");
    expect(router("plan.builder").secondary?.model).toBe("mistral");
    expect(router("plan.tester").primary.model).toBe("plan-model");
    expect(router("plan.tester").secondary).toBeUndefined();
    expect(router("executor").primary).toMatchObject({ provider: "local", model: "qwen3:8b", route: "primary" });
  });

  it("a provider that needs a key names the environment variable when it is missing — when it is first used, not before", async () => {
    writeFileSync(join(s.dir, "dissent.config.yaml"), 'providers:\n  openai: { type: openai }\nroutes:\n  default: { primary: "openai:gpt-x" }\n');
    const router = configRouter(loadConfig({ env: {}, cwd: s.dir }), {});
    const target = router("executor").primary; // resolving the route needs no key (a replay never does)
    await expect(target.load()).rejects.toSatisfy((e) => ConfigError.isInstance(e) && (e as Error).message.includes("OPENAI_API_KEY"));
  });
});
