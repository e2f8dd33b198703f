import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dissent, scratch } from "../support/cli.js";
import { byRole, configYaml, errorLine, EXEC_MODEL, world, type World } from "../support/e2e.js";

const DRAFT = "Forty-two.";

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("the prompt", () => {
  it("is read from stdin when no argument is given", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    const r = await w.run(["run"], { input: "What is the answer?\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
    expect(w.server.requests[0]?.body.messages.at(-1)).toEqual({ role: "user", content: "What is the answer?" });
  });

  it("a multi-line stdin prompt keeps its lines", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    const r = await w.run(["run"], { input: "Line one.\nLine two.\n" });
    expect(r.code).toBe(0);
    expect(w.server.requests[0]?.body.messages.at(-1)?.content).toBe("Line one.\nLine two.");
  });

  it("missing (empty stdin): exit 2, one error line, no request", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    const r = await w.run(["run"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(errorLine(r)).toMatch(/prompt/);
    expect(w.server.requests).toHaveLength(0);
  });

  it("blank: exit 2", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    expect((await w.run(["run", "   "])).code).toBe(2);
    expect((await w.run(["run"], { input: " \n\n" })).code).toBe(2);
    expect(w.server.requests).toHaveLength(0);
  });
});

describe("usage errors (exit 2)", () => {
  it("--no-cache with --replay", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    const r = await w.run(["run", "--no-cache", "--replay", "hello"]);
    expect(r.code).toBe(2);
    const line = errorLine(r);
    expect(line).toContain("--no-cache");
    expect(line).toContain("--replay");
    expect(w.server.requests).toHaveLength(0);
  });

  it("an unknown flag", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    const r = await w.run(["run", "--frobnicate", "hello"]);
    expect(r.code).toBe(2);
    expect(errorLine(r)).toContain("--frobnicate");
  });
});

describe("configuration errors (exit 2, naming the file)", () => {
  it("bad YAML names the file and the line", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }), () => "seed: 7\nproviders:\n  local: { type: openai-compatible\nroutes: {}\n");
    const r = await w.run(["run", "hello"]);
    expect(r.code).toBe(2);
    expect(errorLine(r)).toMatch(/dissent\.config\.yaml:4\b/);
    expect(w.server.requests).toHaveLength(0);
  });

  it("an unknown key names the file, line and key", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }), (url) => `${configYaml({ url })}temprature: 0\n`);
    const r = await w.run(["run", "hello"]);
    expect(r.code).toBe(2);
    expect(errorLine(r)).toMatch(/dissent\.config\.yaml:9: .*temprature/);
  });

  it("an unknown provider in a route names the file, the route and the provider", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }), (url) => configYaml({ url }).replace(`"local:${EXEC_MODEL}"`, '"localhost:qwen3:8b"'));
    const r = await w.run(["run", "hello"]);
    expect(r.code).toBe(2);
    const line = errorLine(r);
    expect(line).toContain("dissent.config.yaml");
    expect(line).toContain("'localhost'");
    expect(line).toContain("routes.executor");
    expect(w.server.requests).toHaveLength(0);
  });

  it("--config naming a missing file", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    const r = await w.run(["run", "--config", "nope.yaml", "hello"]);
    expect(r.code).toBe(2);
    expect(errorLine(r)).toContain("nope.yaml");
  });

  it("DISSENT_CONFIG naming a missing file", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    const r = await w.run(["run", "hello"], { env: { DISSENT_CONFIG: "missing.yaml" } });
    expect(r.code).toBe(2);
    expect(errorLine(r)).toContain("missing.yaml");
  });

  it("a challenger routed to a provider whose API key is not set is a configuration error, not a fail-open", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }), (url) =>
      [
        "providers:",
        `  local: { type: openai-compatible, base_url: "${url}" }`,
        `  cloud: { type: openai, base_url: "${url}", api_key_env: CLOUD_KEY }`,
        "routes:",
        `  executor: { primary: "local:${EXEC_MODEL}" }`,
        '  challenger: { primary: "cloud:gpt-x" }',
        "retry_backoff_ms: 10",
        "",
      ].join("\n"),
    );
    const r = await w.run(["run", "--audit", "hello"]);
    expect(r.code).toBe(2);
    expect(errorLine(r)).toContain("CLOUD_KEY");
  });

  it("--audit with no route for the challenger (and no default) is a configuration error, not a fail-open", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }), (url) =>
      ["providers:", `  local: { type: openai-compatible, base_url: "${url}" }`, "routes:", `  executor: { primary: "local:${EXEC_MODEL}" }`, ""].join("\n"),
    );
    const r = await w.run(["run", "--audit", "hello"]);
    expect(r.code).toBe(2);
    expect(errorLine(r)).toContain("challenger");
  });
});

describe("config discovery and DISSENT_HOME (e2e)", () => {
  it("--config wins over DISSENT_CONFIG, which wins over ./dissent.config.yaml", async () => {
    w = await world(byRole({ executor: (q) => ({ content: `model ${q.body.model}` }) }));
    const base = configYaml({ url: w.server.url });
    w.write("env.yaml", base.replaceAll(EXEC_MODEL, "env-model"));
    w.write("flag.yaml", base.replaceAll(EXEC_MODEL, "flag-model"));
    expect((await w.run(["run", "q"])).stdout).toBe(`model ${EXEC_MODEL}\n`);
    expect((await w.run(["run", "q"], { env: { DISSENT_CONFIG: "env.yaml" } })).stdout).toBe("model env-model\n");
    expect((await w.run(["run", "--config", "flag.yaml", "q"], { env: { DISSENT_CONFIG: "env.yaml" } })).stdout).toBe("model flag-model\n");
  });

  it("state lives under home: relative to the config's folder; DISSENT_HOME wins", async () => {
    const s = scratch();
    try {
      w = await world(byRole({ executor: { content: DRAFT } }));
      mkdirSync(join(s.dir, "conf"));
      s.write("conf/dissent.yaml", configYaml({ url: w.server.url, extra: "home: state\n" }));
      const cwd = join(s.dir, "work");
      mkdirSync(cwd);
      const r1 = await dissent(["run", "--config", "../conf/dissent.yaml", "q"], { cwd });
      expect(r1.code).toBe(0);
      expect(existsSync(join(s.dir, "conf", "state", "dissent.db"))).toBe(true);
      expect(existsSync(join(cwd, ".dissent"))).toBe(false);
      const r2 = await dissent(["run", "--config", "../conf/dissent.yaml", "q"], { cwd, env: { DISSENT_HOME: join(s.dir, "envhome") } });
      expect(r2.code).toBe(0);
      expect(existsSync(join(s.dir, "envhome", "dissent.db"))).toBe(true);
    } finally {
      s.cleanup();
    }
  });

  it("with no DISSENT_HOME and no home:, state lives in ./.dissent", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    const r = await dissent(["run", "q"], { cwd: w.dir });
    expect(r.code).toBe(0);
    expect(existsSync(join(w.dir, ".dissent", "dissent.db"))).toBe(true);
  });
});
