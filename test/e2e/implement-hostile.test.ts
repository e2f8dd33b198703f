/**
 * Issue 32, "the coding agent is not contained": a hostile agent (test/fixtures/agents/hostile*.sh)
 * against `dissent issue implement` through the built CLI, under bubblewrap (`implement.sandbox:
 * bubblewrap`; CI installs it, and without it these runs fail with dissent's error naming it — never
 * skip) and unsandboxed (`none`). What the agent does, it does as any agent could; what dissent must
 * hold: its environment stays its own, no hook or config of the agent's runs with dissent's rights,
 * nothing is written through a link it planted, the user's checkout (ignored files and refs too)
 * is untouched or the attempt is stopped, no secret leaves in a diff, and nothing of the agent
 * outlives its attempt — or the dissent that was killed while it ran.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { agentProcesses, gitIn, HOSTILE_AGENT, implementWorld, plannedOnGithub, type ImplementWorld } from "../support/implement-world.js";
import { startDissent, until } from "../support/proc.js";

vi.setConfig({ testTimeout: 240_000 });

type Sandbox = "bubblewrap" | "none";
const SANDBOXES: readonly Sandbox[] = ["bubblewrap", "none"];
/** The provider key dissent holds: shaped like no provider's, so only Config.secrets can redact it. */
const KEY = "hunter2-provider-secret-7c1f9e";

interface EventJson {
  type: string;
  attempt?: number;
  outcome?: string;
  secrets?: number | "withheld" | "squashed";
  escaped?: string[];
  command?: string;
  agent?: { timed_out: boolean; exit_code: number | null; output_tail: string };
}

const worlds: ImplementWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

async function hostile(behaviour: string, sandbox: Sandbox, o: { attemptTimeoutMs?: number; key?: boolean } = {}): Promise<ImplementWorld> {
  const w = await implementWorld({
    mode: "unused",
    command: `sh ${HOSTILE_AGENT}`,
    sandbox,
    env: { HOSTILE: behaviour, ...(o.key ? { TEST_PROVIDER_KEY: KEY } : {}) },
    ...(o.attemptTimeoutMs ? { attemptTimeoutMs: o.attemptTimeoutMs } : {}),
  });
  worlds.push(w);
  if (o.key) {
    // The provider's key is in dissent's environment (api_key_env): a secret it holds, never the agent's.
    const file = join(w.dir, "dissent.config.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace(/base_url: "([^"]+)" \}/, 'base_url: "$1", api_key_env: TEST_PROVIDER_KEY }'));
  }
  return w;
}

async function events(w: ImplementWorld, id: string): Promise<EventJson[]> {
  const r = await w.run(["events", "--issue", id, "--json"]);
  return r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EventJson);
}

/** The user's refs, every one with its commit. */
const refsOf = (repo: string) => gitIn(repo, "for-each-ref", "--format=%(refname) %(objectname)");

