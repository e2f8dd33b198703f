import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { buildProgram } from "../../src/cli/main.js";
import { buildConfig, parseConfigText } from "../../src/config/load.js";
import { JUDGE_ROUTES } from "../../src/config/defaults.js";
import { sameModelWarning, verifierWarning } from "../../src/models/router.js";
import { STAGES } from "../../src/pipeline/stages.js";
import { type ActionStep, cacheDouble, cleanJob, type JobRun, readAction, runAction } from "../support/action-runner.js";
import { closedPort } from "../support/e2e.js";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { council, findings, PIPELINE_ROLES, requestText, roleOf } from "../support/hold.js";
import { startOpenAIServer, type FakeOpenAI } from "../support/openai-server.js";
import { quoteUnderReview } from "../support/quote.js";

/**
 * action.yml and the example workflow (docs/github-action.md, ADR-034): checked as actionlint would,
 * then run as GitHub's runner runs a composite action (test/support/action-runner.ts) — an event
 * payload file, GitHub's default variables, $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY — from a copy of
 * the action's own folder, with npm unreachable, against the GitHub double (as GitHub Enterprise
 * Server, named only by GITHUB_API_URL), a council of models of two families, actions/cache's double,
 * and a bare git repository for the wiki branch.
 */
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const ROOT = join(import.meta.dirname, "../..");
const action = readAction(join(ROOT, "action.yml"));
const steps = action.runs.steps;

