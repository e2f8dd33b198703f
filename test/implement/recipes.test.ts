/**
 * The coding-agent recipes (README.md, docs/implement.md#recipes): the README and the reference page
 * give the same command line for Claude Code, Codex CLI, Aider and OpenCode, and each command line,
 * run as dissent runs an agent (`sh -c` in the worktree, the task on stdin and in
 * `$DISSENT_TASK_FILE`, only the agent's environment), hands the agent the whole task the way the
 * README says — a stand-in executable of each agent's name records what it received. A task full of
 * quotes, `$`, backticks and newlines survives the shell.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { agentEnv } from "../../src/implement/attempt.js";
import { runCommand } from "../../src/implement/command.js";
import { scratch } from "../support/cli.js";

const ROOT = join(import.meta.dirname, "..", "..");
const AGENTS = ["Claude Code", "Codex CLI", "Aider", "OpenCode"] as const;

/** The README's recipe table: agent → command line and how the task reaches it. */
function readmeRecipes(): Map<string, { command: string; how: string }> {
  const rows = readFileSync(join(ROOT, "README.md"), "utf8")
    .split("\n")
    .map((l) => /^\| (Claude Code|Codex CLI|Aider|OpenCode) \| `(.+)` \| (.+) \|$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null);
  return new Map(rows.map((m) => [m[1] ?? "", { command: m[2] ?? "", how: m[3] ?? "" }]));
}

/** docs/implement.md's recipes: the `command:` of the YAML block after each agent's bold name. */
function pageRecipes(): Map<string, string> {
  const page = readFileSync(join(ROOT, "docs", "implement.md"), "utf8");
  const out = new Map<string, string>();
  for (const agent of AGENTS) {
    const from = page.indexOf(`**${agent}**`);
    const m = /^\s*command: (['"])(.*)\1\s*$/m.exec(page.slice(from));
    if (from >= 0 && m?.[2]) out.set(agent, m[2]);
  }
  return out;
}

const s = scratch("dissent-recipes-");
afterAll(() => s.cleanup());

const TASK = [
  "# Issue 7: Add a sum function",
  "",
  'Don\'t break `npm test`; the plan says: "sum(a, b) returns a + b".',
  "Costs $HOME and $(whoami) nothing — these are words, not commands.",
  "--yes-always is not a flag here",
  "",
].join("\n");

/** Runs a recipe as dissent runs an agent, with a stand-in for the agent's executable; returns what the stand-in received. */
async function received(command: string): Promise<{ argv: string[]; stdin: string; cwd: string }> {
  const name = command.split(" ")[0] ?? "";
  const dir = join(s.dir, name);
  const bin = join(dir, "bin");
  const worktree = join(dir, "worktree");
  mkdirSync(bin, { recursive: true });
  mkdirSync(worktree, { recursive: true });
  const record = join(dir, "received.json");
  writeFileSync(
    join(bin, name),
    [
      "#!/usr/bin/env node",
      'import { readFileSync, writeFileSync } from "node:fs";',
      'const stdin = readFileSync(0, "utf8");',
      `writeFileSync(${JSON.stringify(record)}, JSON.stringify({ argv: process.argv.slice(2), stdin, cwd: process.cwd() }));`,
      "",
    ].join("\n"),
  );
  chmodSync(join(bin, name), 0o755);
  const taskFile = join(dir, "task.md");
  writeFileSync(taskFile, TASK);
  const env = agentEnv({ PATH: `${bin}:${process.env.PATH ?? ""}`, HOME: dir, LANG: "C.UTF-8", OPENAI_API_KEY: "sk-not-for-the-agent" }, [], {
    DISSENT_TASK_FILE: taskFile,
    DISSENT_ISSUE_ID: "7",
    DISSENT_ATTEMPT: "1",
  });
  const run = await runCommand({ file: "/bin/sh", args: ["-c", command], cwd: worktree, env, stdin: TASK, timeoutMs: 30_000, redact: (t) => t });
  expect(run.exit_code, run.output_tail).toBe(0);
  return JSON.parse(readFileSync(record, "utf8")) as { argv: string[]; stdin: string; cwd: string };
}

describe("the coding-agent recipes", () => {
  it("the README and docs/implement.md give the same command line for each of the four agents", () => {
    const readme = readmeRecipes();
    const page = pageRecipes();
    expect([...readme.keys()].sort()).toEqual([...AGENTS].sort());
    for (const agent of AGENTS) expect(page.get(agent), agent).toBe(readme.get(agent)?.command);
  });

  it("each command line hands its agent the whole task as the README says, in the worktree", async () => {
    const readme = readmeRecipes();
    for (const agent of AGENTS) {
      const recipe = readme.get(agent);
      if (!recipe) throw new Error(`no README recipe for ${agent}`);
      const got = await received(recipe.command);
      expect(got.cwd, agent).toMatch(/worktree$/);
      if (/stdin/.test(recipe.how)) {
        expect(got.stdin, agent).toBe(TASK);
      } else if (/file/.test(recipe.how)) {
        const at = got.argv.indexOf("--message-file");
        expect(at, agent).toBeGreaterThanOrEqual(0);
        expect(readFileSync(got.argv[at + 1] ?? "", "utf8"), agent).toBe(TASK);
      } else {
        // $(cat …) drops the trailing newline, as every shell does.
        expect(got.argv.at(-1), agent).toBe(TASK.trimEnd());
      }
    }
    expect((await received(readme.get("Codex CLI")?.command ?? "")).argv.slice(0, 2)).toEqual(["exec", "--full-auto"]);
    expect((await received(readme.get("Claude Code")?.command ?? "")).argv).toEqual(["-p", "--permission-mode", "acceptEdits"]);
  });
});