describe.each(SANDBOXES)("a hostile coding agent, implement.sandbox: %s", (sandbox) => {
  it("reads dissent's environment through /proc and commits what it found: no secret reaches a model, the output or the events; the attempt is flagged", async () => {
    const w = await hostile("environ", sandbox, { key: true });
    const id = await w.readyIssue();
    const r = await w.run(["issue", "implement", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const log = await events(w, id);
    const attempts = log.filter((e) => e.type === "ImplementAttempt");
    const leaked = gitIn(w.repo, "show", `dissent/issue-${id}:leaked.env`);
    if (sandbox === "bubblewrap") {
      // Its own PID namespace: the only environment above it is the one dissent gave it.
      expect(leaked).not.toContain(KEY);
      expect(leaked).not.toMatch(/TEST_PROVIDER_KEY/);
      expect(attempts.every((e) => e.secrets === undefined)).toBe(true);
    } else {
      // Unsandboxed it reads dissent's /proc/PID/environ and commits the key: dissent sees it in the diff.
      expect(leaked).toContain(KEY);
      expect(attempts[0]?.secrets).toBeGreaterThan(0);
      const body = (JSON.parse((await w.run(["issue", "show", id, "--json"])).stdout) as { implementation: { body: string } }).implementation.body;
      expect(body).toMatch(/## Secrets\n\n\*\*The diff of attempts? 1\b/);
      // dissent's own check blocks it as a CRITICAL quoting its line; the agent is told to remove it.
      const blocked = log.filter((e) => e.type === "ConcernBlocked") as unknown as { concern: { raised_by: string; category: string } }[];
      expect(blocked.some((b) => b.concern.raised_by === "test_command" && b.concern.category === "secret")).toBe(true);
    }
    // Wherever it was, it never left: not in a request to a model, the output, the events.
    for (const req of w.double.requests) expect(JSON.stringify(req.body)).not.toContain(KEY);
    const all = (await w.run(["events", "--json"])).stdout + (await w.run(["issue", "show", id])).stdout;
    expect(r.stdout + r.stderr + all).not.toContain(KEY);
  });

  it("plants git hooks (each sleeps ten minutes) and an fsmonitor in its repository: dissent's git runs none of them", async () => {
    const w = await hostile("hook", sandbox);
    const id = await w.readyIssue();
    const r = await w.run(["issue", "implement", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { attempts: { outcome: string; test_exit_code: number | null }[] };
    expect(out.attempts[0]).toMatchObject({ outcome: "tested", test_exit_code: 0 });
    // A hook that ran would have left its environment beside the agent's log.
    const ran = readdirSync(join(w.agentLog, "..")).filter((f) => f.includes(".hook-"));
    expect(ran).toEqual([]);
    expect(gitIn(w.repo, "show", `dissent/issue-${id}:src/sum.js`)).toContain("return a + b;");
  });

  it("plants a symbolic link where the next task file goes: dissent writes the next task as a file of its own, never through the link", async () => {
    const w = await hostile("task-link", sandbox);
    const id = await w.readyIssue();
    const r = await w.run(["issue", "implement", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(w.agentLog, "utf8")).toMatch(new RegExp(`hostile task-link issue ${id} attempt 2`));
    expect(existsSync(`${w.agentLog}.link-target`)).toBe(false);
    const next = join(w.home, "tasks", `issue-${id}-attempt-2.md`);
    expect(lstatSync(next).isFile()).toBe(true);
    expect(readFileSync(next, "utf8")).toContain("Why the last attempt was sent back");
  });

  it("overwrites a git-ignored file of the user's checkout (.env) by absolute path: it cannot, or the attempt is stopped", async () => {
    const w = await hostile("ignored", sandbox);
    const id = await w.readyIssue();
    const r = await w.run(["issue", "implement", id]);
    const env = readFileSync(join(w.repo, ".env"), "utf8");
    if (sandbox === "bubblewrap") {
      expect(r.code, r.stderr).toBe(0);
      expect(env).toBe("LOCAL_SETTING=the user's own\n"); // the checkout is read-only in the sandbox
    } else {
      expect(env).toContain("STOLEN"); // it did: and dissent saw it, though git status does not show an ignored file
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^dissent: error: the coding agent wrote outside its worktree in attempt 1 .*\.env/m);
      expect((await events(w, id)).find((e) => e.type === "ImplementAttempt")?.outcome).toBe("escaped");
    }
  });

  it("moves refs — main to a new commit, a branch and a tag deleted, a tag made — in its clone and in the user's checkout: no ref of the user's moves, or the attempt is stopped", async () => {
    const w = await hostile("refs", sandbox);
    const id = await w.readyIssue();
    const before = refsOf(w.repo);
    const r = await w.run(["issue", "implement", id]);
    if (sandbox === "bubblewrap") {
      expect(r.code, r.stderr).toBe(0);
      // Its own clone's refs are its own; the user's are read-only to it. Only dissent's branch was added, by dissent.
      expect(refsOf(w.repo).replace(new RegExp(`^refs/heads/dissent/issue-${id} \\S+\\n`, "m"), "")).toBe(before);
    } else {
      expect(r.code).toBe(1);
      const escaped = (await events(w, id)).find((e) => e.type === "ImplementAttempt")?.escaped ?? [];
      expect(escaped.some((p) => /refs\/heads\/main|refs\/tags\/v1|refs\/heads\/feature/.test(p))).toBe(true);
    }
  });

  it("leaves a daemon in a session of its own holding its output pipes: the attempt ends when the agent does, and the daemon is stopped", async () => {
    const w = await hostile("daemon", sandbox, { attemptTimeoutMs: 5_000 });
    const id = await w.readyIssue();
    const r = await w.run(["issue", "implement", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const attempt = (await events(w, id)).find((e) => e.type === "ImplementAttempt");
    expect(attempt?.agent).toMatchObject({ timed_out: false, exit_code: 0 });
    expect(attempt?.agent?.output_tail).toContain("daemon up");
    expect(agentProcesses(w.agentLog)).toEqual([]);
  });

  it("survives its dissent's kill -9: it dies with it (bubblewrap), or the next issue implement stops it before its attempt", async () => {
    const w = await hostile("survivor", sandbox);
    const id = await w.readyIssue();
    const ticks = `${w.agentLog}.ticks-${id}`;
    const killed = startDissent(["issue", "implement", id], { cwd: w.dir, env: { DISSENT_HOME: w.home, HOSTILE: "survivor", AGENT_LOG: w.agentLog } });
    await until(() => existsSync(ticks) && readFileSync(ticks, "utf8").includes("tick"), 120_000);
    const orphans = agentProcesses(w.agentLog);
    expect(orphans.length).toBeGreaterThan(0);
    killed.child.kill("SIGKILL");
    await killed.done;
    if (sandbox === "bubblewrap") {
      await until(() => agentProcesses(w.agentLog).length === 0, 15_000);
    } else {
      // Unsandboxed, it outlives the dissent that started it: it goes on ticking.
      const seen = readFileSync(ticks, "utf8").length;
      await until(() => readFileSync(ticks, "utf8").length > seen, 15_000);
      expect(agentProcesses(w.agentLog).length).toBeGreaterThan(0);
    }
    writeFileSync(`${w.agentLog}.release-${id}`, "");
    const again = await w.run(["issue", "implement", id, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    // Never two agents at once: once the resumed attempt's agent started, the old one ticked no more.
    const lines = readFileSync(ticks, "utf8").trim().split("\n");
    const start = lines.findIndex((l) => l.startsWith("start "));
    expect(start).toBeGreaterThan(0);
    expect(lines.slice(start + 1).filter((l) => l.startsWith("tick "))).toEqual([]);
    expect(agentProcesses(w.agentLog)).toEqual([]);
    const recorded = (await events(w, id)).filter((e) => e.type === "ImplementProcessStarted" && e.command === "agent");
    expect(recorded.length).toBe(2);
  });
});

describe("a hostile agent's secret on GitHub", () => {
  it("unsandboxed, an agent that commits dissent's key: the branch is not pushed and no pull request opens; the review is recorded with the flag", async () => {
    const w = await hostile("environ", "none", { key: true });
    const { gh, env } = await plannedOnGithub(w);
    worlds.push({ ...w, close: () => gh.close() });
    const r = await w.run(["issue", "implement", "1", "--json"], { env: { ...env, TEST_PROVIDER_KEY: KEY } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^dissent: warning: the diff of issue 1's branch holds a secret dissent keeps: the branch was not pushed/m);
    expect(gitIn(w.origin, "branch", "--list")).not.toContain("dissent/");
    expect([...gh.pulls.values()]).toEqual([]);
    const out = JSON.parse(r.stdout) as { pull_request: { where: string }; status: string };
    expect(out).toMatchObject({ status: "hitl", pull_request: { where: "store" } });
    const opened = (await events(w, "1")).find((e) => e.type === "PullRequestOpened");
    expect(opened?.secrets).toBe("withheld");
    expect(JSON.stringify(gh.writes())).not.toContain(KEY);
  });
});
