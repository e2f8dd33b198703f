import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LABELS } from "../../src/contracts/labels.js";
import { STAGES } from "../../src/pipeline/stages.js";
import { dissent, scratch, type CliResult } from "../support/cli.js";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { startOpenAIServer, type FakeOpenAI, type Reply } from "../support/openai-server.js";

const TOKEN = "ghp_testTOKEN1234567890";
const ROLES = ["complexity_gate", ...new Set(STAGES.flatMap((s) => [s.producer, ...s.critics])), "plan_reviewer"];
const PRODUCERS = new Set(["discover.brief", "shape.writer", "planner"]);
const MARKER = "<!-- dissent:plan -->";

let gh: GithubDouble;
let models: FakeOpenAI;
let dir: ReturnType<typeof scratch>;
let plans = 0;
/** Answers by model, which is the role: producers write markdown, critics find nothing. */
let reply: (model: string) => Reply = (model) => {
  if (model === "complexity_gate") return { content: "LOAD-BEARING" };
  if (model === "planner") return { content: `# Plan\n\n1. Retry uploads with backoff (revision ${++plans}).` };
  if (PRODUCERS.has(model)) return { content: `# ${model}\n\nWritten by ${model}.` };
  if (model === "spec.ac_generator") return { content: JSON.stringify({ acceptance_criteria: ["A retried upload is stored once"] }) };
  return { content: JSON.stringify({ findings: [] }) };
};
const agreeable = reply;

beforeEach(async () => {
  plans = 0;
  reply = agreeable;
  gh = await startGithubDouble({ token: TOKEN });
  gh.addIssue({ number: 12, title: "Retry failed uploads", body: "Uploads fail on flaky networks.", labels: ["bug"] });
  gh.addIssue({ number: 13, title: "Typo in README", body: "teh → the" });
  gh.addIssue({ number: 14, title: "Add upload retries", pullRequest: true });
  gh.addIssue({ number: 15, title: "An old one", state: "closed" });
  models = await startOpenAIServer((req) => reply(req.body.model));
  dir = scratch();
  dir.write(
    "dissent.config.yaml",
    [
      "providers:",
      `  local: { type: openai-compatible, base_url: "${models.url}" }`,
      "routes:",
      '  default: { primary: "local:default" }',
      ...ROLES.map((r) => `  ${r}: { primary: "local:${r}" }`),
      "retry_backoff_ms: 10",
      `tracker: { type: github, repo: "acme/widgets", base_url: "${gh.url}" }`,
      "",
    ].join("\n"),
  );
});
afterEach(async () => {
  await models.close();
  await gh.close();
  dir.cleanup();
});

const home = () => join(dir.dir, "home");
// Writes are not spaced in tests (GitHub's advice of 1 s between writes is the production default).
const run = (args: string[], env: Record<string, string> = { GITHUB_TOKEN: TOKEN }) =>
  dissent(args, { cwd: dir.dir, env: { DISSENT_HOME: home(), DISSENT_GITHUB_WRITE_INTERVAL_MS: "0", ...env } });
