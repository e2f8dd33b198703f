import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { IMPLEMENT_ROLES } from "../../src/implement/roles.js";
import { PIPELINE_ROLES } from "../../src/pipeline/stages.js";
import { dissent, scratch, type CliResult } from "./cli.js";
import { frontier, startRealisticDouble, type Defect, type Quirks, type RealisticDouble } from "./double/index.js";
import { startGithubDouble, type GithubDouble } from "./github-double.js";

/** The scripted coding agent (a small node script: test/fixtures/agents/scripted-agent.mjs). */
export const SCRIPTED_AGENT = fileURLToPath(new URL("../fixtures/agents/scripted-agent.mjs", import.meta.url));
/** The hostile coding agents (small shell scripts: test/fixtures/agents/hostile*.sh); $HOSTILE or $HOSTILE_PLAN picks what it does. */
export const HOSTILE_AGENT = fileURLToPath(new URL("../fixtures/agents/hostile.sh", import.meta.url));

/** The issue every implement world plans and implements. */
export const SUM_TITLE = "Add a sum function";
/** The sum issue's body. */
export const SUM_BODY = "Implement sum(a, b) in src/sum.js so that it returns a + b; test.js checks it.";

/** What the review critics of the double find in a diff: subtraction where the plan adds, a shell injection, and a cache that never forgets (a lone HIGH). */
export const SUM_DEFECTS: readonly Defect[] = [
  {
    id: "subtracts",
    stage: "plan",
    code: true,
    line: "return a - b;",
    fix: "return a + b;",
    lanes: ["review.correctness", "review.acceptance"],
    severity: "CRITICAL",
    category: "logic",
    wordings: ["sum subtracts its arguments instead of adding them", "The sum function returns a minus b", "sum() computes a difference, not a sum"],
  },
  {
    id: "injection",
    stage: "plan",
    code: true,
    line: 'return execSync("convert " + name);',
    fix: 'return execFileSync("convert", [name]);',
    lanes: ["review.security"],
    severity: "CRITICAL",
    category: "injection",
    wordings: [
      "A file name reaches a shell unescaped: command injection",
      "convert() runs a shell command built from its input",
      "Shell injection through the name given to convert",
    ],
  },
  {
    id: "unbounded-cache",
    stage: "plan",
    code: true,
    line: "const seen = new Map(); // every result, kept forever",
    fix: "const seen = new LRU(1000);",
    lanes: ["review.correctness"],
    severity: "HIGH",
    category: "performance",
    wordings: [
      "The memo cache grows without bound: every distinct argument pair is kept forever",
      "memoSum keeps every result in a Map that is never evicted, so memory grows with traffic",
      "An unbounded Map caches sums forever; a long-running process leaks memory",
    ],
  },
];

/**
 * Two criteria of the sum issue the spec judge finds wanting (HIGH), which a criteria writer that
 * ignores concerns never fixes: the plan forwards both to implementation. The `good-and-negatives`
 * agent writes the test of negatives the first asks for; nothing answers the second.
 */
export const SUM_FORWARDED: readonly Defect[] = [
  {
    id: "negatives",
    stage: "spec",
    line: "sum(2, 3) returns 5.",
    fix: "sum returns the right total for negative numbers and zero: sum(-2, -3) is -5 and sum(0, 4) is 4.",
    answeredBy: "assert.equal(sum(-2, -3), -5);",
    lanes: ["spec.judge"],
    severity: "HIGH",
    category: "test_gap",
    wordings: [
      "No criterion checks sum with negative numbers or zero",
      "The criteria test one positive pair only; negatives are never checked",
      "Only sum(2, 3) is checked: a sign bug would pass",
    ],
  },
  {
    id: "non-numbers",
    stage: "spec",
    line: "sum accepts whatever it is given.",
    fix: "sum throws a TypeError when an argument is not a number.",
    answeredBy: 'if (typeof a !== "number" || typeof b !== "number") throw new TypeError("sum takes two numbers");',
    lanes: ["spec.judge"],
    severity: "HIGH",
    category: "edge_cases",
    wordings: [
      "Nothing says what sum does with arguments that are not numbers",
      "sum('2', 3) would concatenate: no criterion rejects non-numbers",
      "Non-number arguments are never handled or tested",
    ],
  },
];

/**
 * The live processes (zombies left out) started for a world's agent or its tests: their environment
 * carries the world's AGENT_LOG and dissent's DISSENT_AGENT_RUN mark. Found from outside any sandbox,
 * whatever pid they have inside one.
 */
