import { afterEach, describe, expect, it } from "vitest";
import { byRole, configYaml, parseJsonOut, world, type World } from "../support/e2e.js";

// `--config`, `--json` and `--verbose` work before the command as well as after it (docs/configuration.md).

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("global options before the command", () => {
  it("dissent --config F --json run …: the named config, JSON output", async () => {
    w = await world(byRole({ executor: { content: "Draft." } }), () => "providers: {}\n");
    // The folder's own dissent.config.yaml routes nowhere: only the named file can answer.
    w.write("elsewhere.yaml", configYaml({ url: w.server.url }));
    const r = await w.run(["--config", "elsewhere.yaml", "--json", "run", "Say hi."]);
    expect(parseJsonOut(r).final_output).toBe("Draft.");
    expect(w.server.requests).toHaveLength(1);
  });

  it("dissent --verbose run …: every call on stderr", async () => {
    w = await world(byRole({ executor: { content: "Draft." } }));
    const r = await w.run(["--verbose", "run", "Say hi."]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("Draft.\n");
    expect(r.stderr).toMatch(/^dissent: call executor/m);
  });

  it("works for nested commands, and an option given after the command wins", async () => {
    w = await world(byRole({}));
    w.write("broken.yaml", "providers: [\n");
    const listed = await w.run(["--json", "issue", "list"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    const r = await w.run(["--config", "broken.yaml", "issue", "list", "--config", "dissent.config.yaml"]);
    expect(r.code, r.stderr).toBe(0);
    const bad = await w.run(["--config", "broken.yaml", "issue", "list"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^dissent: error: broken\.yaml:\d+/);
  });
});