/** Every `${{ … }}` expression in a value. */
const expressions = (text: string) => [...text.matchAll(/\$\{\{([^}]*)\}\}/g)].map((m) => m[1]?.trim() ?? "");
/** The environment GitHub gives every step (docs: "Default environment variables"). */
const GITHUB_DEFAULTS = ["GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_EVENT_PATH", "RUNNER_TEMP", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY"];
const ACTION_SCRIPT = readFileSync(join(ROOT, "scripts/action.mjs"), "utf8");

describe("action.yml (actionlint-style)", () => {
  it("a composite action on Node 22 by default (an input overrides it), run from its own folder: no registry install of dissent", () => {
    expect(action.runs.using).toBe("composite");
    expect(Object.keys(action.inputs)).toEqual(
      expect.arrayContaining([
        "command",
        "config",
        "issue",
        "node-version",
        "github-token",
        "openai-api-key",
        "anthropic-api-key",
        "home-cache",
        "wiki-branch",
        "prompt",
        "prompt-file",
        "fail-on",
      ]),
    );
    expect(action.inputs["node-version"]?.default).toBe("22");
    expect(steps[0]).toMatchObject({ uses: "actions/setup-node@v4", with: { "node-version": "${{ inputs.node-version }}" } });
    // The install is cached by the lockfile's hash (with the Node major and the build's inputs), computed by a step: hashFiles() cannot read github.action_path.
    const deps = steps.find((s) => s.id === "deps");
    expect(deps).toMatchObject({ uses: "actions/cache@v4" });
    expect(String(deps?.with?.path).split("\n").filter(Boolean)).toEqual(["${{ github.action_path }}/node_modules", "${{ github.action_path }}/dist"]);
    expect(deps?.with?.key).toContain("${{ steps.setup.outputs.deps-key }}");
    expect(ACTION_SCRIPT.replace(/\s+/g, "")).toContain('createHash("sha256").update(readFileSync(join(ACTION,"package-lock.json")))');
    // Nothing installs or runs dissent by its registry name: not the steps, not their script.
    for (const text of [...steps.map((s) => s.run ?? ""), ACTION_SCRIPT])
      expect(text).not.toMatch(/npm (install|i|exec) [^\n]*\bdissent\b|npx [^\n]*\bdissent\b/);
    expect(action.outputs.status?.value).toBe("${{ steps.run.outputs.status }}");
    expect(action.outputs["plan-url"]?.value).toBe("${{ steps.run.outputs.plan-url }}");
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

  it("the dissent commands and flags scripts/action.mjs runs are the CLI's own", () => {
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
    const table = /const args = \{([\s\S]*?)\}\[command\]/.exec(ACTION_SCRIPT)?.[1] ?? "";
    const calls = [...table.matchAll(/^\s*(\w+): \[([^\]]*)\]/gm)].map((m) => ({
      command: m[1],
      words: [...(m[2] ?? "").matchAll(/"([^"]+)"/g)].map((w) => w[1] ?? ""),
    }));
    expect(calls.map((c) => c.command)).toEqual(["comment", "merged", "plan", "implement", "review", "audit"]);
    // audit's --fail-on is added when the input is set: a flag of `dissent run` too.
    expect(ACTION_SCRIPT).toContain('args.push("--fail-on", env.FAIL_ON)');
    expect(find(["run"])?.options.map((o) => o.long)).toContain("--fail-on");
    for (const { command, words } of calls) {
      const path = words.filter((w) => !w.startsWith("--"));
      const cmd = find(path);
      expect(cmd, `${command}: dissent ${path.join(" ")}`).toBeDefined();
      for (const flag of [...words.filter((w) => w.startsWith("--")), "--json"])
        expect(
          cmd?.options.map((o) => o.long),
          `${path.join(" ")} ${flag}`,
        ).toContain(flag);
    }
  });
});

describe("examples/github/dissent.yml and dissent.config.yaml", () => {
  const wf = parse(readFileSync(join(ROOT, "examples/github/dissent.yml"), "utf8")) as {
    on: Record<string, { types: string[] }>;
    permissions: Record<string, string>;
    concurrency: { group: string; "cancel-in-progress": boolean };
    jobs: Record<string, { if: string; permissions?: Record<string, string>; steps: ActionStep[] }>;
  };

  it("plans on issues opened/labeled, records merges on closed, reviews pull requests, takes comment commands, one run per issue at a time", () => {
    expect(wf.on).toEqual({
      issues: { types: ["opened", "labeled", "closed"] },
      issue_comment: { types: ["created"] },
      pull_request: { types: ["opened", "synchronize", "reopened"] },
    });
    expect(wf.permissions).toMatchObject({ issues: "write", contents: "read" });
    expect(wf.jobs.merged?.permissions).toMatchObject({ issues: "write", contents: "write" }); // the wiki branch
    expect(wf.concurrency).toEqual({
      group: "dissent-issue-${{ github.event.issue.number || github.event.pull_request.number }}",
      "cancel-in-progress": false,
    });
    const uses = (job: string) => wf.jobs[job]?.steps.find((s) => s.uses?.endsWith("/dissent@v1"));
    expect(uses("plan")?.with?.command).toBe("plan");
    expect(uses("merged")?.with?.command).toBe("merged");
    expect(uses("comment")?.with?.command).toBe("comment");
    expect(uses("review")?.with?.command).toBe("review");
    // The review writes reviews and checks; a fork's pull request (no secrets on pull_request) is reviewed by a maintainer's /dissent review.
    expect(wf.jobs.review?.permissions).toMatchObject({ "pull-requests": "write", checks: "write", contents: "read" });
    expect(wf.jobs.review?.if).toContain("github.event.pull_request.head.repo.full_name == github.repository");
    expect(wf.jobs.comment?.permissions).toMatchObject({ "pull-requests": "write", checks: "write" });
    for (const job of Object.values(wf.jobs)) expect(job.steps[0]?.uses).toBe("actions/checkout@v4"); // the config is in the repository
    for (const job of Object.values(wf.jobs))
      for (const s of job.steps)
        for (const key of Object.keys(s.with ?? {})) if (s.uses?.endsWith("/dissent@v1")) expect(Object.keys(action.inputs)).toContain(key);
  });

  it("the example config drafts with one model family and judges with another: no same-model warning anywhere", () => {
    const config = buildConfig(parseConfigText(readFileSync(join(ROOT, "examples/github/dissent.config.yaml"), "utf8"), "dissent.config.yaml"), {
      source: "dissent.config.yaml",
      baseDir: ROOT,
      env: {},
      cwd: ROOT,
    });
    expect(sameModelWarning(config, "executor", ["challenger"], "run --audit")).toBeUndefined();
    for (const stage of STAGES) expect(sameModelWarning(config, stage.producer, stage.critics, stage.phase)).toBeUndefined();
    expect(
      verifierWarning(
        config,
        "verifier",
        STAGES.flatMap((s) => s.critics),
      ),
    ).toBeUndefined();
    const types = new Set(Object.values(config.providers).map((p) => p.type));
    expect(types).toEqual(new Set(["anthropic", "openai"]));
  });
});

// ------------------------------------------------------------------ the Action, run as the runner runs it
const TOKEN = "ghs_jobTOKEN000000000000000000000000";
const HIGH = { severity: "HIGH", category: "edge_cases", concern: "Acceptance criteria never mention concurrent writers to the same upload" };
const MED = { severity: "MEDIUM", category: "test_strategy", concern: "The test plan lacks a case for a flaky network during upload" };
const DRAFTS = "qwen3:8b";
const JUDGES = "llama3.1:8b";

let work = "";
let actionDir = "";
let workspace = "";
let wikiRepo = "";
let npmLog = "";
let gh: GithubDouble;
let models: FakeOpenAI;
/** The gate's models for `command: audit`: a draft, an audit that follows the prompt, a revision. */
let gate: FakeOpenAI;
let cache: ReturnType<typeof cacheDouble>;
let runId = 100;
const env: Record<string, string> = {};

/** The action as `uses: OWNER/dissent@REF` gets it: the repository's files (not what git ignores), with node_modules and dist as the install cache restores them. */
function copyOfTheAction(to: string): void {
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter(Boolean);
  for (const f of files) {
    mkdirSync(dirname(join(to, f)), { recursive: true });
    try {
      cpSync(join(ROOT, f), join(to, f));
    } catch {
      // deleted in the working tree: not part of the action
    }
  }
  cpSync(join(ROOT, "dist"), join(to, "dist"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(to, "node_modules"));
}

/** An event payload file as GitHub writes it for the job. */
function eventFile(name: string, payload: unknown): string {
  const path = join(work, `event-${name}-${runId}.json`);
  writeFileSync(path, JSON.stringify(payload));
  return path;
}
const repository = { id: 4242, full_name: "acme/widgets", name: "widgets", owner: { login: "acme" }, html_url: "https://github.com/acme/widgets" };
function issuePayload(n: number) {
  const i = gh.issues.get(n);
  return {
    number: n,
    title: i?.title,
    body: i?.body,
    state: i?.state,
    html_url: `https://github.com/acme/widgets/issues/${n}`,
    labels: (i?.labels ?? []).map((name) => ({ name })),
  };
}

/** One workflow job using the action: a fresh runner (RUNNER_TEMP), the event, the step's `with:`. */
async function job(eventName: string, payload: unknown, withInputs: Record<string, string> = {}, during?: (r: JobRun) => void): Promise<JobRun> {
  runId++;
  const temp = join(work, `runner-temp-${runId}`);
  try {
    const r = await runAction(action, {
      actionPath: actionDir,
      workspace,
      temp,
      token: TOKEN,
      with: withInputs,
      env: {
        ...env,
        GITHUB_EVENT_NAME: eventName,
        GITHUB_EVENT_PATH: eventFile(eventName, payload),
        GITHUB_RUN_ID: String(runId),
        GITHUB_RUN_ATTEMPT: "1",
      },
      uses: { ...cache.handlers, "actions/setup-node": () => ({}) },
    });
    during?.(r); // a later step of the same job: the runner's temp folder is still there
    return r;
  } finally {
    cleanJob(temp);
  }
}

const planComment = (n: number) => gh.comments.find((c) => c.issue === n && c.body.startsWith("<!-- dissent:plan -->"));
const replyComment = (n: number) => gh.comments.find((c) => c.issue === n && c.body.startsWith("<!-- dissent:reply -->"));
const commentUrl = (n: number, id: number | undefined) => `https://github.com/acme/widgets/issues/${n}#issuecomment-${id}`;
const wikiGit = (...args: string[]) => execFileSync("git", args, { cwd: wikiRepo, encoding: "utf8" }).trim();
const wikiFiles = () => {
  try {
    return wikiGit("ls-tree", "-r", "--name-only", "refs/heads/dissent-wiki").split("\n").filter(Boolean);
  } catch {
    return [];
  }
};

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "dissent-action-run-"));
  actionDir = join(work, "_actions", "OWNER", "dissent", "v1");
  copyOfTheAction(actionDir);
  // npm, were it called, says so and fails: the warm path must never reach it (and the registry is a closed port).
  const bin = join(work, "bin");
  mkdirSync(bin);
  npmLog = join(work, "npm-calls.log");
  writeFileSync(join(bin, "npm"), `#!/bin/sh\necho "$(pwd) $*" >> "${npmLog}"\nexit 0\n`);
  chmodSync(join(bin, "npm"), 0o755);
  writeFileSync(npmLog, "");

  gh = await startGithubDouble({ token: TOKEN, prefix: "/api/v3" });
  gh.addLabel("dissent-load-bearing");
  gh.addIssue({
    number: 12,
    title: "Accept file uploads on the profile page",
    body: "Users attach a file of up to 10 MB through the upload endpoint.",
    labels: ["dissent-load-bearing"],
  });
  gh.addIssue({
    number: 13,
    title: "Resumable uploads",
    body: "The upload endpoint should accept large payloads in chunks, and cope with concurrent writers to the same upload.",
    labels: ["dissent-load-bearing"],
  });
  gh.collaborators.set("maintainer-mia", "maintain");
  // Issue 12's spec judge raises a HIGH every round (it ships unresolved); its plan tester a MEDIUM.
  const first = (answer: string) => (req: Parameters<typeof requestText>[0]) =>
    requestText(req).includes("Accept file uploads") ? quoteUnderReview(req, answer) : findings([]);
  models = await startOpenAIServer(council({ "spec.judge": first(findings([HIGH])), "plan.tester": first(findings([MED])) }));

  // The user's repository, checked out: its config names two model families and no GitHub URL at all.
  workspace = join(work, "workspace");
  mkdirSync(workspace);
  const judges = JUDGE_ROUTES;
  writeFileSync(
    join(workspace, "dissent.config.yaml"),
    [
      "providers:",
      `  drafts: { type: openai-compatible, base_url: "${models.url}" }`,
      `  judges: { type: openai-compatible, base_url: "${models.url}" }`,
      "routes:",
      `  default: { primary: "drafts:${DRAFTS}" }`,
      ...judges.map((r) => `  ${r}: { primary: "judges:${JUDGES}" }`),
      'tracker: { type: github, repo: "acme/widgets" }',
      "retry_backoff_ms: 1",
      "",
    ].join("\n"),
  );
  // The gate as a CI check (command: audit) has its own config: an executor and a challenger of two families.
  const GATE_DRAFT = "Chicken breast is safe at 145 °F (63 °C), like a pork chop.";
  gate = await startOpenAIServer((req) => {
    const text = JSON.stringify(req.body.messages);
    if (req.body.model === "gate-judge") {
      const risky = text.includes("Chicken");
      return {
        content: JSON.stringify(
          risky
            ? {
                verdict: "needs_work",
                concerns: [
                  { category: "factual_risk", severity: "critical", evidence: "safe at 145 °F (63 °C)", concern: "Poultry needs a higher temperature." },
                ],
              }
            : { verdict: "pass", concerns: [] },
        ),
      };
    }
    if (req.body.messages.some((m) => m.role === "assistant"))
      return { content: "Chicken breast is safe once it reaches the poultry minimum; check your food-safety authority's figure." };
    return { content: text.includes("chicken") ? GATE_DRAFT : "Water boils at 100 °C at sea level." };
  });
  writeFileSync(
    join(workspace, "audit.config.yaml"),
    [
      "providers:",
      `  drafts: { type: openai-compatible, base_url: "${gate.url}" }`,
      `  judges: { type: openai-compatible, base_url: "${gate.url}" }`,
      "routes:",
      '  executor: { primary: "drafts:gate-writer" }',
      '  challenger: { primary: "judges:gate-judge" }',
      "retry_backoff_ms: 1",
      "",
    ].join("\n"),
  );
  writeFileSync(join(workspace, "prompt.txt"), "What internal temperature makes chicken breast safe?\n");
  // The GitHub repository's git side, for the wiki branch.
  const server = join(work, "git-server");
  wikiRepo = join(server, "acme", "widgets");
  mkdirSync(wikiRepo, { recursive: true });
  execFileSync("git", ["init", "--quiet", "--bare", wikiRepo]);
  cache = cacheDouble(join(work, "cache-service"), { hit: () => true });
  Object.assign(env, {
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    HOME: join(work, "home"),
    GITHUB_REPOSITORY: "acme/widgets",
    GITHUB_REPOSITORY_OWNER: "acme",
    GITHUB_SERVER_URL: `file://${server}`,
    GITHUB_API_URL: gh.url, // GitHub Enterprise Server's API lives under /api/v3
    GITHUB_WORKFLOW: "dissent",
    GITHUB_ACTOR: "maintainer-mia",
    npm_config_registry: `http://127.0.0.1:${await closedPort()}/`,
    DISSENT_GITHUB_WRITE_INTERVAL_MS: "0",
  });
});