export function agentProcesses(agentLog: string): number[] {
  const log = Buffer.from(`AGENT_LOG=${agentLog}\0`);
  const mark = Buffer.from("DISSENT_AGENT_RUN=");
  const out: number[] = [];
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (/^\S+ \(.*\) [ZX] /.test(stat)) continue;
      const env = readFileSync(`/proc/${name}/environ`);
      if (env.includes(log) && env.includes(mark)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** `git` in a test's own repositories, as a user with an identity. */
export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "" },
  });
}

/**
 * A scratch project: a git repository on `main` with a failing sum test, a git-ignored `.env`, a
 * branch `feature` and a tag `v1`, and a bare `origin` it was pushed to.
 */
export function sumRepository(dir: string): { repo: string; origin: string } {
  const repo = join(dir, "repo");
  const origin = join(dir, "origin.git");
  mkdirSync(join(repo, "src"), { recursive: true });
  gitIn(dir, "init", "--quiet", "--bare", "-b", "main", origin);
  gitIn(repo, "init", "--quiet", "-b", "main");
  writeFileSync(join(repo, "src", "sum.js"), 'export function sum(a, b) {\n  throw new Error("not implemented");\n}\n');
  writeFileSync(
    join(repo, "test.js"),
    'import assert from "node:assert/strict";\nimport { sum } from "./src/sum.js";\n\nassert.equal(sum(2, 3), 5);\nconsole.log("sum: 1 test passed");\n',
  );
  writeFileSync(join(repo, "package.json"), '{ "name": "sum", "type": "module", "private": true }\n');
  writeFileSync(join(repo, ".gitignore"), ".env\n");
  writeFileSync(join(repo, ".env"), "LOCAL_SETTING=the user's own\n");
  gitIn(repo, "add", "--all");
  gitIn(repo, "commit", "--quiet", "-m", "a sum to implement");
  gitIn(repo, "branch", "feature");
  gitIn(repo, "tag", "v1");
  gitIn(repo, "remote", "add", "origin", origin);
  gitIn(repo, "push", "--quiet", "origin", "main");
  return { repo, origin };
}

/**
 * A config routing every role to a model of its name on the double, with an `implement:` section
 * running the scripted agent — under bubblewrap unless `sandbox` says otherwise (CI installs it;
 * without it these tests fail, never skip), allowed to write `writable` (where it keeps its log).
 */
export function implementConfig(
  url: string,
  repo: string,
  o: { implement?: string; extra?: string; attemptTimeoutMs?: number; sandbox?: "bubblewrap" | "none" | "auto"; writable?: string[]; command?: string } = {},
): string {
  return [
    "providers:",
    `  local: { type: openai-compatible, base_url: "${url}" }`,
    "routes:",
    '  default: { primary: "local:default" }',
    ...[...new Set([...PIPELINE_ROLES, ...IMPLEMENT_ROLES])].map((r) => `  ${r}: { primary: "local:${r}" }`),
    "retry_backoff_ms: 10",
    "call_timeout_ms: 20000",
    "implement:",
    `  repo: "${repo}"`,
    "  base_branch: main",
    `  command: ${JSON.stringify(o.command ?? `node ${SCRIPTED_AGENT}`)}`,
    '  test_command: "node test.js"',
    `  attempt_timeout_ms: ${o.attemptTimeoutMs ?? 20_000}`,
    "  env: [AGENT_MODE, AGENT_LOG, HOSTILE, HOSTILE_PLAN]",
    // The agents' scripts, read-only: a checkout under /tmp is behind the sandbox's private /tmp.
    `  readable: [${JSON.stringify(dirname(SCRIPTED_AGENT))}]`,
    `  sandbox: ${o.sandbox ?? "bubblewrap"}`,
    ...(o.writable?.length ? [`  writable: [${o.writable.map((w) => JSON.stringify(w)).join(", ")}]`] : []),
    ...(o.implement ? [o.implement] : []),
    o.extra ?? "",
  ].join("\n");
}

/** One implement scenario: a repository, the realistic double, a config, and the CLI run as a user runs it. */
export interface ImplementWorld {
  dir: string;
  repo: string;
  origin: string;
  home: string;
  /** Where the scripted agent logs each run (in a folder the sandbox lets it write: `implement.writable`). */
  agentLog: string;
  double: RealisticDouble;
  run(args: string[], opts?: { env?: Record<string, string>; timeoutMs?: number }): Promise<CliResult>;
  /** `issue new` then `issue plan` until the plan is ready; returns the id. */
  readyIssue(title?: string, body?: string): Promise<string>;
  close(): Promise<void>;
}

