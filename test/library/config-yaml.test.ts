/**
 * Issue 21 item 5: `yaml` loads on the first config file read, not when "dissent" is imported (a
 * library user who passes the config as an object never parses YAML). What must not break: a YAML
 * config still loads through the built package and through the CLI (which inlines yaml), and a bad
 * one still gets its one-line error with file and line.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dissent, scratch } from "../support/cli.js";

const ENTRY = fileURLToPath(new URL("../../dist/index.js", import.meta.url));

const PROVIDERS = "providers:\n  p:\n    type: openai-compatible\n    base_url: http://127.0.0.1:9/v1\n";
const GOOD = `home: ./from-yaml\n${PROVIDERS}routes:\n  default:\n    primary: p:m\n`;
const TYPO = `${PROVIDERS}routes:\n  challanger:\n    primary: p:m\n`;
const BAD = "providers:\n  p: [unclosed\n";

let s: ReturnType<typeof scratch>;
beforeEach(() => {
  s = scratch("dissent-yaml-");
  s.write("good.yaml", GOOD);
  s.write("typo.yaml", TYPO);
  s.write("bad.yaml", BAD);
});
afterEach(() => s.cleanup());

/** A fresh Node process importing the built package, as a library user's program does. */
function library(): Record<string, unknown> {
  const script = `
    import { createRequire } from "node:module";
    const { createDissent, ConfigError } = await import(${JSON.stringify(`file://${ENTRY}`)});
    const yamlLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes("/node_modules/yaml/"));
    const env = { DISSENT_HOME: "./home" };
    const fromObject = createDissent({ config: { providers: { p: { type: "openai-compatible", base_url: "http://127.0.0.1:9/v1" } }, routes: { default: { primary: "p:m" } } }, env, cwd: process.cwd() });
    const out = { objectRoutes: Object.keys(fromObject.config.routes ?? {}), yamlAfterObject: yamlLoaded() };
    const fromFile = createDissent({ config: "good.yaml", env: {}, cwd: process.cwd() });
    out.fileHome = fromFile.config.home;
    out.fileRoute = fromFile.config.routes?.default?.primary;
    out.yamlAfterFile = yamlLoaded();
    for (const name of ["bad.yaml", "typo.yaml"]) {
      try { createDissent({ config: name, env: {}, cwd: process.cwd() }); out[name] = "no error"; }
      catch (e) { out[name] = { configError: ConfigError.isInstance(e), message: e.message }; }
    }
    process.stdout.write(JSON.stringify(out));`;
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: s.dir, encoding: "utf8", timeout: 30_000 }));
}

describe("YAML config files, loaded on demand", () => {
  it("through the built package: an object config never loads yaml; a YAML file loads; bad YAML and a misspelt route get their one-line errors with the line", () => {
    const out = library();
    expect(out.objectRoutes).toEqual(["default"]);
    expect(out.yamlAfterObject).toBe(false);
    expect(out.fileHome).toBe(join(s.dir, "from-yaml"));
    expect(out.fileRoute).toBe("p:m");
    expect(out.yamlAfterFile).toBe(true);
    expect(out["bad.yaml"]).toEqual({ configError: true, message: expect.stringMatching(/^bad\.yaml:3:1: invalid YAML: [^\n]+$/) });
    expect(out["typo.yaml"]).toEqual({
      configError: true,
      message: expect.stringMatching(/^typo\.yaml:6: routes\.challanger names no role: did you mean 'challenger'\?/),
    });
  });

  it("through the CLI: a YAML config's home is used; bad YAML and a misspelt route exit 2 with one line naming file and line", async () => {
    const made = await dissent(["--config", "good.yaml", "issue", "new", "--title", "From a YAML config"], { cwd: s.dir });
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    expect(existsSync(join(s.dir, "from-yaml"))).toBe(true);

    const bad = await dissent(["--config", "bad.yaml", "issue", "list"], { cwd: s.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^dissent: error: bad\.yaml:3:1: invalid YAML: [^\n]+\n$/);

    const typo = await dissent(["--config", "typo.yaml", "issue", "list"], { cwd: s.dir });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^dissent: error: typo\.yaml:6: routes\.challanger names no role: did you mean 'challenger'\?[^\n]*\n$/);
  });
});
