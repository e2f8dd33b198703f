import { spawnSync } from "node:child_process";
import { chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildProgram } from "../../src/cli/main.js";
import { BIN, scratch } from "../support/cli.js";

/**
 * action.yml and the example workflow, checked as actionlint would and then run (docs/github-action.md):
 * inputs and step outputs that exist, no `${{ }}` inside a script (no shell injection from an issue or
 * a comment), the CLI commands and flags the scripts call exist, and the scripts themselves, run by
 * bash against the built CLI, write the documented outputs.
 */

const ROOT = join(import.meta.dirname, "../..");
interface Step {
  id?: string;
  uses?: string;
  run?: string;
  shell?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string | number>;
}
interface Action {
  inputs: Record<string, { default?: string; required?: boolean; description: string }>;
  outputs: Record<string, { value: string; description: string }>;
  runs: { using: string; steps: Step[] };
}
const action = parse(readFileSync(join(ROOT, "action.yml"), "utf8")) as Action;
const steps = action.runs.steps;
const byId = (id: string) => steps.find((s) => s.id === id) as Step;

/** Every `${{ … }}` expression in a value. */
const expressions = (text: string) => [...text.matchAll(/\$\{\{([^}]*)\}\}/g)].map((m) => m[1]?.trim() ?? "");
/** The environment GitHub gives every step (docs: "Default environment variables"). */
const GITHUB_DEFAULTS = ["GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_EVENT_PATH", "RUNNER_TEMP", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY"];

describe("action.yml (actionlint-style)", () => {
  it("is a composite action with the documented inputs and outputs", () => {
    expect(action.runs.using).toBe("composite");
    expect(Object.keys(action.inputs)).toEqual(expect.arrayContaining(["command", "config", "issue", "github-token", "openai-api-key", "anthropic-api-key"]));
    expect(action.outputs.status?.value).toBe("${{ steps.run.outputs.status }}");
    expect(action.outputs["plan-url"]?.value).toBe("${{ steps.run.outputs.plan-url }}");
    expect(steps[0]).toMatchObject({ uses: "actions/setup-node@v4", with: { "node-version": 20 } });
    expect(steps.some((s) => s.uses === "actions/cache@v4" && s.with?.path === "~/.npm")).toBe(true);
    expect(steps.find((s) => s.run?.includes("npm install"))?.run).toMatch(/npm install .*"dissent@\$DISSENT_VERSION"/);
  });

  it("every input, step and output an expression names exists, and no script interpolates an expression", () => {
    const ids = new Set<string>();
    for (const s of steps) {
      const texts = [s.if ?? "", ...Object.values(s.env ?? {}), ...Object.values(s.with ?? {}).map(String)];
      for (const e of texts.flatMap((t) => (t === s.if ? [t] : expressions(t)))) {
        for (const m of e.matchAll(/inputs\.([\w-]+)/g)) expect(Object.keys(action.inputs), e).toContain(m[1]);
        for (const m of e.matchAll(/steps\.([\w-]+)\.outputs\.([\w-]+)/g)) expect([...ids], `${e}: a step before this one`).toContain(m[1]);
      }
      // A title or a comment in `${{ }}` inside a script would be shell: values reach scripts through env only.
      if (s.run) expect(expressions(s.run), s.run).toEqual([]);
      if (s.run) expect(s.shell).toBe("bash");
      if (s.id) ids.add(s.id);
    }
    for (const o of Object.values(action.outputs)) for (const e of expressions(o.value)) expect([...ids]).toContain(/steps\.([\w-]+)/.exec(e)?.[1]);
  });

  it("every variable a script reads is set by its step, by the script, or by GitHub", () => {
    for (const s of steps.filter((x) => x.run)) {
      const script = s.run ?? "";
      const assigned = [...script.matchAll(/(?:^|[;\s])([A-Za-z_]\w*)=/gm)].map((m) => m[1]);
      const known = new Set([...Object.keys(s.env ?? {}), ...GITHUB_DEFAULTS, ...assigned, "PATH"]);
      for (const m of script.matchAll(/\$\{?([A-Za-z_]\w*)/g)) expect([...known], `${m[1]} in\n${script}`).toContain(m[1]);
    }
  });

  it("the dissent commands and flags the run step calls are the CLI's own", () => {
    const program = buildProgram(
      {
        stdout: () => undefined,
        stderr: () => undefined,
        readStdin: async () => undefined,
        stderrIsTTY: false,
        columns: 80,
        env: {},
        cwd: ROOT,
        signal: new AbortController().signal,
        redact: (t) => t,
      },
      () => undefined,
    );
    const find = (path: string[]): Command | undefined => path.reduce<Command | undefined>((c, name) => c?.commands.find((x) => x.name() === name), program);
    const calls = [...(byId("run").run ?? "").matchAll(/\bdissent ((?:[a-z]+ )+)(.*?)(?:>|;|$)/gm)];
    expect(calls.length).toBe(3);
    const missing: string[] = [];
    for (const [, words = "", rest = ""] of calls) {
      const path = words.trim().split(" ");
      const cmd = find(path);
      if (!cmd) {
        missing.push(path.join(" "));
        continue;
      }
      for (const flag of rest.match(/--[a-z-]+/g) ?? [])
        expect(
          cmd.options.map((o) => o.long),
          `${path.join(" ")} ${flag}`,
        ).toContain(flag);
    }
    // Every command the action runs exists, `issue implement` included.
    expect(missing).toEqual([]);
  });

  it("its scripts, run by bash against the built CLI, pick the command from the event and write status and plan-url", () => {
    const s = scratch("dissent-action-");
    try {
      const bin = s.write("dissent", `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
      chmodSync(bin, 0o755);
      s.write(
        "dissent.config.yaml",
        'providers:\n  local: { type: openai-compatible, base_url: "http://127.0.0.1:9/v1" }\ntracker: { type: github, repo: "acme/widgets" }\n',
      );
      const event = s.write(
        "event.json",
        readFileSync(join(ROOT, "test/fixtures/github/issue_comment.created.json"), "utf8").replace(/\/dissent resolve [^"]*/, "> /dissent plan"),
      );
      const bash = (step: Step, env: Record<string, string>) => {
        const output = s.write(`out-${step.id}`, "");
        const r = spawnSync("bash", ["-c", step.run ?? ""], {
          cwd: s.dir,
          env: { PATH: `${s.dir}:${process.env.PATH ?? ""}`, HOME: s.dir, RUNNER_TEMP: s.dir, GITHUB_OUTPUT: output, ...env },
          encoding: "utf8",
        });
        return {
          ...r,
          outputs: Object.fromEntries(
            readFileSync(output, "utf8")
              .trim()
              .split("\n")
              .filter(Boolean)
              .map((l) => l.split(/=(.*)/s).slice(0, 2)),
          ),
        };
      };
      const setup = bash(byId("setup"), {
        INPUT_COMMAND: "",
        INPUT_ISSUE: "",
        INPUT_VERSION: "",
        EVENT_NAME: "issue_comment",
        EVENT_ISSUE: "12",
        ACTION_PATH: ROOT,
      });
      expect(setup.status, setup.stderr).toBe(0);
      const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
      expect(setup.outputs).toEqual({ command: "comment", issue: "12", version });
      const refused = bash(byId("setup"), {
        INPUT_COMMAND: "deploy",
        INPUT_ISSUE: "",
        INPUT_VERSION: "",
        EVENT_NAME: "push",
        EVENT_ISSUE: "",
        ACTION_PATH: ROOT,
      });
      expect(refused.status).toBe(2);
      expect(refused.stderr).toBe("dissent: error: command must be plan, implement or comment, not 'deploy'\n");

      const run = bash(byId("run"), {
        COMMAND: "comment",
        ISSUE: "12",
        DISSENT_CONFIG: "dissent.config.yaml",
        DISSENT_HOME: join(s.dir, "home"),
        GITHUB_TOKEN: "ghp_unused0000",
        OPENAI_API_KEY: "",
        ANTHROPIC_API_KEY: "",
        GITHUB_EVENT_PATH: event,
        GITHUB_SERVER_URL: "https://github.com",
        GITHUB_REPOSITORY: "acme/widgets",
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.outputs).toEqual({ status: "ignored", "plan-url": "https://github.com/acme/widgets/issues/12" });
    } finally {
      s.cleanup();
    }
  });
});

describe("examples/github/dissent.yml", () => {
  const wf = parse(readFileSync(join(ROOT, "examples/github/dissent.yml"), "utf8")) as {
    on: Record<string, { types: string[] }>;
    permissions: Record<string, string>;
    concurrency: { group: string; "cancel-in-progress": boolean };
    jobs: Record<string, { if: string; steps: Step[] }>;
  };

  it("plans on issues opened/labeled, takes comment commands, one run per issue at a time", () => {
    expect(wf.on).toEqual({ issues: { types: ["opened", "labeled"] }, issue_comment: { types: ["created"] } });
    expect(wf.permissions).toMatchObject({ issues: "write", contents: "read" });
    expect(wf.concurrency).toEqual({ group: "dissent-issue-${{ github.event.issue.number }}", "cancel-in-progress": false });
    const uses = (job: string) => wf.jobs[job]?.steps.find((s) => s.uses?.endsWith("/dissent@v1"));
    expect(uses("plan")?.with?.command).toBe("plan");
    expect(uses("comment")?.with?.command).toBe("comment");
    expect(wf.jobs.comment?.if).toContain("!github.event.issue.pull_request");
    for (const job of Object.values(wf.jobs)) expect(job.steps[0]?.uses).toBe("actions/checkout@v4"); // the config is in the repository
    for (const job of Object.values(wf.jobs))
      for (const s of job.steps)
        for (const key of Object.keys(s.with ?? {})) if (s.uses?.endsWith("/dissent@v1")) expect(Object.keys(action.inputs)).toContain(key);
  });
});