afterAll(async () => {
  await models?.close();
  await gate?.close();
  await gh?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the Action, run as GitHub's runner runs it, from its own folder, against the GitHub double", () => {
  it("issues: labeled plans the issue: status, plan-url (the plan comment), the job summary; two model families; GITHUB_API_URL; npm never run", async () => {
    const r = await job("issues", { action: "labeled", label: { name: "dissent-load-bearing" }, issue: issuePayload(12), repository });
    expect(r.ok, r.log).toBe(true);
    const plan = planComment(12);
    expect(plan?.body).toContain(HIGH.concern);
    expect(r.outputs).toEqual({ status: "ready", "plan-url": commentUrl(12, plan?.id), "result-file": expect.stringMatching(/dissent-out\.json$/) });
    expect(r.summary).toContain(`### dissent plan · #12: ready · [the plan](${commentUrl(12, plan?.id)})`);
    expect(r.summary).toMatch(/\| HIGH \| implement \| Acceptance criteria never mention concurrent writers to the same upload \|/);
    // The tracker found GitHub through GITHUB_API_URL (the config names no base_url): every request under /api/v3, with the job's token.
    expect(gh.requests.length).toBeGreaterThan(0);
    expect(gh.requests.every((q) => q.authorization === `token ${TOKEN}`)).toBe(true);
    // Producers on one family, critics on the other.
    const byRole = new Map(models.requests.map((q) => [roleOf(q), q.body.model]));
    for (const producer of ["discover.brief", "shape.writer", "planner", "spec.ac_generator"]) expect(byRole.get(producer), producer).toBe(DRAFTS);
    for (const critic of PIPELINE_ROLES.filter((x) => /^(discovery|shape|plan)\.(?!writer)|spec\.judge|plan_reviewer|assumption_surfacer/.test(x)))
      expect(byRole.get(critic), critic).toBe(JUDGES);
    expect(r.log).toContain(`dissent: using the install cached for this version (${actionDir})`);
    expect(r.log).toContain("dissent: wiki: no branch dissent-wiki yet");
    expect(readFileSync(npmLog, "utf8")).toBe(""); // nothing installed, nothing fetched
    expect(cache.saved).toEqual([`dissent-home-12-${runId}-1`]);
  });

  it("issue_comment: a maintainer's command runs on the issue's home carried over from the plan's run, and updates the plan comment", async () => {
    const pending = /- \*\*MEDIUM\*\* `([^`]+)`/.exec(planComment(12)?.body ?? "")?.[1];
    expect(pending, planComment(12)?.body).toBeDefined();
    const c = gh.addComment(12, `/dissent resolve ${pending} fixed the upload retries are covered now`, "maintainer-mia");
    const r = await job("issue_comment", {
      action: "created",
      comment: { id: c.id, body: c.body, user: { login: "maintainer-mia", type: "User" } },
      issue: issuePayload(12),
      repository,
    });
    expect(r.ok, r.log).toBe(true);
    expect(r.outputs).toEqual({ status: "done", "plan-url": commentUrl(12, planComment(12)?.id), "result-file": expect.stringMatching(/dissent-out\.json$/) });
    expect(planComment(12)?.body).toContain(`@maintainer-mia \`/dissent resolve ${pending} fixed\`: concern ${pending} resolved`);
    expect(gh.reactions.filter((x) => x.commentId === c.id).map((x) => x.content)).toEqual(["eyes", "+1"]);
    expect(r.summary).toContain("### dissent · comment on #12: done");
  });

  it("issue_comment: a stranger is refused with one reply, and the job stays green", async () => {
    const calls = models.requests.length;
    const c = gh.addComment(12, "/dissent replan", "drive-by-dan");
    const r = await job("issue_comment", {
      action: "created",
      comment: { id: c.id, body: c.body, user: { login: "drive-by-dan", type: "User" } },
      issue: issuePayload(12),
      repository,
    });
    expect(r.ok, r.log).toBe(true);
    expect(r.outputs.status).toBe("refused");
    expect(replyComment(12)?.body).toContain(
      "@drive-by-dan: only people with write access to acme/widgets can command dissent; `/dissent replan` was not run.",
    );
    expect(models.requests).toHaveLength(calls);
  });

  it("issue_comment: a mistyped command is answered with the nearest one, runs nothing, and does not fail the job", async () => {
    const calls = models.requests.length;
    const c = gh.addComment(12, "/dissent paln", "maintainer-mia");
    const r = await job("issue_comment", {
      action: "created",
      comment: { id: c.id, body: c.body, user: { login: "maintainer-mia", type: "User" } },
      issue: issuePayload(12),
      repository,
    });
    expect(r.ok, r.log).toBe(true);
    expect(r.outputs.status).toBe("unknown");
    expect(replyComment(12)?.body).toContain("@maintainer-mia: `/dissent paln` is not a command dissent knows; did you mean `/dissent plan`? Nothing was run");
    expect(gh.reactions.filter((x) => x.commentId === c.id).map((x) => x.content)).toEqual(["confused"]);
    expect(models.requests).toHaveLength(calls);
    expect(r.summary).toContain("### dissent · comment on #12: unknown");
  });

  it("issues: closed by a merged pull request records the merge, and the known gap goes to the wiki branch, once", async () => {
    gh.pulls.set(20, {
      number: 20,
      head: "upload-limits",
      base: "main",
      title: "Upload limits",
      body: "Closes #12",
      draft: false,
      state: "open",
      sha: "a".repeat(40),
    });
    expect(gh.mergePull(20).status).toBe(200);
    const closed = { action: "closed", issue: issuePayload(12), repository };
    const r = await job("issues", closed);
    expect(r.ok, r.log).toBe(true);
    expect(r.outputs.status).toBe("merged");
    expect(r.summary).toMatch(/^### dissent · #12 closed: merged\n\nissue 12 merged in PR #20: 1 known gap shipped, wiki: \S+\n$/);
    const files = wikiFiles();
    expect(files).toContain("README.md");
    const entries = files.filter((f) => f.startsWith("wiki/"));
    expect(entries).toHaveLength(1);
    expect(wikiGit("show", `refs/heads/dissent-wiki:${entries[0]}`)).toContain(HIGH.concern);
    expect(wikiGit("log", "-1", "--format=%an", "refs/heads/dissent-wiki")).toBe("github-actions[bot]");
    // The same event again (a re-run of the job): recorded before, nothing new on the branch.
    const tip = wikiGit("rev-parse", "refs/heads/dissent-wiki");
    const again = await job("issues", closed);
    expect(again.ok, again.log).toBe(true);
    expect(again.outputs.status).toBe("already_merged");
    expect(again.log).toContain("dissent: wiki: nothing new to save");
    expect(wikiGit("rev-parse", "refs/heads/dissent-wiki")).toBe(tip);
  });

  it("a later issue, planned in another job with no PostgreSQL, is shown the known gap from the wiki branch", async () => {
    const before = models.requests.length;
    const r = await job("issues", { action: "labeled", label: { name: "dissent-load-bearing" }, issue: issuePayload(13), repository });
    expect(r.ok, r.log).toBe(true);
    expect(r.log).toContain("dissent: wiki: 1 known gap from dissent-wiki");
    const surfacer = models.requests.slice(before).filter((q) => roleOf(q) === "assumption_surfacer");
    expect(surfacer.length).toBeGreaterThan(0);
    expect(requestText(surfacer[0] as (typeof surfacer)[0])).toContain(HIGH.concern);
  });

  it("a wiki entry another run saved meanwhile stays: the save builds on the branch's new tip", () => {
    // A second job's restore and save, with a third run's entry landing on the branch between them.
    const temp = join(work, "race");
    const home = join(temp, "home");
    const stepEnv = { ...env, RUNNER_TEMP: temp, DISSENT_HOME: home, INPUT_WIKI_BRANCH: "dissent-wiki", ACTION_PATH: actionDir, GITHUB_TOKEN: TOKEN };
    const step = (name: string) => spawnSync(process.execPath, [join(actionDir, "scripts/action.mjs"), name], { env: stepEnv, encoding: "utf8" });
    mkdirSync(temp, { recursive: true });
    expect(step("wiki-restore").status).toBe(0);
    writeFileSync(join(home, "wiki", "gap-from-this-run.md"), "---\nfingerprint: abc\n---\n# Mine\n");
    // Meanwhile: another run pushes its own entry.
    const other = join(work, "other-clone");
    execFileSync("git", ["clone", "--quiet", "--branch", "dissent-wiki", wikiRepo, other]);
    writeFileSync(join(other, "wiki", "gap-from-another-run.md"), "---\nfingerprint: def\n---\n# Theirs\n");
    const gitEnv = { ...process.env, GIT_AUTHOR_NAME: "x", GIT_AUTHOR_EMAIL: "x@example.com", GIT_COMMITTER_NAME: "x", GIT_COMMITTER_EMAIL: "x@example.com" };
    execFileSync("git", ["add", "."], { cwd: other, env: gitEnv });
    execFileSync("git", ["commit", "--quiet", "-m", "theirs"], { cwd: other, env: gitEnv });
    execFileSync("git", ["push", "--quiet", "origin", "dissent-wiki"], { cwd: other, env: gitEnv });
    const saved = step("wiki-save");
    expect(saved.status, saved.stderr).toBe(0);
    expect(wikiFiles()).toEqual(expect.arrayContaining(["wiki/gap-from-this-run.md", "wiki/gap-from-another-run.md"]));
  });

  it("pull_request: the pull request is reviewed with its base branch's config, never the one its head changes; the review and the check land on it", async () => {
    // A repository whose main has the config, and a person's pull request that changes the code and the config.
    const server = join(work, "git-server-pr");
    const bare = join(server, "acme", "widgets");
    mkdirSync(bare, { recursive: true });
    execFileSync("git", ["init", "--quiet", "--bare", "-b", "main", bare]);
    const clone = join(work, "pr-clone");
    const gitEnv = { ...process.env, GIT_AUTHOR_NAME: "a", GIT_AUTHOR_EMAIL: "a@example.com", GIT_COMMITTER_NAME: "a", GIT_COMMITTER_EMAIL: "a@example.com" };
    const g = (...args: string[]) => execFileSync("git", args, { cwd: clone, env: gitEnv, encoding: "utf8" }).trim();
    execFileSync("git", ["clone", "--quiet", bare, clone], { env: gitEnv });
    const baseConfig = readFileSync(join(workspace, "dissent.config.yaml"), "utf8");
    mkdirSync(join(clone, "src"));
    writeFileSync(join(clone, "dissent.config.yaml"), baseConfig);
    writeFileSync(join(clone, "src", "sum.js"), "export function sum(a, b) {\n  return 0;\n}\n");
    g("checkout", "--quiet", "-b", "main");
    g("add", ".");
    g("commit", "--quiet", "-m", "base");
    g("push", "--quiet", "origin", "main");
    // The head routes every role (the review's among them) to a model of its own choosing.
    const headConfig = baseConfig.replaceAll(`judges:${JUDGES}`, "judges:head-model").replaceAll(`drafts:${DRAFTS}`, "drafts:head-model");
    g("checkout", "--quiet", "-b", "feature");
    writeFileSync(join(clone, "dissent.config.yaml"), headConfig);
    writeFileSync(join(clone, "src", "sum.js"), "export function sum(a, b) {\n  return a + b;\n}\n");
    g("commit", "--quiet", "-am", "sum, and my own review models");
    g("push", "--quiet", "origin", "feature");
    const sha = g("rev-parse", "HEAD");
    const pr = await startGithubDouble({ token: TOKEN, prefix: "/api/v3", gitRepo: bare });
    pr.pulls.set(21, {
      number: 21,
      head: "feature",
      base: "main",
      title: "Add sum",
      body: "Implements sum.",
      draft: false,
      state: "open",
      sha,
      login: "alice",
    });
    // The job's workspace is the pull request's merge commit: its config is the head's.
    const headWorkspace = join(work, "pr-workspace");
    mkdirSync(headWorkspace);
    writeFileSync(join(headWorkspace, "dissent.config.yaml"), headConfig);
    const saved = { workspace, api: env.GITHUB_API_URL, server: env.GITHUB_SERVER_URL };
    workspace = headWorkspace;
    Object.assign(env, { GITHUB_API_URL: pr.url, GITHUB_SERVER_URL: `file://${server}` });
    const before = models.requests.length;
    try {
      const payload = { action: "opened", number: 21, pull_request: { number: 21, head: { ref: "feature", sha }, base: { ref: "main" } }, repository };
      const r = await job("pull_request", payload, { "wiki-branch": "" });
      expect(r.ok, r.log).toBe(true);
      expect(r.log).toContain("dissent: config: dissent.config.yaml as the base branch main has it (the pull request's own is not read)");
      expect(["passed", "advice", "blocking"]).toContain(r.outputs.status);
      expect(r.summary).toContain(`### dissent review · pull request #21: ${r.outputs.status}`);
      const asked = models.requests.slice(before);
      expect(asked.filter((q) => roleOf(q).startsWith("review.")).length).toBeGreaterThan(0);
      expect(asked.map((q) => q.body.model)).not.toContain("head-model");
      expect(new Set(asked.filter((q) => roleOf(q).startsWith("review.")).map((q) => q.body.model))).toEqual(new Set([DRAFTS])); // the base's default route
      // The review and the check are on the pull request's head; nothing was pushed to its branch.
      expect(pr.reviews.filter((x) => x.pull === 21).map((x) => x.commit_id)).toEqual([sha]);
      expect(pr.checkRuns.filter((c) => c.head_sha === sha).map((c) => c.name)).toEqual(["dissent"]);
      expect(execFileSync("git", ["rev-parse", "refs/heads/feature"], { cwd: bare, encoding: "utf8" }).trim()).toBe(sha);
      // A base branch with no config is one line, not a review with the pull request's.
      const none = await job("pull_request", { ...payload, pull_request: { ...payload.pull_request, base: { ref: "feature-less" } } }, { "wiki-branch": "" });
      expect(none.ok).toBe(false);
      expect(none.log).toMatch(/dissent: error: cannot fetch the base branch feature-less/);
    } finally {
      workspace = saved.workspace;
      Object.assign(env, { GITHUB_API_URL: saved.api, GITHUB_SERVER_URL: saved.server });
      await pr.close();
    }
  });

  it("command: audit gates a prompt as a CI check: --fail-on needs_work fails the step (exit 3) with the verdict, the concerns and the answer's JSON", async () => {
    const before = gate.requests.length;
    let result: { final_output: string; audit_meta: { revised: boolean } } | undefined;
    const r = await job(
      "workflow_dispatch",
      {},
      { command: "audit", config: "audit.config.yaml", "prompt-file": "prompt.txt", "fail-on": "needs_work" },
      (done) => {
        result = JSON.parse(readFileSync(done.outputs["result-file"] ?? "", "utf8"));
      },
    );
    expect(r.ok).toBe(false);
    const run = r.steps.find((s) => s.step.id === "run");
    expect(run?.code).toBe(3);
    expect(run?.stderr).toContain("dissent: --fail-on needs_work: the challenger's verdict was needs_work");
    expect(r.outputs.status).toBe("needs_work");
    expect(r.summary).toContain("### dissent audit: needs_work (exit 3: --fail-on)");
    expect(r.summary).toContain("| critical | factual\\_risk | safe at 145 °F (63 °C) | Poultry needs a higher temperature. |");
    expect(result?.audit_meta.revised).toBe(true);
    expect(result?.final_output).toContain("poultry minimum");
    // Three calls: draft, audit, revision; no issue, no wiki, no GitHub at all.
    expect(gate.requests.length - before).toBe(3);
    expect(r.steps.find((s) => s.step.id === "wiki")?.outcome).toBe("skipped");
    expect(cache.saved.at(-1)).toBe(`dissent-home-audit-${runId}-1`);
  });

  it("command: audit passes the step on a pass, and without fail-on on any verdict", async () => {
    const pass = await job(
      "workflow_dispatch",
      {},
      { command: "audit", config: "audit.config.yaml", prompt: "At what temperature does water boil?", "fail-on": "needs_work,drift" },
    );
    expect(pass.ok, pass.log).toBe(true);
    expect(pass.outputs.status).toBe("pass");
    expect(pass.summary).toContain("### dissent audit: pass\n");
    const noFailOn = await job("workflow_dispatch", {}, { command: "audit", config: "audit.config.yaml", "prompt-file": "prompt.txt" });
    expect(noFailOn.ok, noFailOn.log).toBe(true);
    expect(noFailOn.outputs.status).toBe("needs_work");
    const missing = await job("workflow_dispatch", {}, { command: "audit", config: "audit.config.yaml" });
    expect(missing.ok).toBe(false);
    expect(missing.log).toContain("dissent: error: command audit needs the prompt input or the prompt-file input");
  });

  it("the install cache's key follows the lockfile: the same lockfile the same key, a changed one another", () => {
    const setup = steps.find((s) => s.id === "setup");
    const key = () => {
      const out = join(work, `setup-out-${Math.random()}`);
      writeFileSync(out, "");
      const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", setup?.run ?? ""], {
        env: { ...env, ACTION_PATH: actionDir, INPUT_COMMAND: "plan", INPUT_ISSUE: "12", GITHUB_EVENT_NAME: "issues", GITHUB_OUTPUT: out },
        encoding: "utf8",
      });
      expect(r.status, r.stderr).toBe(0);
      return /^deps-key=(.+)$/m.exec(readFileSync(out, "utf8"))?.[1];
    };
    const lockfile = join(actionDir, "package-lock.json");
    const original = readFileSync(lockfile, "utf8");
    const first = key();
    expect(first).toMatch(new RegExp(`^node${process.versions.node.split(".")[0]}-[0-9a-f]{16}-[0-9a-f]{16}$`));
    expect(key()).toBe(first);
    try {
      writeFileSync(lockfile, original.replace('"lockfileVersion": 3', '"lockfileVersion": 3 '));
      expect(key()).not.toBe(first);
    } finally {
      writeFileSync(lockfile, original);
    }
  });

  it("on a cache miss it installs and builds in its own folder from its lockfile, then drops the build tools", () => {
    writeFileSync(npmLog, "");
    const install = steps.find((s) => s.id === "install");
    const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", install?.run ?? ""], {
      env: { ...env, ACTION_PATH: actionDir, CACHE_HIT: "false", RUNNER_TEMP: work },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(npmLog, "utf8")).toBe(`${actionDir} ci --no-audit --no-fund\n${actionDir} prune --omit=dev --no-audit --no-fund\n`);
  });
});
