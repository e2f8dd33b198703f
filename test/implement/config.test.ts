/** The `implement:` section and the review's roles (docs/configuration.md). */
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/load.js";
import { nearestRouteName, ROUTE_NAMES } from "../../src/config/roles.js";
import { configFromObject } from "../../src/config/load.js";

const base = { providers: { l: { type: "openai-compatible", base_url: "http://127.0.0.1:1/v1" } }, routes: { default: { primary: "l:m" } } };
const load = (extra: Record<string, unknown>) => configFromObject({ ...base, ...extra }, { env: {}, cwd: "/work/project" });

describe("implement: in the config", () => {
  it("takes the defaults of docs/configuration.md; repo resolves against the config's folder", () => {
    const c = load({ implement: { command: "claude -p" } });
    expect(c.implement).toEqual({
      repo: "/work/project",
      baseBranch: "main",
      remote: "origin",
      command: "claude -p",
      testCommand: null,
      attemptTimeoutMs: 1_800_000,
      testTimeoutMs: 600_000,
      env: [],
      sandbox: "auto",
      network: true,
      writable: [],
      readable: [],
      maxConcurrency: 1,
      openPr: true,
      maxAttemptsPerIssue: 8,
      maxAgentMsPerIssue: 14_400_000,
    });
    expect(load({}).implement).toBeNull();
  });

  it("implement.writable resolves ~ to the home folder and a relative path against the config's folder; a sandbox that is not one is refused", () => {
    const c = load({ implement: { command: "claude -p", sandbox: "bubblewrap", network: false, writable: ["~/.claude", "state"] } });
    expect(c.implement).toMatchObject({ sandbox: "bubblewrap", network: false, writable: [join(homedir(), ".claude"), "/work/project/state"] });
    expect(() => load({ implement: { command: "x", sandbox: "docker" } })).toThrow(/implement\.sandbox/);
  });

  it("an implement.env name that looks like a credential is a secret dissent redacts; any other is not", () => {
    const c = configFromObject(
      { ...base, implement: { command: "x", env: ["AGENT_API_KEY", "AGENT_MODE"] } },
      { env: { AGENT_API_KEY: "agent-key-0123456789", AGENT_MODE: "careful" }, cwd: "/work/project" },
    );
    expect(c.secrets).toContain("agent-key-0123456789");
    expect(c.secrets).not.toContain("careful");
  });

  it("refuses a misspelt key, a command missing, an env entry that is not a variable name, a branch that is an option", () => {
    expect(() => load({ implement: { command: "x", test_comand: "npm test" } })).toThrow(/implement/);
    expect(() => load({ implement: { test_command: "npm test" } })).toThrow(/implement\.command/);
    expect(() => load({ implement: { command: "x", env: ["GITHUB TOKEN"] } })).toThrow(/environment variable name/);
    expect(() => load({ implement: { command: "x", base_branch: "--force" } })).toThrow(/branch name/);
  });

  it("factory.implement needs an implement: section", () => {
    expect(() => load({ factory: { implement: true } })).toThrow(/factory\.implement is true but the config has no implement: section/);
    expect(load({ factory: { implement: true }, implement: { command: "x" } }).factory.implement).toBe(true);
  });

  it("the review's roles are routes (a review: route covers the four); a misspelt one names the nearest", () => {
    for (const r of ["review", "review.correctness", "review.tests", "review.security", "review.acceptance"]) expect(ROUTE_NAMES.has(r)).toBe(true);
    expect(nearestRouteName("review.securty")).toBe("review.security");
    const text = [
      "providers:",
      '  l: { type: openai-compatible, base_url: "http://127.0.0.1:1/v1" }',
      "routes:",
      "  review.acceptanse:",
      '    primary: "l:m"',
      "",
    ].join("\n");
    expect(() => parseConfigText(text, "dissent.config.yaml")).toThrow(
      "dissent.config.yaml:4: routes.review.acceptanse names no role: did you mean 'review.acceptance'?",
    );
  });
});