/** Builds an implement world; `mode` is the scripted agent's AGENT_MODE. */
export async function implementWorld(o: {
  mode: string;
  attemptTimeoutMs?: number;
  quirks?: Partial<Quirks>;
  /** More defects of the sum issue, beside SUM_DEFECTS (say, criteria the spec stage writes and the plan forwards to implementation). */
  defects?: readonly Defect[];
  implement?: string;
  extra?: string;
  env?: Record<string, string>;
  /** Roles whose provider is down (HTTP 503); the double reads the array on every request, so a test can change it. */
  down?: string[];
  /** `implement.sandbox` (bubblewrap unless said). */
  sandbox?: "bubblewrap" | "none" | "auto";
  /** `implement.command` (the scripted agent unless said). */
  command?: string;
}): Promise<ImplementWorld> {
  const s = scratch("dissent-implement-");
  const { repo, origin } = sumRepository(s.dir);
  const double = await startRealisticDouble({
    seed: 7,
    quirks: o.quirks ?? frontier,
    scenario: { issues: { [SUM_TITLE]: [...SUM_DEFECTS, ...(o.defects ?? [])] } },
    ...(o.down ? { down: o.down } : {}),
  });
  const agentDir = join(s.dir, "agent");
  mkdirSync(agentDir, { recursive: true });
  s.write(
    "dissent.config.yaml",
    implementConfig(double.url, repo, {
      writable: [agentDir],
      ...(o.sandbox ? { sandbox: o.sandbox } : {}),
      ...(o.command ? { command: o.command } : {}),
      ...(o.implement ? { implement: o.implement } : {}),
      ...(o.extra ? { extra: o.extra } : {}),
      ...(o.attemptTimeoutMs ? { attemptTimeoutMs: o.attemptTimeoutMs } : {}),
    }),
  );
  const home = join(s.dir, "home");
  const agentLog = join(agentDir, "agent.log");
  const run = (args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}) =>
    dissent(args, {
      cwd: s.dir,
      env: { DISSENT_HOME: home, AGENT_MODE: o.mode, AGENT_LOG: agentLog, ...o.env, ...opts.env },
      timeoutMs: opts.timeoutMs ?? 120_000,
    });
  return {
    dir: s.dir,
    repo,
    origin,
    home,
    agentLog,
    double,
    run,
    async readyIssue(title = SUM_TITLE, body = SUM_BODY) {
      const created = await run(["issue", "new", "--title", title, "--body", body]);
      if (created.code !== 0) throw new Error(`issue new: ${created.stderr}`);
      const id = created.stdout.trim();
      const planned = await run(["issue", "plan", id, "--json"]);
      if (planned.code !== 0) throw new Error(`issue plan: ${planned.stderr}`);
      const status = (JSON.parse(planned.stdout) as { status: string }).status;
      if (status !== "ready") throw new Error(`issue plan ended ${status}, not ready`);
      return id;
    },
    async close() {
      await double.close();
      s.cleanup();
    },
  };
}

/**
 * Moves a world onto the GitHub tracker: a GitHub double over its bare origin, issue #1 the sum
 * issue, planned through the CLI. The caller closes `gh`; `env` is what every later run needs.
 */
export async function plannedOnGithub(w: ImplementWorld): Promise<{ gh: GithubDouble; env: Record<string, string> }> {
  const gh = await startGithubDouble({ gitRepo: w.origin });
  const config = readFileSync(join(w.dir, "dissent.config.yaml"), "utf8");
  writeFileSync(join(w.dir, "dissent.config.yaml"), `${config}\ntracker: { type: github, repo: "acme/widgets", base_url: "${gh.url}" }\n`);
  gh.addIssue({ number: 1, title: SUM_TITLE, body: SUM_BODY });
  const env = { GITHUB_TOKEN: gh.token, DISSENT_GITHUB_WRITE_INTERVAL_MS: "0" };
  const planned = await w.run(["issue", "plan", "1", "--json"], { env });
  if (planned.code !== 0) {
    await gh.close();
    throw new Error(`issue plan on GitHub: exit ${planned.code}: ${planned.stderr}`);
  }
  return { gh, env };
}