const json = <T>(r: CliResult): T => {
  if (r.code !== 0) throw new Error(`dissent exited ${String(r.code)}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
};
const planComments = () => gh.comments.filter((c) => c.issue === 12 && c.body.startsWith(MARKER));
const running = (labels: readonly string[]) => labels.filter((l) => l.endsWith("-running"));

function filesUnder(path: string): string[] {
  return statSync(path).isDirectory() ? readdirSync(path).flatMap((n) => filesUnder(join(path, n))) : [path];
}
function expectNoToken(outputs: CliResult[]) {
  for (const r of outputs) expect(r.stdout + r.stderr).not.toContain(TOKEN);
  const files = filesUnder(home());
  expect(files.length).toBeGreaterThan(0);
  for (const f of files) expect(readFileSync(f).includes(TOKEN), f).toBe(false);
}

describe("dissent issue on a GitHub tracker (CLI against a local GitHub double)", () => {
  it("lists open issues, plans #12 to dissent-ready with one plan comment, re-plans in place, records the merge", async () => {
    const outputs: CliResult[] = [];
    const step = async (args: string[]) => {
      const r = await run(args);
      outputs.push(r);
      return r;
    };

    const list = json<{ id: string; labels: string[]; status: string }[]>(await step(["issue", "list", "--json"]));
    expect(list.map((i) => i.id).sort()).toEqual(["12", "13"]); // open issues only: no pull request, nothing closed
    expect(list.find((i) => i.id === "12")).toMatchObject({ labels: ["bug"], status: "new" });
    expect(gh.writes()).toEqual([]);

    const first = json<{ status: string; labels: string[]; plan: string }>(await step(["issue", "plan", "12", "--json"]));
    expect(first.status).toBe("ready");
    expect(first.labels).toContain("dissent-ready");
    expect(running(first.labels)).toEqual([]);
    expect(gh.issues.get(12)?.labels.sort()).toEqual(["bug", "dissent-ready"]);
    for (const phase of ["discover", "shape", "plan"]) {
      expect(gh.writes()).toContain(`DELETE /issues/12/labels/dissent-adv-${phase}-running`); // each transient label came off
    }
    expect(Object.keys(LABELS).every((name) => gh.labels.has(name))).toBe(true);
    expect(gh.writes().filter((w) => w === "POST /labels")).toHaveLength(Object.keys(LABELS).length);
    const [comment, ...extra] = planComments();
    expect(extra).toEqual([]);
    expect(comment?.body).toContain("Retry uploads with backoff (revision 1)");
    expect(comment?.body).toContain(first.plan.trim());
    expect(comment?.body).toContain("A retried upload is stored once");

    // A re-plan after the issue changed (it is ready, so it takes --replan): a new plan, the same comment.
    const issue = gh.issues.get(12);
    if (issue) issue.body = "Uploads fail on flaky networks; retry at most three times.";
    const second = json<{ status: string; labels: string[] }>(await step(["issue", "plan", "#12", "--json", "--replan"]));
    expect(second.status).toBe("ready");
    expect(running(gh.issues.get(12)?.labels ?? [])).toEqual([]);
    const [updated, ...more] = planComments();
    expect(more).toEqual([]);
    expect(updated?.id).toBe(comment?.id);
    expect(updated?.body).toContain("(revision 2)");
    expect(updated?.body).not.toContain("(revision 1)");
    expect(gh.writes()).toContain(`PATCH /issues/comments/${String(comment?.id)}`);
    expect(gh.writes().filter((w) => w === "POST /labels")).toHaveLength(Object.keys(LABELS).length); // none created twice

    const shown = json<{ plan: string; labels: string[] }>(await step(["issue", "show", "12", "--json"]));
    expect(shown.plan).toContain("(revision 2)");
    expect(shown.labels.sort()).toEqual(["bug", "dissent-ready"]);

    const merged = json<{ labels: string[] }>(await step(["issue", "merged", "12", "--pr", "99", "--json"]));
    expect(merged.labels.sort()).toEqual(["bug", "dissent-fixed"]);
    expect(gh.comments.filter((c) => c.issue === 12 && c.body.includes("merged in #99"))).toHaveLength(1);

    expect(gh.requests.every((r) => r.authorization === `token ${TOKEN}`)).toBe(true);
    expectNoToken(outputs);
  });

  it("a bad token is one error line naming the variable and the repo, exit 1; the token is never shown", async () => {
    const r = await run(["issue", "plan", "12"], { GITHUB_TOKEN: "ghp_wrongTOKEN0987654321" });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "dissent: error: GitHub rejected the token in GITHUB_TOKEN (401) for acme/widgets while reading issue #12: check the token; it may be mistyped, revoked or expired\n",
    );
    expect(r.stdout + r.stderr).not.toContain("wrongTOKEN");
    expect(models.requests).toEqual([]);
  });

  it("a missing token is a configuration error naming the variable, exit 2", async () => {
    const r = await run(["issue", "list"], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^dissent: error: .*dissent\.config\.yaml: tracker github \(acme\/widgets\) needs a token in the environment variable GITHUB_TOKEN, which is not set\n$/,
    );
    expect(gh.requests).toEqual([]);
  });

  it("a run that fails mid-stage leaves no transient label, and a failing label removal does not hide the error", async () => {
    reply = (model) =>
      model === "shape.writer"
        ? { status: 401, raw: JSON.stringify({ error: { message: "Invalid API key", type: "invalid_request_error" } }) }
        : agreeable(model);
    const failed = await run(["issue", "plan", "12"]);
    expect(failed.code).toBe(1);
    expect(failed.stderr.split("\n").filter(Boolean).at(-1) + "\n").toMatch(/^dissent: error: (?!.*GitHub).*shape\.writer.*401.*\n$/); // the model's error, one line
    expect(running(gh.issues.get(12)?.labels ?? [])).toEqual([]);
    expect(gh.issues.get(12)?.labels).toContain("dissent-plan");

    gh.fail({
      method: "DELETE",
      path: /-running$/,
      status: 403,
      body: { message: "Resource not accessible by personal access token", documentation_url: "https://docs.github.com/rest" },
    });
    const hidden = await run(["issue", "plan", "12"]);
    expect(hidden.code).toBe(1);
    const lines = hidden.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^dissent: warning: could not remove label dissent-adv-shape-running from issue 12: GitHub denied access \(403\) to acme\/widgets/,
    );
    expect(lines[1]).toBe(failed.stderr.trimEnd().split("\n").at(-1)); // the model's error, not GitHub's
    expect(gh.issues.get(12)?.labels).toContain("dissent-adv-shape-running");

    reply = agreeable;
    const recovered = json<{ status: string; labels: string[] }>(await run(["issue", "plan", "12", "--json"]));
    expect(recovered.status).toBe("ready");
    expect(running(gh.issues.get(12)?.labels ?? [])).toEqual([]);
    expectNoToken([failed, hidden]);
  });
});
